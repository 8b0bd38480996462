package chat

import "encoding/json"

// Wire shapes of the chat-completions format, shared by decoding and encoding.

type wireMessage struct {
	Role             string              `json:"role"`
	Content          json.RawMessage     `json:"content,omitempty"`
	Name             string              `json:"name,omitempty"`
	ToolCalls        []wireToolCall      `json:"tool_calls,omitempty"`
	ToolCallID       string              `json:"tool_call_id,omitempty"`
	ReasoningContent *string             `json:"reasoning_content,omitempty"`
	Reasoning        *string             `json:"reasoning,omitempty"` // OpenRouter's name for the same
	ThinkingBlocks   []wireThinkingBlock `json:"thinking_blocks,omitempty"`
	Refusal          *string             `json:"refusal,omitempty"`
}

type wireToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function *struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function,omitempty"`
	Custom *struct {
		Name  string `json:"name"`
		Input string `json:"input"`
	} `json:"custom,omitempty"`
}

// wireThinkingBlock is the messages format's thinking block carried through chat clients
// (the LiteLLM convention), so signatures survive a round trip.
type wireThinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

type wirePart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	Refusal  string          `json:"refusal,omitempty"`
	Thinking json.RawMessage `json:"thinking,omitempty"` // Mistral's answers: a string or text chunks
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail,omitempty"`
	} `json:"image_url,omitempty"`
	InputAudio *struct {
		Data   string `json:"data"`
		Format string `json:"format"`
	} `json:"input_audio,omitempty"`
	File *struct {
		FileData string `json:"file_data,omitempty"`
		FileID   string `json:"file_id,omitempty"`
		Filename string `json:"filename,omitempty"`
	} `json:"file,omitempty"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
		Strict      *bool           `json:"strict,omitempty"`
	} `json:"function,omitempty"`
	Custom *struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
	} `json:"custom,omitempty"`
}

package converse

import (
	"encoding/base64"
	"encoding/json"
)

// Wire shapes of the Converse API. One ContentBlock type serves requests and answers: it is a
// union, exactly one member set.

type request struct {
	Messages                          []message        `json:"messages"`
	System                            []block          `json:"system,omitempty"`
	InferenceConfig                   *inferenceConfig `json:"inferenceConfig,omitempty"`
	ToolConfig                        *toolConfig      `json:"toolConfig,omitempty"`
	OutputConfig                      *outputConfig    `json:"outputConfig,omitempty"`
	AdditionalModelRequestFields      map[string]any   `json:"additionalModelRequestFields,omitempty"`
	AdditionalModelResponseFieldPaths []string         `json:"additionalModelResponseFieldPaths,omitempty"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

type block struct {
	Text             *string           `json:"text,omitempty"`
	Image            *media            `json:"image,omitempty"`
	Document         *media            `json:"document,omitempty"`
	Video            *media            `json:"video,omitempty"`
	ToolUse          *toolUse          `json:"toolUse,omitempty"`
	ToolResult       *toolResult       `json:"toolResult,omitempty"`
	ReasoningContent *reasoningContent `json:"reasoningContent,omitempty"`
	CachePoint       *cachePoint       `json:"cachePoint,omitempty"`
	CitationsContent *citations        `json:"citationsContent,omitempty"` // answers only
}

func textBlock(s string) block { return block{Text: &s} }

// media is an image, document or video block: format (png, pdf, mp4, …), a document's name,
// and its bytes (base64 in JSON) or an S3 location.
type media struct {
	Format string      `json:"format"`
	Name   string      `json:"name,omitempty"`
	Source mediaSource `json:"source"`
}

type mediaSource struct {
	Bytes      string      `json:"bytes,omitempty"`
	S3Location *s3Location `json:"s3Location,omitempty"`
}

type s3Location struct {
	URI string `json:"uri"`
}

type toolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type toolResult struct {
	ToolUseID string  `json:"toolUseId"`
	Content   []block `json:"content"` // text, image, document (json is never written)
	Status    string  `json:"status,omitempty"`
}

// reasoningContent is a union: reasoningText, or redactedContent (bytes, base64 in JSON).
type reasoningContent struct {
	ReasoningText   *reasoningText `json:"reasoningText,omitempty"`
	RedactedContent string         `json:"redactedContent,omitempty"`
}

type reasoningText struct {
	Text      string `json:"text"`
	Signature string `json:"signature,omitempty"`
}

type cachePoint struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitempty"`
}

// citations is an answer's citationsContent: generated text with its sources (only the
// text is read).
type citations struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
}

type inferenceConfig struct {
	MaxTokens     int      `json:"maxTokens,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	TopP          *float64 `json:"topP,omitempty"`
	StopSequences []string `json:"stopSequences,omitempty"`
}

type toolConfig struct {
	Tools      []tool      `json:"tools"`
	ToolChoice *toolChoice `json:"toolChoice,omitempty"`
}

type tool struct {
	ToolSpec *toolSpec `json:"toolSpec,omitempty"`
}

type toolSpec struct {
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	InputSchema inputSchema `json:"inputSchema"`
	Strict      *bool       `json:"strict,omitempty"`
}

type inputSchema struct {
	JSON json.RawMessage `json:"json"`
}

// toolChoice is a union: auto, any (some tool) or tool (the one named).
type toolChoice struct {
	Auto *struct{}  `json:"auto,omitempty"`
	Any  *struct{}  `json:"any,omitempty"`
	Tool *namedTool `json:"tool,omitempty"`
}

type namedTool struct {
	Name string `json:"name"`
}

// outputConfig asks for structured output: textFormat {type json_schema, structure
// {jsonSchema {schema (the schema as a JSON text), name, description}}}.
type outputConfig struct {
	TextFormat textFormat `json:"textFormat"`
}

type textFormat struct {
	Type      string `json:"type"`
	Structure struct {
		JSONSchema jsonSchema `json:"jsonSchema"`
	} `json:"structure"`
}

type jsonSchema struct {
	Schema      string `json:"schema"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// response is a whole Converse answer.
type response struct {
	Output *struct {
		Message *struct {
			Role    string  `json:"role"`
			Content []block `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason                    string          `json:"stopReason"`
	Usage                         *wireUsage      `json:"usage"`
	AdditionalModelResponseFields json.RawMessage `json:"additionalModelResponseFields"`
}

// wireUsage is the TokenUsage object. inputTokens excludes the cache reads and writes, which
// are counted beside it (totalTokens is their sum with outputTokens); outputTokens includes
// any reasoning, which Bedrock does not count apart.
type wireUsage struct {
	InputTokens           int64 `json:"inputTokens"`
	OutputTokens          int64 `json:"outputTokens"`
	TotalTokens           int64 `json:"totalTokens"`
	CacheReadInputTokens  int64 `json:"cacheReadInputTokens"`
	CacheWriteInputTokens int64 `json:"cacheWriteInputTokens"`
}

// Converse carries Claude's redacted reasoning as bytes (base64 in its JSON) whose content is
// Anthropic's redacted_thinking data: the IR holds that data, so it reaches a messages client
// as Anthropic gives it and goes back to Claude on either format.

// redactedData is the data a redactedContent blob holds (the blob itself when it is not
// base64, which Bedrock never sends).
func redactedData(blob string) string {
	if b, err := base64.StdEncoding.DecodeString(blob); err == nil {
		return string(b)
	}
	return blob
}

// redactedBlob is redactedData's inverse.
func redactedBlob(data string) string { return base64.StdEncoding.EncodeToString([]byte(data)) }

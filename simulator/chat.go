package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// OpenAI Chat Completions (POST /v1/chat/completions). The answer is a pure function of the
// request (apart from ids and timestamps):
//   - tools offered, tool_choice not "none", last message from the user → tool calls;
//   - otherwise text: "Simulated reply from <model>." plus filler words, 16 words in all, or N
//     when the last user message says "reply with N words", capped by max(_completion)_tokens;
//   - "cached N" in the last user message reports N cached prompt tokens.

// systemFingerprint is constant so streamed and non-streamed answers match byte for byte.
const systemFingerprint = "fp_simulator"

// chatRequest is the part of a chat request the simulator reads; everything else is accepted
// and ignored, as a lenient upstream would.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Tools               []chatTool      `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type chatMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		Function struct {
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// chatUsage is the usage object, with the detail fields a gateway's accounting reads.
type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chatAnswer is what the simulated model says, independent of how it is delivered.
type chatAnswer struct {
	id        string
	created   int64
	model     string
	words     []string // text answer; unused when toolCalls is set
	toolCalls []chatToolCall
	finish    string
	usage     chatUsage
}

func (s *Server) chatCompletions(ex *exchange) {
	req, msgText, apiErr := decodeChat(ex.body)
	if apiErr != nil {
		writeOpenAIError(ex.w, *apiErr)
		return
	}
	ans, apiErr := s.answerChat(req, msgText)
	if apiErr != nil {
		writeOpenAIError(ex.w, *apiErr)
		return
	}
	if req.Stream {
		streamChat(ex, ans, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		return
	}
	writeJSON(ex.w, http.StatusOK, completionBody(ans))
}

// decodeChat parses and validates a chat request and returns the text of each message. Every
// rejection names the offending field in "param", as OpenAI does.
func decodeChat(body []byte) (*chatRequest, []string, *apiError) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
			return nil, nil, badRequest(te.Field,
				fmt.Sprintf("Invalid type for '%s': expected %s, got %s.", te.Field, te.Type, te.Value))
		}
		return nil, nil, badRequest("", "We could not parse the JSON body of your request. "+
			"The OpenAI API expects a JSON payload: "+err.Error())
	}
	if req.Model == "" {
		return nil, nil, badRequest("model", "Missing required parameter: 'model'.")
	}
	if len(req.Messages) == 0 {
		return nil, nil, badRequest("messages", "Invalid 'messages': empty array. Expected an array with minimum length 1.")
	}
	texts := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		if m.Role == "" {
			return nil, nil, badRequest(fmt.Sprintf("messages[%d].role", i),
				fmt.Sprintf("Missing required parameter: 'messages[%d].role'.", i))
		}
		t, ok := contentText(m.Content)
		if !ok {
			return nil, nil, badRequest(fmt.Sprintf("messages[%d].content", i),
				fmt.Sprintf("Invalid 'messages[%d].content': expected a string or an array of content parts.", i))
		}
		texts[i] = t
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"max_tokens", req.MaxTokens}, {"max_completion_tokens", req.MaxCompletionTokens}} {
		if f.v != nil && *f.v < 1 {
			e := badRequest(f.name, fmt.Sprintf("Invalid '%s': integer below minimum value. Expected a value >= 1, but got %d instead.", f.name, *f.v))
			e.Code = "integer_below_min_value"
			return nil, nil, e
		}
	}
	if apiErr := validateTools(req.Tools); apiErr != nil {
		return nil, nil, apiErr
	}
	return &req, texts, nil
}

// contentText is the text of a message's content: the string itself, or the text parts of a
// part array joined by spaces (so words in adjacent parts stay separate). Non-text parts
// (images, audio, files) carry no words.
func contentText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, " "), true
}

// answerChat decides the answer and its usage.
func (s *Server) answerChat(req *chatRequest, texts []string) (chatAnswer, *apiError) {
	choice, err := parseToolChoice(req.ToolChoice)
	if err != nil {
		return chatAnswer{}, badRequest("tool_choice", err.Error())
	}
	lastUser := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			lastUser = texts[i]
			break
		}
	}
	tools, apiErr := toolsToCall(req, choice, lastUser)
	if apiErr != nil {
		return chatAnswer{}, apiErr
	}

	ans := chatAnswer{id: s.newID("chatcmpl-"), created: time.Now().Unix(), model: req.Model}
	prompt := 0
	for i, m := range req.Messages {
		prompt += countWords(texts[i])
		for _, tc := range m.ToolCalls {
			prompt += countWords(tc.Function.Arguments)
		}
	}
	ans.usage.PromptTokens = max(prompt, 1)
	if n, ok := directiveInt(cachedRe, lastUser); ok {
		ans.usage.PromptTokensDetails.CachedTokens = min(n, ans.usage.PromptTokens)
	}

	if len(tools) > 0 {
		ans.finish = "tool_calls"
		for _, t := range tools {
			args, props := sampleArguments(t.Function.Parameters)
			tc := chatToolCall{ID: s.newID("call_"), Type: "function"}
			tc.Function.Name, tc.Function.Arguments = t.Function.Name, args
			ans.toolCalls = append(ans.toolCalls, tc)
			ans.usage.CompletionTokens += 1 + props
		}
	} else {
		n := defaultReplyWords
		if asked, ok := directiveInt(replyWithRe, lastUser); ok {
			n = min(asked, maxReplyWords)
		}
		ans.finish = "stop"
		for _, limit := range []*int{req.MaxTokens, req.MaxCompletionTokens} {
			if limit != nil && *limit < n {
				n, ans.finish = *limit, "length"
			}
		}
		ans.words = replyWords(req.Model, n)
		ans.usage.CompletionTokens = n
	}
	ans.usage.TotalTokens = ans.usage.PromptTokens + ans.usage.CompletionTokens
	return ans, nil
}

// chatCompletion is the non-streaming response object.
type chatCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []chatChoice `json:"choices"`
	Usage             chatUsage    `json:"usage"`
}

type chatChoice struct {
	Index        int              `json:"index"`
	Message      chatReplyMessage `json:"message"`
	Logprobs     any              `json:"logprobs"` // always null
	FinishReason string           `json:"finish_reason"`
}

// chatReplyMessage always carries content and refusal, null when absent, as OpenAI does.
type chatReplyMessage struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	Refusal   *string        `json:"refusal"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
}

func completionBody(a chatAnswer) chatCompletion {
	msg := chatReplyMessage{Role: "assistant", ToolCalls: a.toolCalls}
	if len(a.toolCalls) == 0 {
		text := strings.Join(a.words, " ")
		msg.Content = &text
	}
	return chatCompletion{
		ID: a.id, Object: "chat.completion", Created: a.created, Model: a.model,
		SystemFingerprint: systemFingerprint,
		Choices:           []chatChoice{{Index: 0, Message: msg, FinishReason: a.finish}},
		Usage:             a.usage,
	}
}

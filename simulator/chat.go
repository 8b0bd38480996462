package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// OpenAI Chat Completions (POST /v1/chat/completions). The answer is a pure function of the
// request apart from ids and timestamps; answer.go has the rules shared by every format. The
// chat-specific parts: max_tokens and max_completion_tokens both cap the output (the smaller
// wins), reasoning_effort other than none/minimal turns thinking on (counted in
// reasoning_tokens; OpenAI never returns the reasoning text), and "stop" holds stop sequences.

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
	Stop                json.RawMessage `json:"stop"`
	Logprobs            *bool           `json:"logprobs"`
	ReasoningEffort     string          `json:"reasoning_effort"`
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

// chatAnswer is the shared answer with the chat-specific envelope: ids and timestamp.
type chatAnswer struct {
	id        string
	created   int64
	model     string
	answer    answer
	toolCalls []chatToolCall
	finish    string
	usage     chatUsage
}

func (s *Server) chatCompletions(ex *exchange) {
	q, req, apiErr := decodeChat(ex.body)
	if apiErr != nil {
		writeOpenAIError(ex.w, *apiErr)
		return
	}
	ans := s.chatAnswerFor(req.Model, decide(q))
	if req.Stream {
		streamChat(ex, ans, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		return
	}
	writeJSON(ex.w, http.StatusOK, completionBody(ans))
}

// chatRoles are the roles the API takes.
var chatRoles = []string{"system", "developer", "user", "assistant", "tool", "function"}

// decodeChat parses and validates a chat request into the shared ask. Every rejection names
// the offending field in "param", as OpenAI does.
func decodeChat(body []byte) (ask, *chatRequest, *apiError) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
			return ask{}, nil, badRequest(te.Field,
				fmt.Sprintf("Invalid type for '%s': expected %s, got %s.", te.Field, te.Type, te.Value))
		}
		return ask{}, nil, badRequest("", "We could not parse the JSON body of your request. "+
			"The OpenAI API expects a JSON payload: "+err.Error())
	}
	if req.Model == "" {
		return ask{}, nil, badRequest("model", "Missing required parameter: 'model'.")
	}
	if len(req.Messages) == 0 {
		return ask{}, nil, badRequest("messages", "Invalid 'messages': empty array. Expected an array with minimum length 1.")
	}
	if e := openAIRange(body, chatBounds); e != nil {
		return ask{}, nil, e
	}
	q := ask{model: req.Model, parallel: req.ParallelToolCalls == nil || *req.ParallelToolCalls}
	var turn lastTurn
	for i, m := range req.Messages {
		if m.Role == "" {
			return ask{}, nil, badRequest(fmt.Sprintf("messages[%d].role", i),
				fmt.Sprintf("Missing required parameter: 'messages[%d].role'.", i))
		}
		if !slices.Contains(chatRoles, m.Role) {
			e := badRequest(fmt.Sprintf("messages[%d].role", i), fmt.Sprintf("Invalid value: '%s'. Supported values are: "+
				"'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", m.Role))
			e.Code = "invalid_value"
			return ask{}, nil, e
		}
		t, ok := contentText(m.Content)
		if !ok {
			return ask{}, nil, badRequest(fmt.Sprintf("messages[%d].content", i),
				fmt.Sprintf("Invalid 'messages[%d].content': expected a string or an array of content parts.", i))
		}
		q.promptTokens += countWords(t)
		for _, tc := range m.ToolCalls {
			q.promptTokens += countWords(tc.Function.Arguments)
		}
		switch m.Role {
		case "user":
			q.lastUser = t
			turn.userContent()
		case "assistant":
			turn.model()
		case "tool", "function":
			turn.toolResults()
		}
	}
	q.userTurn = turn.isUserTurn()
	for _, f := range []struct {
		name string
		v    *int
	}{{"max_tokens", req.MaxTokens}, {"max_completion_tokens", req.MaxCompletionTokens}} {
		if f.v == nil {
			continue
		}
		if *f.v < 1 {
			e := badRequest(f.name, fmt.Sprintf("Invalid '%s': integer below minimum value. Expected a value >= 1, but got %d instead.", f.name, *f.v))
			e.Code = "integer_below_min_value"
			return ask{}, nil, e
		}
		if q.maxTokens == 0 || *f.v < q.maxTokens {
			q.maxTokens = *f.v
		}
	}
	stop, ok := stringOrStrings(req.Stop)
	if !ok || len(stop) > 4 {
		return ask{}, nil, badRequest("stop", "Invalid 'stop': expected a string or an array of at most 4 strings.")
	}
	q.stop = stop
	switch req.ReasoningEffort {
	case "", "none", "minimal":
	case "low", "medium", "high", "xhigh", "max":
		q.thinking = true
	default:
		return ask{}, nil, badRequest("reasoning_effort", fmt.Sprintf("Invalid value: '%s'. Supported values are: "+
			"'none', 'minimal', 'low', 'medium', 'high', 'xhigh' and 'max'.", req.ReasoningEffort))
	}
	if apiErr := validateTools(req.Tools); apiErr != nil {
		return ask{}, nil, apiErr
	}
	choice, err := parseToolChoice(req.ToolChoice)
	if err != nil {
		return ask{}, nil, badRequest("tool_choice", err.Error())
	}
	q.choice = choice
	for _, t := range req.Tools {
		if t.isFunction() {
			q.tools = append(q.tools, toolSpec{name: t.Function.Name, params: t.Function.Parameters})
		}
	}
	if choice.forced != "" && !slices.ContainsFunc(q.tools, func(t toolSpec) bool { return t.name == choice.forced }) {
		return ask{}, nil, badRequest("tool_choice",
			fmt.Sprintf("Invalid value for 'tool_choice': tool %q is not in 'tools'.", choice.forced))
	}
	return q, &req, nil
}

// stringOrStrings accepts a JSON string, an array of strings, or nothing.
func stringOrStrings(raw json.RawMessage) ([]string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, true
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, true
	}
	var many []string
	if json.Unmarshal(raw, &many) != nil {
		return nil, false
	}
	return many, true
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

// chatAnswerFor wraps the shared answer in chat ids, finish reason and usage.
func (s *Server) chatAnswerFor(model string, a answer) chatAnswer {
	ans := chatAnswer{id: s.newID("chatcmpl-"), created: time.Now().Unix(), model: model, answer: a}
	for _, c := range a.calls {
		tc := chatToolCall{ID: s.newID("call_"), Type: "function"}
		tc.Function.Name, tc.Function.Arguments = c.name, c.arguments
		ans.toolCalls = append(ans.toolCalls, tc)
	}
	ans.finish = map[finishReason]string{finishStop: "stop", finishStopSequence: "stop",
		finishLength: "length", finishToolCalls: "tool_calls"}[a.finish]
	ans.usage.PromptTokens = a.promptTokens
	ans.usage.CompletionTokens = a.outputTokens
	ans.usage.TotalTokens = a.promptTokens + a.outputTokens
	ans.usage.PromptTokensDetails.CachedTokens = a.cachedTokens
	ans.usage.CompletionTokensDetails.ReasoningTokens = a.reasoningTokens
	return ans
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
		text := a.answer.text()
		msg.Content = &text
	}
	return chatCompletion{
		ID: a.id, Object: "chat.completion", Created: a.created, Model: a.model,
		SystemFingerprint: systemFingerprint,
		Choices:           []chatChoice{{Index: 0, Message: msg, FinishReason: a.finish}},
		Usage:             a.usage,
	}
}

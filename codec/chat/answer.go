package chat

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

type wireChoice struct {
	Index        int          `json:"index"`
	Message      *wireMessage `json:"message,omitempty"`
	Delta        *wireMessage `json:"delta,omitempty"`
	FinishReason *string      `json:"finish_reason"`
}

type wireCompletion struct {
	ID      string       `json:"id"`
	Model   string       `json:"model"`
	Created int64        `json:"created"`
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	Error   *wireError   `json:"error"`
}

type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Param   *string         `json:"param"`
}

// DecodeAnswer reads a whole chat-format answer into IR.
func DecodeAnswer(body []byte) (*ir.Response, error) {
	var c wireCompletion
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	r := &ir.Response{ID: c.ID, Model: c.Model, Created: c.Created, Stop: ir.StopEnd}
	if c.Usage != nil {
		r.Usage = c.Usage.normalize()
	}
	if len(c.Choices) == 0 || c.Choices[0].Message == nil {
		return r, nil
	}
	m, _ := decodeAssistant("choices[0].message", *c.Choices[0].Message)
	if m.Parts == nil && c.Choices[0].Message.Refusal != nil {
		m.Parts = []ir.Part{{Kind: ir.PartText, Text: *c.Choices[0].Message.Refusal}}
	}
	r.Parts = m.Parts
	r.Stop = stopFrom(derefStr(c.Choices[0].FinishReason), hasToolCall(r.Parts))
	return r, nil
}

func derefStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func hasToolCall(parts []ir.Part) bool {
	for _, p := range parts {
		if p.Kind == ir.PartToolCall {
			return true
		}
	}
	return false
}

// stopFrom maps finish_reason; tool calls decide whatever it says.
func stopFrom(reason string, sawTool bool) ir.StopReason {
	if sawTool {
		return ir.StopToolUse
	}
	switch reason {
	case "length":
		return ir.StopLength
	case "tool_calls", "function_call":
		return ir.StopToolUse
	case "content_filter":
		return ir.StopContentFilter
	}
	return ir.StopEnd
}

func finishReason(s ir.StopReason) string {
	switch s {
	case ir.StopLength:
		return "length"
	case ir.StopToolUse:
		return "tool_calls"
	case ir.StopContentFilter:
		return "content_filter"
	}
	return "stop"
}

// EncodeAnswer renders an IR answer as a chat.completion.
func EncodeAnswer(r *ir.Response, model string) []byte {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	var text strings.Builder
	var reasoning strings.Builder
	var blocks []wireThinkingBlock
	var calls []map[string]any
	for _, p := range r.Parts {
		switch p.Kind {
		case ir.PartText:
			text.WriteString(p.Text)
		case ir.PartReasoning:
			reasoning.WriteString(p.Reasoning.Text)
			if b, ok := thinkingBlock(p.Reasoning); ok {
				blocks = append(blocks, b)
			}
		case ir.PartToolCall:
			calls = append(calls, map[string]any{"id": callID(p.ToolCall), "type": "function",
				"function": map[string]string{"name": p.ToolCall.Name, "arguments": p.ToolCall.Arguments}})
		}
	}
	if text.Len() > 0 {
		msg["content"] = text.String()
	}
	if reasoning.Len() > 0 {
		msg["reasoning_content"] = reasoning.String()
	}
	if len(blocks) > 0 {
		msg["thinking_blocks"] = blocks
	}
	stop := r.Stop
	if len(calls) > 0 {
		msg["tool_calls"] = calls
		if stop != ir.StopLength { // a call cut by the token cap is no call to run: length, as OpenAI says
			stop = ir.StopToolUse // clients key on the calls
		}
	}
	out := map[string]any{
		"id": chatID(r.ID), "object": "chat.completion", "created": created(r.Created), "model": model,
		"choices": []map[string]any{{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finishReason(stop)}},
		"usage":   usageJSON(r.Usage),
	}
	b, _ := json.Marshal(out)
	return b
}

// thinkingBlock carries a messages-format signature to chat clients (LiteLLM's convention).
func thinkingBlock(r *ir.Reasoning) (wireThinkingBlock, bool) {
	if r.SignatureFormat != "messages" {
		return wireThinkingBlock{}, false
	}
	if r.Redacted != "" {
		return wireThinkingBlock{Type: "redacted_thinking", Data: r.Redacted}, true
	}
	return wireThinkingBlock{Type: "thinking", Thinking: r.Text, Signature: r.Signature}, true
}

func callID(c *ir.ToolCall) string {
	if c.SignatureFormat == "gemini" {
		return ir.JoinCallID(c.ID, c.Signature)
	}
	return c.ID
}

func chatID(id string) string {
	if strings.HasPrefix(id, "chatcmpl-") {
		return id
	}
	if id == "" {
		return codec.RandomID("chatcmpl-")
	}
	return "chatcmpl-" + id
}

func created(t int64) int64 {
	if t == 0 {
		return time.Now().Unix()
	}
	return t
}

// usageJSON rebuilds the chat shape: prompt tokens include cache, completion includes reasoning.
func usageJSON(u codec.Usage) map[string]any {
	prompt := u.Input + u.CacheRead + u.CacheWrite
	completion := u.Output + u.Reasoning
	details := map[string]int64{"cached_tokens": u.CacheRead}
	if u.CacheWrite > 0 {
		details["cache_write_tokens"] = u.CacheWrite
	}
	return map[string]any{
		"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
		"prompt_tokens_details":     details,
		"completion_tokens_details": map[string]int64{"reasoning_tokens": u.Reasoning},
	}
}

package messages

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

// wireUsage is the messages usage object. input_tokens excludes cache reads and writes;
// output_tokens includes thinking, split out only when output_tokens_details says how much.
type wireUsage struct {
	InputTokens              *int64 `json:"input_tokens,omitempty"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens,omitempty"`
	OutputTokens             *int64 `json:"output_tokens,omitempty"`
	OutputTokensDetails      *struct {
		ThinkingTokens *int64 `json:"thinking_tokens,omitempty"`
	} `json:"output_tokens_details,omitempty"`
}

func val(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func (w *wireUsage) normalize() codec.Usage {
	if w == nil {
		return codec.Usage{}
	}
	u := codec.Usage{
		Input:      val(w.InputTokens),
		CacheRead:  val(w.CacheReadInputTokens),
		CacheWrite: val(w.CacheCreationInputTokens),
		Output:     val(w.OutputTokens),
	}
	if d := w.OutputTokensDetails; d != nil && d.ThinkingTokens != nil {
		u.Reasoning = min(*d.ThinkingTokens, u.Output)
		u.Output -= u.Reasoning
	}
	return u
}

// outUsage is the usage object this package writes: all four counts, always.
type outUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

func usageOut(u codec.Usage) outUsage {
	return outUsage{InputTokens: u.Input, CacheCreationInputTokens: u.CacheWrite,
		CacheReadInputTokens: u.CacheRead, OutputTokens: u.Output + u.Reasoning}
}

// ResponseUsage reads the normalized usage of a whole messages answer (for pass-through): its
// usage member found by a scan, only that decoded.
func ResponseUsage(body []byte) (codec.Usage, bool) {
	at, ok := jsonscan.Member(body, "usage")
	if !ok {
		return codec.Usage{}, false
	}
	return UsageOf(body[at.Start:at.End])
}

// stopFrom maps stop_reason; any tool call makes an end-like stop tool_use.
func stopFrom(reason string, sawTool bool) ir.StopReason {
	var s ir.StopReason
	switch reason {
	case "max_tokens", "model_context_window_exceeded":
		s = ir.StopLength
	case "stop_sequence":
		s = ir.StopSequence
	case "tool_use":
		s = ir.StopToolUse
	case "pause_turn":
		s = ir.StopPause
	case "refusal":
		s = ir.StopContentFilter
	default:
		s = ir.StopEnd
	}
	return withTools(s, sawTool)
}

// withTools makes the stop tool_use when a tool was called and the stop says the answer is
// complete (end, stop sequence); a length, filter or pause stop keeps its meaning.
func withTools(s ir.StopReason, sawTool bool) ir.StopReason {
	if sawTool && (s == ir.StopEnd || s == ir.StopSequence || s == "") {
		return ir.StopToolUse
	}
	return s
}

func stopReason(s ir.StopReason) string {
	switch s {
	case ir.StopLength:
		return "max_tokens"
	case ir.StopToolUse:
		return "tool_use"
	case ir.StopSequence:
		return "stop_sequence"
	case ir.StopContentFilter:
		return "refusal"
	case ir.StopPause:
		return "pause_turn"
	}
	return "end_turn"
}

func stopSequence(s ir.StopReason, seq string) *string {
	if s != ir.StopSequence || seq == "" {
		return nil
	}
	return &seq
}

type outResponse struct {
	ID           string     `json:"id"`
	Type         string     `json:"type"`
	Role         string     `json:"role"`
	Model        string     `json:"model"`
	Content      []outBlock `json:"content"`
	StopReason   string     `json:"stop_reason"`
	StopSequence *string    `json:"stop_sequence"`
	Usage        outUsage   `json:"usage"`
}

// EncodeResponse renders a whole answer. Reasoning another format issued becomes a thinking
// block with an empty signature: display only, and dropped again (never forwarded) when the
// client sends it back. Tool input that is not a JSON object becomes {}, as anthropic-sdk-go
// itself makes of a cut-off input.
func (format) EncodeResponse(r *ir.Response, model string) []byte {
	out := outResponse{ID: messageID(r.ID), Type: "message", Role: "assistant", Model: model,
		Content: []outBlock{}, Usage: usageOut(r.Usage)}
	sawTool := false
	for _, p := range r.Parts {
		switch p.Kind {
		case ir.PartText:
			if p.Text != "" {
				out.Content = append(out.Content, textBlock(p.Text, nil))
			}
		case ir.PartReasoning:
			if b, ok := answerThinking(p.Reasoning); ok {
				out.Content = append(out.Content, b)
			}
		case ir.PartToolCall:
			sawTool = true
			c := p.ToolCall
			input, _ := objectArgs(c.Arguments)
			out.Content = append(out.Content, outBlock{Type: "tool_use", ID: clientCallID(c), Name: c.Name, Input: input})
		}
	}
	stop := withTools(r.Stop, sawTool)
	out.StopReason = stopReason(stop)
	out.StopSequence = stopSequence(stop, r.StopSequence)
	return marshal(out)
}

// answerThinking is a reasoning part as a client sees it.
func answerThinking(r *ir.Reasoning) (outBlock, bool) {
	mine := r.SignatureFormat == SignatureFormat
	if r.Redacted != "" && mine {
		return outBlock{Type: "redacted_thinking", Data: r.Redacted}, true
	}
	sig := ""
	if mine {
		sig = r.Signature
	}
	if r.Text == "" && sig == "" {
		return outBlock{}, false
	}
	text := r.Text
	return outBlock{Type: "thinking", Thinking: &text, Signature: &sig}, true
}

// clientCallID carries a gemini signature inside the id the client echoes back.
func clientCallID(c *ir.ToolCall) string {
	id := c.ID
	if id == "" {
		id = codec.RandomID("toolu_")
	}
	if c.SignatureFormat == "gemini" {
		return ir.JoinCallID(id, c.Signature)
	}
	return id
}

// inBlockResp is a response content block.
type inBlockResp struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
}

type inMessageResp struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Model        string          `json:"model"`
	Content      []inBlockResp   `json:"content"`
	StopReason   *string         `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        *wireUsage      `json:"usage"`
	Error        json.RawMessage `json:"error"`
}

// DecodeResponse reads a whole 2xx answer. Server-tool blocks (server_tool_use,
// web_search_tool_result, …) are skipped: IR has no place for them.
func (format) DecodeResponse(body []byte) (*ir.Response, error) {
	var m inMessageResp
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("messages: undecodable answer: %w", err)
	}
	if m.Type == "error" {
		e := Format.DecodeError(502, body)
		e.Status = statusOfKind(e.Kind)
		return nil, e
	}
	if m.Type != "message" && m.Type != "" {
		return nil, errors.New("messages: the answer is not a message (type " + m.Type + ")")
	}
	r := &ir.Response{ID: m.ID, Model: m.Model, Usage: m.Usage.normalize()}
	sawTool := false
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			if b.Text != "" {
				r.Parts = append(r.Parts, ir.Part{Kind: ir.PartText, Text: b.Text})
			}
		case "thinking":
			r.Parts = append(r.Parts, ir.Part{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{
				Text: b.Thinking, Signature: b.Signature, SignatureFormat: SignatureFormat}})
		case "redacted_thinking":
			r.Parts = append(r.Parts, ir.Part{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{
				Redacted: b.Data, SignatureFormat: SignatureFormat}})
		case "tool_use":
			sawTool = true
			args, ok := compactObject(b.Input)
			if !ok {
				args = "{}"
			}
			r.Parts = append(r.Parts, ir.Part{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: b.ID, Name: b.Name, Arguments: args}})
		}
	}
	reason := ""
	if m.StopReason != nil {
		reason = *m.StopReason
	}
	r.Stop = stopFrom(reason, sawTool)
	if m.StopSequence != nil && r.Stop == ir.StopSequence {
		r.StopSequence = *m.StopSequence
	}
	return r, nil
}

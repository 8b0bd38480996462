package replay

import (
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
)

// runMessages drives /v1/messages with anthropic-sdk-go: streaming with Message.Accumulate
// for stream recordings, a plain call otherwise.
func runMessages(t *testing.T, h *harness, c cell) result {
	p := anthropic.MessageNewParams{Model: anthropic.Model(c.model), MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))}}
	for _, name := range c.rec.Meta.Tools {
		p.Tools = append(p.Tools, anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{Properties: map[string]any{}}, name))
	}
	var r result
	var msg anthropic.Message
	if !c.rec.Meta.Stream {
		m, err := h.ant.Messages.New(ctx(t), p)
		r.fill(h.tap.take())
		if err != nil {
			r.anthropicError(err)
			return r
		}
		msg = *m
	} else {
		s := h.ant.Messages.NewStreaming(ctx(t), p)
		for s.Next() {
			ev := s.Current()
			if err := msg.Accumulate(ev); err != nil {
				r.violate("anthropic-sdk-go Message.Accumulate(%s): %v", ev.RawJSON(), err)
			}
		}
		err := s.Err()
		s.Close()
		r.fill(h.tap.take())
		if err != nil {
			r.anthropicError(err)
			r.InStream = r.Status == 200
		}
		r.messagesGrammar()
	}
	r.Model = string(msg.Model)
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			r.Text += b.Text
		case "thinking":
			r.Reasoning += b.Thinking
			if b.Signature != "" {
				r.Signatures = append(r.Signatures, b.Signature)
			}
		case "redacted_thinking":
			r.Signatures = append(r.Signatures, b.Data)
		case "tool_use":
			r.Calls = append(r.Calls, toolCall{ID: b.ID, Name: b.Name, Args: canonicalJSON(string(b.Input))})
		case "server_tool_use", "mcp_tool_use":
			// a tool the upstream ran itself: Anthropic's own blocks, not the client's calls
		default:
			if !strings.HasSuffix(b.Type, "_tool_result") { // what such a tool returned
				r.violate("unexpected %s block: %s", b.Type, b.RawJSON())
			}
		}
	}
	r.NativeStop = string(msg.StopReason)
	r.Finish = messagesFinish[r.NativeStop]
	if msg.ID != "" {
		u := msg.Usage
		r.Usage = &usage{Input: u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
			CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheCreationInputTokens, Output: u.OutputTokens,
			Reasoning: u.OutputTokensDetails.ThinkingTokens}
	}
	return r
}

// anthropicError reads an anthropic-sdk-go error; the message comes from the body (an
// error event for a failed stream).
func (r *result) anthropicError(err error) {
	r.Err = &upstreamError{Status: r.Status}
	var e *anthropic.Error
	if errors.As(err, &e) {
		r.Err.Status, r.ErrType = e.StatusCode, string(e.Type())
	}
	v, _ := decode(r.Raw)
	r.ErrMessage = str(v, "error", "message")
	for _, f := range parseFrames(r.Raw) {
		if ev, _ := decode([]byte(f.Data)); str(ev, "type") == "error" {
			r.ErrType, r.ErrMessage = str(ev, "error", "type"), str(ev, "error", "message")
		}
	}
	if r.ErrMessage == "" {
		r.ErrMessage = err.Error()
	}
}

// messagesGrammar checks the event stream: an event: line equal to each data's type,
// message_start first, message_stop (or error) last, blocks opened in index order and
// closed without overlap, deltas only for the open block.
func (r *result) messagesGrammar() {
	frames := parseFrames(r.Raw)
	open, next := int64(-1), int64(0)
	models := map[string]bool{}
	for i, f := range frames {
		v, err := decode([]byte(f.Data))
		if err != nil {
			r.violate("event %d is not JSON: %s", i, f.Data)
			continue
		}
		typ := str(v, "type")
		if f.Name != typ {
			r.violate("event %d: event line %q, data type %q", i, f.Name, typ)
		}
		if i == 0 && typ != "message_start" && typ != "error" {
			r.violate("first event is %s, want message_start", typ)
		}
		idx := num(v, "index")
		switch typ {
		case "message_start":
			models[str(v, "message", "model")] = true
		case "content_block_start":
			if open >= 0 {
				r.violate("block %d opened while block %d is open", idx, open)
			}
			if idx != next {
				r.violate("block %d opened, want index %d", idx, next)
			}
			open, next = idx, idx+1
		case "content_block_delta":
			if idx != open {
				r.violate("delta for block %d while block %d is open: %s", idx, open, f.Data)
			}
		case "content_block_stop":
			if idx != open {
				r.violate("stop for block %d while block %d is open", idx, open)
			}
			open = -1
		}
	}
	if len(frames) > 0 {
		last := frames[len(frames)-1]
		if want := "message_stop"; r.Err != nil {
			if last.Name != "error" {
				r.violate("a failed stream ends with %s, want an error event", last.Name)
			}
		} else if last.Name != want {
			r.violate("the stream ends with %s, want %s", last.Name, want)
		}
		if open >= 0 && r.Err == nil {
			r.violate("block %d never closed", open)
		}
	}
	oneModel(r, models)
}

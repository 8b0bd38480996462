package replay

import (
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// runResponses drives /v1/responses with openai-go's Responses API.
func runResponses(t *testing.T, h *harness, c cell) (r result) {
	p := responses.ResponseNewParams{Model: c.model,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(prompt)}}
	for _, name := range c.rec.Meta.Tools {
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
			Name: name, Parameters: map[string]any{"type": "object"}, Strict: openai.Bool(false)}})
	}
	if !c.rec.Meta.Stream {
		resp, err := h.oai.Responses.New(ctx(t), p)
		r.fill(h.tap.take())
		if err != nil {
			r.openaiError(err)
			return r
		}
		v, _ := decode([]byte(resp.RawJSON()))
		r.answer = responsesObject(v)
		return r
	}
	defer func() { r.responsesGrammar() }() // once the error, if any, is known
	s := h.oai.Responses.NewStreaming(ctx(t), p)
	var text, reasoning strings.Builder
	var terminal *responses.Response
	last := int64(-1)
	for s.Next() {
		ev := s.Current()
		if ev.SequenceNumber <= last {
			r.violate("sequence_number %d after %d (%s)", ev.SequenceNumber, last, ev.Type)
		}
		last = ev.SequenceNumber
		if terminal != nil {
			r.violate("%s after the terminal event", ev.Type)
		}
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			reasoning.WriteString(ev.Delta)
		case "response.completed", "response.incomplete", "response.failed":
			resp := ev.Response
			terminal = &resp
		case "error":
			r.InStream = true
			r.Err = &upstreamError{Status: 200, Code: ev.Code}
			r.ErrType, r.ErrMessage = "error", ev.Message
		}
	}
	err := s.Err()
	s.Close()
	r.fill(h.tap.take())
	if err != nil && r.Err == nil {
		r.openaiError(err)
		r.InStream = r.Status == 200
	}
	if terminal == nil {
		return r
	}
	v, _ := decode([]byte(terminal.RawJSON()))
	fin := responsesObject(v)
	if fin.Text != text.String() {
		r.violate("the terminal event's output text %q differs from the streamed deltas %q", fin.Text, text.String())
	}
	if fin.Err != nil {
		r.InStream = true
		if r.Err == nil {
			r.Err = &upstreamError{Status: 200, Code: fin.Err.Code}
			r.ErrType = "response.failed"
		}
		if r.ErrMessage == "" || r.ErrType == "error" {
			r.ErrMessage = strings.TrimSpace(r.ErrMessage + " " + fin.Err.Message)
		}
		fin.Err = nil
	}
	errKeep := r.Err
	r.answer = fin
	r.Err = errKeep
	r.Text, r.Reasoning = text.String(), reasoning.String()
	return r
}

// responsesGrammar checks the event lines and how the stream ends (read from the bytes:
// openai-go stops at an error event): response.completed or response.incomplete with
// usage, or, for a failed answer, response.failed or an error event.
func (r *result) responsesGrammar() {
	models := map[string]bool{}
	var last obj
	for i, f := range parseFrames(r.Raw) {
		v, err := decode([]byte(f.Data))
		if err != nil {
			if f.Data != "[DONE]" {
				r.violate("event %d is not JSON: %s", i, f.Data)
			}
			continue
		}
		if f.Name != str(v, "type") {
			r.violate("event %d: event line %q, data type %q", i, f.Name, str(v, "type"))
		}
		if m := str(v, "response", "model"); m != "" {
			models[m] = true
		}
		last, _ = v.(obj)
	}
	oneModel(r, models)
	if r.Status != 200 {
		return
	}
	switch typ := str(last, "type"); {
	case r.Err != nil:
		if typ != "response.failed" && typ != "error" {
			r.violate("a failed stream ends with %q, want response.failed or error", typ)
		}
	case typ != "response.completed" && typ != "response.incomplete":
		r.violate("the stream ends with %q, want response.completed or response.incomplete", typ)
	case !has(last, "response", "usage"):
		r.violate("the terminal event %s has no usage", typ)
	}
}

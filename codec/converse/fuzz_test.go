package converse

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/messages"
	"github.com/modelgate/modelgate/codec/sse"
)

// FuzzStreamDecode feeds any SSE text to one decoder: it never panics, starts once, counts
// tool calls from 0 and gives their arguments only to a call it started, finishes or fails at
// most once and says done exactly then, and gives nothing after.
func FuzzStreamDecode(f *testing.F) {
	f.Add(readFixture(f, "stream_thinking_tools.sse"))
	f.Add(readFixture(f, "stream_text.sse"))
	f.Add([]byte("event: messageStart\ndata: {\"role\":\"assistant\"}\n\nevent: throttlingException\ndata: {\"message\":\"slow down\"}\n\n"))
	f.Add([]byte("event: contentBlockStart\ndata: {\"contentBlockIndex\":2,\"start\":{\"toolUse\":{\"toolUseId\":\"t\",\"name\":\"f\"}}}\n\n" +
		"event: metadata\ndata: {\"usage\":{\"inputTokens\":1}}\n\nevent: messageStop\ndata: {\"stopReason\":\"end_turn\"}\n\n"))
	f.Add([]byte("data: {\"contentBlockDelta\":{\"contentBlockIndex\":0,\"delta\":{\"reasoningContent\":{\"signature\":\"s\"}}}}\n\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		d := Format.NewStreamDecoder()
		starts, ends, tools := 0, 0, 0
		rd := sse.NewReader(bytes.NewReader(stream))
		for {
			ev, err := rd.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					return // an SSE reader's refusal (an oversized line): not the decoder's
				}
				break
			}
			evs, done, err := d.Decode(ev.Name, ev.Data)
			if err != nil {
				continue
			}
			if ends > 0 && len(evs) > 0 {
				t.Fatalf("events after the end: %s", dump(evs))
			}
			for _, e := range evs {
				switch e.Kind {
				case ir.EvStart:
					starts++
				case ir.EvFinish, ir.EvError:
					ends++
				case ir.EvToolStart:
					if e.Index != tools {
						t.Fatalf("tool index %d, want %d", e.Index, tools)
					}
					tools++
				case ir.EvToolArgs:
					if e.Index >= tools || e.Text == "" {
						t.Fatalf("arguments %+v for no call started (%d started)", e, tools)
					}
				}
			}
			if (ends > 0) != done {
				t.Fatalf("done=%v after %d ends", done, ends)
			}
		}
		if starts > 1 || ends > 1 {
			t.Fatalf("%d starts, %d ends", starts, ends)
		}
	})
}

// FuzzDecodeResponse: any body decodes or fails cleanly; tool-call arguments are always a JSON
// object, and reasoning is always this format's.
func FuzzDecodeResponse(f *testing.F) {
	f.Add(readFixture(f, "response_thinking_tools.json"))
	f.Add([]byte(`{"output":{"message":{"content":[{"toolUse":{"toolUseId":"t","name":"f","input":[1]}},{"reasoningContent":{}}]}},"stopReason":"stop_sequence","additionalModelResponseFields":{"stop_sequence":7}}`))
	f.Add([]byte(`{"output":{"message":{"content":[{"citationsContent":{"content":[{"text":"x"}]}}]}},"usage":{"inputTokens":-1}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Format.DecodeResponse(body)
		if err != nil {
			return
		}
		for _, p := range r.Parts {
			switch p.Kind {
			case ir.PartToolCall:
				var obj map[string]any
				if json.Unmarshal([]byte(p.ToolCall.Arguments), &obj) != nil || obj == nil {
					t.Fatalf("arguments %q are not a JSON object", p.ToolCall.Arguments)
				}
			case ir.PartReasoning:
				if p.Reasoning.SignatureFormat != SignatureFormat {
					t.Fatalf("reasoning of format %q", p.Reasoning.SignatureFormat)
				}
			}
		}
	})
}

// FuzzDecodeError: any error body gives an error with the status kept, a kind and a message.
func FuzzDecodeError(f *testing.F) {
	f.Add(429, []byte(`{"message":"Too many requests, please wait before trying again."}`))
	f.Add(403, []byte(`{"__type":"x#InvalidSignatureException","Message":"signature"}`))
	f.Add(0, []byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := Format.DecodeError(status, body)
		if status != 0 && e.Status != status || e.Kind == "" || e.Message == "" {
			t.Fatalf("DecodeError(%d, %q) = %+v", status, body, *e)
		}
	})
}

// FuzzEncodeRequest: whatever a messages client sends, once decoded, encodes for any model
// family into a JSON object, or fails with the client's 400.
func FuzzEncodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","max_tokens":10,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"a__thought__AAEC","name":"f","input":{"x":1}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","is_error":true,"content":[{"type":"text","text":"r"}]},{"type":"text","text":"go"}]}],"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"},"thinking":{"type":"enabled","budget_tokens":1024},"top_k":3,"stop_sequences":["x"]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="},"title":"a.pdf"}]}],"tool_choice":{"type":"none"},"tools":[{"name":"g"}]}`,
	} {
		f.Add([]byte(s), uint8(0))
	}
	models := []string{sonnet, llama, nova}
	f.Fuzz(func(t *testing.T, body []byte, model uint8) {
		r, err := messages.Format.DecodeRequest(body)
		if err != nil {
			return
		}
		var loss ir.Loss
		out, err := Format.EncodeRequest(r, models[int(model)%len(models)], &loss)
		if err != nil {
			var e *ir.Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("error %#v", err)
			}
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(out, &obj) != nil || obj["messages"] == nil {
			t.Fatalf("not a Converse body: %s", out)
		}
	})
}

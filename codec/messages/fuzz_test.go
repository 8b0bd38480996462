package messages

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/sse"
)

// Whatever the body, DecodeRequest answers a request or an *ir.Error, and what it decodes
// encodes again without trouble.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","max_tokens":10,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"x"}}]},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"a__thought__AAEC","name":"f","input":{"x":1}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"r"}]},{"type":"text","text":"go"}]}],"tools":[{"name":"f","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search"}],"tool_choice":{"type":"any","disable_parallel_tool_use":true},"thinking":{"type":"enabled","budget_tokens":1024}}`,
		`{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"server_tool_use","id":"s","name":"web_search","input":{}}]}],"thinking":{"type":"adaptive"},"metadata":{"user_id":"u","x":1}}`,
		`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","data":"x"}}]}]}`,
		`{"model":"m","max_tokens":0}`, `[]`, `null`, `{"messages":5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Format.DecodeRequest(body)
		if err != nil {
			var e *ir.Error
			if !errors.As(err, &e) || e.Kind != ir.ErrInvalidRequest || e.Status != 400 {
				t.Fatalf("error %#v", err)
			}
			return
		}
		var loss ir.Loss
		Format.EncodeRequest(r, "up", &loss)
	})
}

// Whatever the stream, the decoder never panics, and the encoder turns whatever events it
// produced into a well-formed messages stream.
func FuzzStreamDecode(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(testdata, "stream_thinking_tools.sse")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n"))
	f.Add([]byte("data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{\"a\":[1]}}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"b\\\":\"}}\n\ndata: {\"type\":\"message_stop\"}\n\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		d := Format.NewStreamDecoder()
		var events []ir.Event
		r := sse.NewReader(bytes.NewReader(stream))
		for {
			ev, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatal(err)
				}
				break
			}
			evs, _, err := d.Decode(ev.Name, ev.Data)
			if err != nil {
				break
			}
			events = append(events, evs...)
		}
		out := encodeStream(t, events, "m")
		frames := readFrames(t, out)
		if len(frames) == 1 && frames[0].name == "error" {
			return
		}
		blockCheck(t, frames)
	})
}

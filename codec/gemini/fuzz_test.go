package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

func addFixtureSeeds(f *testing.F, dir string) {
	entries, err := os.ReadDir(filepath.Join(testdata, dir))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		f.Add(readFixture(f, filepath.Join(dir, e.Name())))
	}
}

// FuzzStreamDecode feeds arbitrary chunks (split at blank lines) to one decoder: it must
// never panic, start once, count tool calls from 0 and finish at most once.
func FuzzStreamDecode(f *testing.F) {
	addFixtureSeeds(f, "stream")
	f.Add([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":[1]}}]}}]}\r\n\r\ndata: {\"candidates\":[{\"finishReason\":\"STOP\"}]}\r\n\r\n"))
	f.Add([]byte("data: {\"error\":{\"code\":\"x\"}}\n\n"))
	f.Add([]byte("data: {\"candidates\":[{\"index\":1,\"content\":{\"parts\":[{\"text\":\"other\"}]}}]}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := Format.NewStreamDecoder()
		starts, finishes, tools := 0, 0, 0
		for _, chunk := range bytes.Split(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\n\n")) {
			chunk = bytes.TrimPrefix(bytes.TrimSpace(chunk), []byte("data:"))
			evs, done, err := d.Decode(nil, chunk)
			if err != nil {
				continue
			}
			for _, e := range evs {
				switch e.Kind {
				case ir.EvStart:
					starts++
				case ir.EvFinish, ir.EvError:
					finishes++
				case ir.EvToolStart:
					if e.Index != tools {
						t.Fatalf("tool index %d, want %d", e.Index, tools)
					}
					tools++
				case ir.EvToolArgs:
					if e.Index != tools-1 || !json.Valid([]byte(e.Text)) || e.Text[0] != '{' {
						t.Fatalf("bad args event %+v", e)
					}
				}
			}
			if (finishes > 0) != done {
				t.Fatalf("done=%v after %d finishes", done, finishes)
			}
		}
		if starts > 1 || finishes > 1 {
			t.Fatalf("%d starts, %d finishes", starts, finishes)
		}
	})
}

// FuzzDecodeResponse: any body decodes or fails cleanly; tool-call arguments are always a
// JSON object.
func FuzzDecodeResponse(f *testing.F) {
	addFixtureSeeds(f, "response")
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":"str"}},{"thought":true}]}}]}`))
	f.Add([]byte(`{"promptFeedback":{"blockReason":"OTHER"}}`))
	f.Add([]byte(`{"error":{"code":7}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Format.DecodeResponse(body)
		if err != nil {
			return
		}
		for _, p := range r.Parts {
			if p.Kind == ir.PartToolCall {
				a := p.ToolCall.Arguments
				if !json.Valid([]byte(a)) || a[0] != '{' || p.ToolCall.ID == "" {
					t.Fatalf("bad tool call %+v", p.ToolCall)
				}
			}
		}
		_ = Format.DecodeError(500, body)
	})
}

// FuzzSanitizeSchema: any parameters schema encodes or fails cleanly, to valid JSON.
func FuzzSanitizeSchema(f *testing.F) {
	f.Add([]byte(schemaParams))
	f.Add([]byte(`{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"},{"$ref":"#/$defs/b"}]},"b":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}},"$ref":"#/$defs/a"}`))
	f.Add([]byte(`{"type":"object","properties":{"x":{"type":["null"],"enum":[null,{"a":1}],"items":[true,false]}}}`))
	f.Fuzz(func(t *testing.T, schema []byte) {
		r := ir.Request{Tools: []ir.Tool{{Name: "f", Parameters: schema}}}
		body, err := Format.EncodeRequest(&r, "m", &ir.Loss{})
		if err == nil && !json.Valid(body) {
			t.Fatalf("invalid body %s", body)
		}
	})
}

// FuzzDecodeRequest: any body decodes to a request or a 400 naming the problem, never a
// panic, and every tool result answers a call id that is set.
func FuzzDecodeRequest(f *testing.F) {
	addFixtureSeeds(f, "decode")
	f.Add([]byte(`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f"}}]},{"parts":[{"functionResponse":{"name":"f","response":{"error":1}}}]}]}`))
	f.Add([]byte(`{"contents":[],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","nullable":true,"anyOf":[1]}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Format.DecodeRequest(body)
		if err != nil {
			var e *ir.Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("error %v is not a 400 *ir.Error", err)
			}
			return
		}
		for _, m := range r.Messages {
			for _, p := range m.Parts {
				if p.Kind == ir.PartToolResult && p.ToolResult.CallID == "" {
					t.Fatalf("a result without a call id: %+v", p.ToolResult)
				}
				if p.Kind == ir.PartToolCall && (p.ToolCall.ID == "" || !json.Valid([]byte(p.ToolCall.Arguments))) {
					t.Fatalf("a call without id or with bad arguments: %+v", p.ToolCall)
				}
			}
		}
	})
}

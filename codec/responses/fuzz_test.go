package responses

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/sse"
)

// Any body either decodes into a request every part of which a responses route can take, or
// is refused with an invalid_request error; nothing panics. What decodes encodes to a body that
// decodes again, unless nothing in it can be sent (every part dropped): then the encoder says
// so with a 400 on input rather than send a request without input.
func FuzzDecodeRequest(f *testing.F) {
	f.Add(fixtureBytes(f, "request_items.json"))
	for _, s := range []string{
		`{"model":"m","input":"hi"}`,
		`{"model":"m","input":[{"type":"function_call","call_id":"c__thought__AA","name":"f","arguments":"{"}]}`,
		`{"model":"m","input":[{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":"x"}],"encrypted_content":"e"}],"tools":[{"type":"custom","name":"p"}]}`,
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,AA"}]}],"text":{"format":{"type":"json_schema","name":"n","schema":{}}}}`,
		`{"model":"m","input":"x","tool_choice":{"type":"allowed_tools","mode":"auto","tools":[{"type":"web_search"}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Format.DecodeRequest(body)
		if err != nil {
			if e, ok := err.(*ir.Error); !ok || e.Kind != ir.ErrInvalidRequest {
				t.Fatalf("error %#v", err)
			}
			return
		}
		var loss ir.Loss
		out, err := Format.EncodeRequest(r, "up", &loss)
		if e, ok := err.(*ir.Error); ok && e.Param == "input" && len(loss.Fields()) > 0 {
			return
		}
		if err != nil || !json.Valid(out) {
			t.Fatalf("EncodeRequest: %v (dropped %v)\n%s", err, loss.Fields(), out)
		}
		if _, err := Format.DecodeRequest(out); err != nil {
			t.Fatalf("the encoded request does not decode: %v\n%s", err, out)
		}
	})
}

// Any upstream stream decodes without panicking, and what it decodes to is a stream the
// encoder renders with sequence numbers in order and a terminal event.
func FuzzStreamDecode(f *testing.F) {
	for _, name := range []string{"upstream_text.sse", "upstream_reasoning_tools.sse", "upstream_incomplete.sse",
		"upstream_failed.sse", "upstream_error.sse", "upstream_codex_done.sse", "upstream_changing_item_ids.sse"} {
		f.Add(fixtureBytes(f, name))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		dec := Format.NewStreamDecoder()
		var out bytes.Buffer
		enc := Format.NewStreamEncoder(sse.NewWriter(&out, nil), patchTools, "m")
		r := sse.NewReader(bytes.NewReader(stream))
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			evs, _, err := dec.Decode(ev.Name, ev.Data)
			if err != nil {
				break
			}
			for _, e := range evs {
				if err := enc.Encode(e); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := enc.Close(); err != nil {
			t.Fatal(err)
		}
		frames := sse.NewReader(&out)
		n := 0
		last := ""
		for {
			ev, err := frames.Next()
			if err != nil {
				break
			}
			var h struct {
				Type string `json:"type"`
				Seq  int    `json:"sequence_number"`
			}
			if err := json.Unmarshal(ev.Data, &h); err != nil || h.Type != string(ev.Name) || h.Seq != n {
				t.Fatalf("frame %d: %s %s (%v)", n, ev.Name, ev.Data, err)
			}
			last = h.Type
			n++
		}
		if last != "response.completed" && last != "response.incomplete" && last != "response.failed" {
			t.Fatalf("the stream ends with %q", last)
		}
	})
}

func fixtureBytes(f *testing.F, name string) []byte {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "responses", name))
	if err != nil {
		f.Fatal(err)
	}
	return b
}

package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

// embeddingsParam matches the members an embeddings error may name ("" = the body as a whole).
var embeddingsParam = regexp.MustCompile(`^(|model|input|input\[\d+\]|encoding_format|dimensions)$`)

// wholeNumber is a JSON token id as the reference reads it: digits only.
var wholeNumber = regexp.MustCompile(`^[0-9]+$`)

// FuzzParseEmbeddingsRequest: any body is a 400 naming a member, or a request whose input is
// what the embeddings API embeds (a text, or up to 2048 texts, token ids or token-id lists, one
// kind, none empty) and whose upstream body is the client's with the route's model, every other
// member byte for byte, parsing again to the same request.
func FuzzParseEmbeddingsRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"sim-embed","input":["first text","second"]}`, // cmd/modelgate's demo test
		`{"model":"embed","input":"hi","encoding_format":"base64","dimensions":256,"user":"u"}`,
		`{"model":"embed","input":[[1,2,3],[4]]}`,
		`{"model":"embed","input":[1,2,3],"encoding_format":null}`,
		`{"model":"embed","input":["a",1]}`,
		`{"model":"embed","input":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseEmbeddingsRequest(body)
		if err != nil {
			var e *ir.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Message == "" || !embeddingsParam.MatchString(e.Param) {
				t.Fatalf("error %#v is not a 400 naming a member", err)
			}
			return
		}
		var in map[string]json.RawMessage
		if err := json.Unmarshal(body, &in); err != nil {
			t.Fatalf("accepted a body that is not an object: %v", err)
		}
		if r.Model == "" || !embeddable(in["input"]) {
			t.Fatalf("accepted model %q, input %s", r.Model, in["input"])
		}
		up := r.UpstreamBody("up")
		var out map[string]json.RawMessage
		if err := json.Unmarshal(up, &out); err != nil || string(out["model"]) != `"up"` || len(out) != len(in) {
			t.Fatalf("upstream body %s: %v", up, err)
		}
		for name, v := range in {
			if name != "model" && !bytes.Equal(out[name], compact(t, v)) {
				t.Fatalf("%s is %s upstream, %s from the client", name, out[name], v)
			}
		}
		if r2, err := ParseEmbeddingsRequest(up); err != nil || r2.Model != "up" {
			t.Fatalf("the upstream body %s parses to %+v, %v", up, r2, err)
		}
	})
}

// embeddable is the reference reading of an accepted input.
func embeddable(raw json.RawMessage) bool {
	var text string
	var items []json.RawMessage
	if json.Unmarshal(raw, &text) == nil {
		return text != ""
	}
	if json.Unmarshal(raw, &items) != nil || len(items) == 0 || len(items) > MaxEmbeddingInputs {
		return false
	}
	kinds := map[string]bool{}
	for _, item := range items {
		var list []json.RawMessage
		switch {
		case json.Unmarshal(item, &text) == nil && text != "":
			kinds["text"] = true
		case wholeNumber.Match(bytes.TrimSpace(item)):
			kinds["token"] = true
		case json.Unmarshal(item, &list) == nil && len(list) > 0:
			for _, tok := range list {
				if !wholeNumber.Match(bytes.TrimSpace(tok)) {
					return false
				}
			}
			kinds["tokens"] = true
		default:
			return false
		}
	}
	return len(kinds) == 1
}

// compact is raw JSON as json.Marshal writes a RawMessage: without insignificant space, <, >
// and & escaped.
func compact(t *testing.T, raw json.RawMessage) []byte {
	var b, escaped bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	json.HTMLEscape(&escaped, b.Bytes())
	return escaped.Bytes()
}

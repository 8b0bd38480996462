package conversion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/modelgate/modelgate/codec/sse"
)

// decodeJSON parses JSON keeping numbers as written.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// encodeJSON writes v with sorted keys, without HTML escaping; indent "" is compact.
func encodeJSON(v any, indent string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// canonical re-encodes a JSON text compactly with sorted keys.
func canonical(b []byte) (string, error) {
	v, err := decodeJSON(b)
	if err != nil {
		return "", err
	}
	return string(encodeJSON(v, "")), nil
}

// frame is one SSE event; data is canonical JSON, or the raw text when it is not JSON
// ("[DONE]").
type frame struct {
	name, data string
}

func (f frame) String() string {
	if f.name == "" {
		return "data: " + f.data
	}
	return "event: " + f.name + "\ndata: " + f.data
}

// readFrames splits an SSE transcript into frames, keeping the data as it is.
func readFrames(b []byte) ([]frame, error) {
	rd := sse.NewReader(bytes.NewReader(b))
	var out []frame
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, frame{name: string(ev.Name), data: string(ev.Data)})
	}
}

// formatFrames is the golden text of a transcript: one frame per block, data canonical.
func formatFrames(fs []frame) []byte {
	var b bytes.Buffer
	for _, f := range fs {
		b.WriteString(f.String())
		b.WriteString("\n\n")
	}
	return b.Bytes()
}

// normalizer replaces what differs between runs by placeholders, consistently across one
// answer (an id repeated in many frames becomes one placeholder).
type normalizer struct {
	ids   map[string]string
	calls map[string]string
	// callIDs are the tool-call ids seen, as they were, in order (for the pass-through checks).
	callIDs []string
}

func newNormalizer() *normalizer {
	return &normalizer{ids: map[string]string{}, calls: map[string]string{}}
}

// idPrefix recognizes the prefixes the client formats give their ids.
var idPrefix = regexp.MustCompile(`^(chatcmpl-|msg_|resp_|rs_|fc_|ctc_)`)

const thoughtSep = "__thought__"

func (z *normalizer) id(s string) string {
	if p, ok := z.ids[s]; ok {
		return p
	}
	prefix := idPrefix.FindString(s)
	p := fmt.Sprintf("%s<%d>", prefix, len(z.ids)+1)
	if prefix == "" {
		p = fmt.Sprintf("<id-%d>", len(z.ids)+1)
	}
	z.ids[s] = p
	return p
}

// call replaces a tool-call id, whatever format minted it, and keeps a gemini signature
// suffix as it is (the signature is deterministic and must survive).
func (z *normalizer) call(s string) string {
	base, sig, hasSig := strings.Cut(s, thoughtSep)
	p, ok := z.calls[base]
	if !ok {
		p = fmt.Sprintf("<call-%d>", len(z.calls)+1)
		z.calls[base] = p
		z.callIDs = append(z.callIDs, base)
	}
	if hasSig {
		return p + thoughtSep + sig
	}
	return p
}

var timeKeys = map[string]bool{"created": true, "created_at": true, "completed_at": true}

// walk normalizes v in place and returns it. callElem says v is an element of a chat
// tool_calls array, whose "id" is a tool-call id.
func (z *normalizer) walk(v any, callElem bool) any {
	switch x := v.(type) {
	case []any:
		for i := range x {
			x[i] = z.walk(x[i], false)
		}
	case map[string]any:
		// a messages tool_use block, or a gemini functionCall (name and args, no type)
		isToolUse := x["type"] == "tool_use" || x["type"] == nil && x["name"] != nil && x["args"] != nil
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // placeholders are numbered in the order of the canonical text
		for _, k := range keys {
			val := x[k]
			s, isString := val.(string)
			_, isNumber := val.(json.Number)
			switch {
			case timeKeys[k] && isNumber:
				x[k] = "<time>"
			case k == "id" && isString && (callElem || isToolUse):
				x[k] = z.call(s)
			case (k == "call_id" || k == "tool_call_id" || k == "tool_use_id" || k == "toolUseId") && isString:
				x[k] = z.call(s)
			case k == "responseId" && isString: // opaque: the source's id whatever its shape
				x[k] = z.id(idPrefix.ReplaceAllString(s, ""))
			case (k == "id" || k == "item_id") && isString:
				x[k] = z.id(s)
			case k == "tool_calls":
				if list, ok := val.([]any); ok {
					for i := range list {
						list[i] = z.walk(list[i], true)
					}
				}
			default:
				x[k] = z.walk(val, false)
			}
		}
	}
	return v
}

// normalizeJSON is a whole answer with its placeholders, indented for the golden file.
func (z *normalizer) normalizeJSON(b []byte) ([]byte, error) {
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	return encodeJSON(z.walk(v, false), "  "), nil
}

// normalizeFrames canonicalizes and normalizes every frame's data.
func (z *normalizer) normalizeFrames(fs []frame) []frame {
	out := make([]frame, len(fs))
	for i, f := range fs {
		out[i] = f
		if v, err := decodeJSON([]byte(f.data)); err == nil {
			out[i].data = string(encodeJSON(z.walk(v, false), ""))
		}
	}
	return out
}

// canonicalFrames re-encodes a golden transcript's data for comparison.
func canonicalFrames(b []byte) ([]frame, error) {
	fs, err := readFrames(b)
	if err != nil {
		return nil, err
	}
	for i := range fs {
		if c, err := canonical([]byte(fs[i].data)); err == nil {
			fs[i].data = c
		}
	}
	return fs, nil
}

// diffFrames describes the first differences between two transcripts ("" when equal).
func diffFrames(got, want []frame) string {
	var b strings.Builder
	n := max(len(got), len(want))
	shown := 0
	for i := 0; i < n && shown < 3; i++ {
		var g, w frame
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			shown++
			fmt.Fprintf(&b, "frame %d:\n  got:  %s\n  want: %s\n", i, oneLine(g), oneLine(w))
		}
	}
	if len(got) != len(want) {
		fmt.Fprintf(&b, "%d frames, want %d\n", len(got), len(want))
	}
	return b.String()
}

func oneLine(f frame) string {
	if f == (frame{}) {
		return "(none)"
	}
	return strings.ReplaceAll(f.String(), "\n", " | ")
}

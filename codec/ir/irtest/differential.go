// Package irtest holds test helpers shared by the format packages: random streamed answers
// and a comparison of two stream encoders' frames by the JSON values they decode to.
package irtest

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

// texts are the strings random events carry: escaping's hard cases among plain words.
var texts = []string{"", "Hello", " world", "a \"quoted\" \\ word", "line\nbreak\ttab\r", "\x00\x01\x1f\x7f",
	"\u2028\u2029", "bad \xff\xc3 bytes", "<b>&amp;</b>", "é ✓ 😀", `{"a":`, `1}`, `{}`, `"x"`, "\b\f"}

// RandomEvents is a streamed answer drawn from seed, with extra as one more text: a start,
// deltas of every kind (tool calls with argument fragments, possibly interleaved), usage,
// and a finish, an error, or nothing (the stream broke).
func RandomEvents(seed int64, extra string) []ir.Event {
	r := rand.New(rand.NewSource(seed))
	text := func() string {
		if r.Intn(len(texts)+1) == 0 {
			return extra
		}
		return texts[r.Intn(len(texts))]
	}
	usage := func() codec.Usage {
		return codec.Usage{Input: r.Int63n(1000), CacheRead: r.Int63n(3) * 10, CacheWrite: r.Int63n(2) * 7,
			Output: r.Int63n(500), Reasoning: r.Int63n(2) * r.Int63n(50)}
	}
	evs := []ir.Event{{Kind: ir.EvStart, ID: "up-" + fmt.Sprint(r.Intn(100)), Model: "up-model"}}
	if r.Intn(2) == 0 {
		evs[0].Usage = codec.Usage{Input: r.Int63n(100)}
	}
	calls := 0
	formats := []string{"messages", "gemini", "responses"}
	for n := r.Intn(12); n > 0; n-- {
		switch r.Intn(9) {
		case 0, 1:
			evs = append(evs, ir.Event{Kind: ir.EvText, Text: text()})
		case 2:
			ev := ir.Event{Kind: ir.EvText, Text: text(), Signature: "sig" + text(), Format: "gemini"}
			evs = append(evs, ev)
		case 3:
			evs = append(evs, ir.Event{Kind: ir.EvReasoning, Text: text()})
		case 4:
			evs = append(evs, ir.Event{Kind: ir.EvSignature, Text: "sig-" + text(), Format: formats[r.Intn(3)]})
		case 5:
			evs = append(evs, ir.Event{Kind: ir.EvRedacted, Text: "data-" + text()})
		case 6:
			f := formats[r.Intn(3)]
			evs = append(evs, ir.Event{Kind: ir.EvToolStart, Index: calls, ID: "call_" + fmt.Sprint(calls),
				Name: "fn" + text(), Signature: map[bool]string{true: "c2ln"}[f == "gemini"], Format: f})
			calls++
		case 7:
			if calls > 0 {
				evs = append(evs, ir.Event{Kind: ir.EvToolArgs, Index: r.Intn(calls), Text: text()})
			}
		case 8:
			evs = append(evs, ir.Event{Kind: ir.EvUsage, Usage: usage()})
		}
	}
	switch r.Intn(4) {
	case 0, 1:
		stops := []ir.StopReason{ir.StopEnd, ir.StopLength, ir.StopToolUse, ir.StopContentFilter, ir.StopSequence}
		ev := ir.Event{Kind: ir.EvFinish, Stop: stops[r.Intn(len(stops))], Usage: usage()}
		if ev.Stop == ir.StopSequence {
			ev.StopSequence = text()
		}
		evs = append(evs, ev)
	case 2:
		evs = append(evs, ir.Event{Kind: ir.EvError, Err: &ir.Error{Status: 529, Kind: ir.ErrOverloaded,
			Code: "overloaded", Message: "busy " + text()}})
	}
	return evs
}

// Frame is one frame an encoder wrote, copied.
type Frame struct {
	Name string
	Data []byte
}

// Frames collects an encoder's frames (ir.Frames).
type Frames struct{ Got []Frame }

func (f *Frames) Write(name string, data []byte) error {
	f.Got = append(f.Got, Frame{name, append([]byte(nil), data...)})
	return nil
}

// Encode runs events and Close through an encoder made by newEnc and returns its frames.
func Encode(newEnc func(ir.Frames) ir.StreamEncoder, evs []ir.Event) []Frame {
	var f Frames
	enc := newEnc(&f)
	for _, ev := range evs {
		enc.Encode(ev)
	}
	enc.Close()
	return f.Got
}

// SameValues reports how two encoders' frames differ ("" when they do not): names equal,
// and each frame's data decoding (encoding/json) to the same value once normalize has
// replaced what the encoders mint (ids, clock times).
func SameValues(got, want []Frame, normalize func(any) any) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d frames, want %d:\n%s\nwant\n%s", len(got), len(want), show(got), show(want))
	}
	for i := range got {
		if got[i].Name != want[i].Name {
			return fmt.Sprintf("frame %d named %q, want %q", i, got[i].Name, want[i].Name)
		}
		g, gerr := decode(got[i].Data)
		w, werr := decode(want[i].Data)
		if (gerr != nil) != (werr != nil) {
			return fmt.Sprintf("frame %d: decode error %v, want %v: %s", i, gerr, werr, got[i].Data)
		}
		if gerr != nil {
			if string(got[i].Data) != string(want[i].Data) {
				return fmt.Sprintf("frame %d = %s, want %s", i, got[i].Data, want[i].Data)
			}
			continue
		}
		if normalize != nil {
			g, w = normalize(g), normalize(w)
		}
		if !reflect.DeepEqual(g, w) {
			return fmt.Sprintf("frame %d = %s, want %s", i, got[i].Data, want[i].Data)
		}
	}
	return ""
}

func decode(b []byte) (any, error) {
	var v any
	err := json.Unmarshal(b, &v)
	return v, err
}

func show(fs []Frame) string {
	s := ""
	for _, f := range fs {
		s += f.Name + " " + string(f.Data) + "\n"
	}
	return s
}

// Blank replaces the values of the named members, at any depth, with "": what encoders mint.
func Blank(v any, names ...string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = Blank(e, names...)
			for _, n := range names {
				if k == n {
					x[k] = ""
				}
			}
		}
	case []any:
		for i, e := range x {
			x[i] = Blank(e, names...)
		}
	}
	return v
}

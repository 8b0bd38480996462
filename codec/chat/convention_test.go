package chat

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/sse"
)

// TestRewriteAnswerGolden: a whole chat answer as a chat client gets it on the same-format
// path: testdata/chat/<in> is what the route sent, testdata/chat/answer/<case>.want.json what
// the client gets (only the model, the usage convention and content arrays change).
func TestRewriteAnswerGolden(t *testing.T) {
	cases := []struct {
		name, in string
		dropped  string
	}{
		// xAI: completion_tokens 9 beside reasoning 94 (total 135) become 103; the rest stays.
		{name: "xai_usage", in: "usage/xai_reasoning.json"},
		// Mistral: content [thinking, text] becomes content "Paris." and reasoning_content.
		{name: "mistral_thinking_array", in: "answer/mistral_thinking_array.in.json"},
		// A reasoning_content of null is filled; spacing is kept; text parts are joined.
		{name: "reasoning_null_content_array", in: "answer/reasoning_null_content_array.in.json"},
		// OpenAI counts reasoning inside: nothing to change but the model.
		{name: "openai_usage", in: "usage/openai_reasoning.json"},
	}
	dir := filepath.Join("..", "..", "testdata", "chat")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join(dir, c.in))
			if err != nil {
				t.Fatal(err)
			}
			var loss ir.Loss
			got := RewriteAnswer(in, "my-model", &loss)
			golden := filepath.Join(dir, "answer", c.name+".want.json")
			if *update {
				os.WriteFile(golden, got, 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) || loss.Header() != c.dropped {
				t.Errorf("differs from %s (dropped %q):\n got: %s\nwant: %s", golden, loss.Header(), got, want)
			}
		})
	}
	if got := RewriteAnswer([]byte("not json"), "m", nil); string(got) != "not json" {
		t.Errorf("text that is not an object: %q", got)
	}
}

// TestDecodeContentArrays: the converted paths read content arrays into reasoning and text, in
// order, from whole answers and from streams.
func TestDecodeContentArrays(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "..", "testdata", "chat", "answer", "mistral_thinking_array.in.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeAnswer(body)
	if err != nil {
		t.Fatal(err)
	}
	want := []ir.Part{
		{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Text: "Paris is the capital; one word is enough."}},
		{Kind: ir.PartText, Text: "Paris."},
	}
	if !reflect.DeepEqual(r.Parts, want) || r.Stop != ir.StopEnd || r.Usage != (codec.Usage{Input: 12, Output: 28}) {
		t.Errorf("whole answer: parts %+v stop %v usage %+v", r.Parts, r.Stop, r.Usage)
	}

	got := decodeStream(t, "mistral_content_array")
	wantEvents := []ir.Event{
		{Kind: ir.EvStart, ID: "6f0c1a2b3c4d", Model: "magistral-small-latest"},
		{Kind: ir.EvReasoning, Text: "Twelve times"},
		{Kind: ir.EvReasoning, Text: " twelve"},
		{Kind: ir.EvReasoning, Text: " is 144."},
		{Kind: ir.EvText, Text: "1"},
		{Kind: ir.EvText, Text: "44"},
		{Kind: ir.EvUsage, Usage: codec.Usage{Input: 10, Output: 21}},
		{Kind: ir.EvFinish, Stop: ir.StopEnd, Usage: codec.Usage{Input: 10, Output: 21}},
	}
	if !reflect.DeepEqual(got, wantEvents) {
		t.Errorf("stream:\n got %+v\nwant %+v", got, wantEvents)
	}
}

// TestDecodeSkipsAzurePreamble: Azure's first chunk (empty id, no choices) is not the answer's
// start; the start carries the real id.
func TestDecodeSkipsAzurePreamble(t *testing.T) {
	got := decodeStream(t, "azure_filter_annotations")
	if len(got) == 0 || got[0].Kind != ir.EvStart || got[0].ID != "chatcmpl-az1" || got[0].Model != "gpt-4o-2024-11-20" {
		t.Fatalf("first event %+v", got)
	}
	var text string
	for _, e := range got {
		if e.Kind == ir.EvText {
			text += e.Text
		}
	}
	if last := got[len(got)-1]; text != "Good morning." || last.Kind != ir.EvFinish || last.Stop != ir.StopEnd || last.Usage != (codec.Usage{Input: 14, Output: 3}) {
		t.Fatalf("text %q, last %+v", text, last)
	}
}

// decodeStream runs testdata/chat/relay/<name>.upstream.sse through the stream decoder.
func decodeStream(t *testing.T, name string) []ir.Event {
	t.Helper()
	in, err := os.ReadFile(filepath.Join("..", "..", "testdata", "chat", "relay", name+".upstream.sse"))
	if err != nil {
		t.Fatal(err)
	}
	dec := NewStreamDecoder()
	rd := sse.NewReader(bytes.NewReader(in))
	var out []ir.Event
	for {
		ev, err := rd.Next()
		if err != nil {
			t.Fatalf("stream ended without [DONE]: %v", err)
		}
		evs, done, err := dec.Decode(ev.Name, ev.Data)
		if err != nil {
			t.Fatalf("event %q: %v", ev.Data, err)
		}
		out = append(out, evs...)
		if done {
			return out
		}
	}
}

package chat

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/sse"
)

var update = flag.Bool("update", false, "rewrite the goldens under testdata/chat/relay (*.client.sse) and testdata/chat/answer (*.want.json); review each before keeping it")

// TestRelayGolden: a chat route's stream as a chat client gets it on the same-format path.
// testdata/chat/relay/<case>.upstream.sse is what the route sent, <case>.client.sse what the
// relay passes on (frame by frame, bytes exact: only the model, tool-call indexes and the
// unasked usage chunk may change). The table holds what the relay reads on the side.
func TestRelayGolden(t *testing.T) {
	cases := []struct {
		name         string
		includeUsage bool
		finished     bool // a finish_reason came
		done         bool // data: [DONE] or an error chunk came
		usage        codec.Usage
		errKind      ir.ErrorKind
		dropped      string // what the client does not get, as the loss names it
	}{
		// An OpenAI-compatible server in front of Claude numbers calls by content block:
		// the client sees 0 and 1.
		{name: "tool_index_from_one", includeUsage: true, finished: true, done: true, usage: codec.Usage{Input: 412, Output: 96}},
		// Every call numbered 0 and told apart by its id (and one call at 5): 0, 1, 2, 3, with
		// the continuation that repeats call_3's id kept on call_3.
		{name: "tool_index_all_zero", finished: true, done: true},
		// Fragments without an index get one.
		{name: "tool_index_missing", finished: true, done: true},
		// finish_reason, then the connection closes: no [DONE] (the relay does not invent it;
		// the gateway sends it, see transport/api).
		{name: "finish_without_done", finished: true, usage: codec.Usage{Input: 11, Output: 5}},
		{name: "finish_without_blank_line", finished: true},
		{name: "pretty_dated_model", finished: true, done: true, usage: codec.Usage{Input: 9, Output: 3}},
		{name: "error_chunk", done: true, errKind: ir.ErrRateLimit},
		// xAI counts reasoning outside completion_tokens (total = 32 + 9 + 94): the client
		// gets completion_tokens 103, reasoning included, as OpenAI counts.
		{name: "xai_usage", includeUsage: true, finished: true, done: true, usage: codec.Usage{Input: 26, CacheRead: 6, Output: 9, Reasoning: 94}},
		// Azure's preamble (empty id, no choices) and its annotations after the finish carry
		// nothing a chat client reads: left out, named as lost.
		{name: "azure_filter_annotations", includeUsage: true, finished: true, done: true, usage: codec.Usage{Input: 14, Output: 3},
			dropped: "answer.choices[].content_filter_offsets, answer.choices[].content_filter_results, answer.prompt_filter_results"},
		// Mistral's content arrays: text becomes content, thinking reasoning_content.
		{name: "mistral_content_array", finished: true, done: true, usage: codec.Usage{Input: 10, Output: 21},
			dropped: "answer.content.thinking.reference"},
		// Moonshot puts the usage in the finishing choice: read, and for a client that asked
		// for it also at the top level, where the chat convention has it.
		{name: "usage_in_choice", includeUsage: true, finished: true, done: true, usage: codec.Usage{Input: 12, Output: 4, Reasoning: 1}},
		// Groq's last chunk may carry the usage only in x_groq: the same.
		{name: "groq_usage", includeUsage: true, finished: true, done: true, usage: codec.Usage{Input: 18, Output: 3}},
		// OpenRouter names reasoning `reasoning` (renamed reasoning_content, the gateway's chat
		// convention), and its usage chunk after the finish carries a choice with a null
		// finish_reason, which SDK accumulators take for a reset: that chunk gets choices [].
		{name: "openrouter_reasoning", includeUsage: true, finished: true, done: true, usage: codec.Usage{Input: 43, Output: 23, Reasoning: 13}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join("..", "..", "testdata", "chat", "relay")
			in, err := os.ReadFile(filepath.Join(dir, c.name+".upstream.sse"))
			if err != nil {
				t.Fatal(err)
			}
			var loss ir.Loss
			relay := NewRelay("my-model", c.includeUsage, &loss)
			var got bytes.Buffer
			out := sse.NewWriter(&got, nil)
			rd := sse.NewReader(bytes.NewReader(in))
			done := false
			for !done {
				ev, err := rd.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				var data []byte
				if data, done, err = relay.Chunk(ev.Data); err != nil {
					t.Fatalf("event %q: %v", ev.Data, err)
				}
				if data != nil {
					out.Write("", data)
				}
			}
			golden := filepath.Join(dir, c.name+".client.sse")
			if *update {
				os.WriteFile(golden, got.Bytes(), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("client stream differs from %s:\n got: %s\nwant: %s", golden, got.Bytes(), want)
			}
			u, _ := relay.Usage()
			var kind ir.ErrorKind
			if relay.Err() != nil {
				kind = relay.Err().Kind
			}
			if relay.Finished() != c.finished || done != c.done || u != c.usage || kind != c.errKind || loss.Header() != c.dropped {
				t.Errorf("finished %v done %v usage %+v error %q dropped %q; want %v %v %+v %q %q",
					relay.Finished(), done, u, kind, loss.Header(), c.finished, c.done, c.usage, c.errKind, c.dropped)
			}
		})
	}
}

// A cut or garbled event is never relayed: the gateway ends the stream instead.
func TestRelayRefusesWhatIsNotAChunk(t *testing.T) {
	for _, data := range []string{`{"id":"x","choices":[{"delta":{"content":"ab`, `not json`, `[1]`} {
		out, done, err := NewRelay("m", false, nil).Chunk([]byte(data))
		if !errors.Is(err, ErrNotChunk) || out != nil || done {
			t.Errorf("Chunk(%q) = %q, %v, %v", data, out, done, err)
		}
	}
	if out, done, err := NewRelay("m", false, nil).Chunk(nil); out != nil || done || err != nil {
		t.Errorf("an empty data line: %q, %v, %v", out, done, err)
	}
}

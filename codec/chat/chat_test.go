package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/sse"
)

func TestParseRequest(t *testing.T) {
	cases := []struct {
		name         string
		body         string
		model        string
		stream       bool
		includeUsage bool
		param        string // expected error param; "-" = no error
	}{
		{"minimal", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "m", false, false, "-"},
		{"stream with usage", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`, "m", true, true, "-"},
		{"null stream_options", `{"model":"m","stream":true,"stream_options":null,"messages":[{"role":"user","content":"x"}]}`, "m", true, false, "-"},
		{"not an object", `[1,2]`, "", false, false, ""},
		{"null body", `null`, "", false, false, ""},
		{"model missing", `{"messages":[{"role":"user","content":"x"}]}`, "", false, false, "model"},
		{"model not a string", `{"model":7,"messages":[{"role":"user","content":"x"}]}`, "", false, false, "model"},
		{"messages not array", `{"model":"m","messages":{}}`, "", false, false, "messages"},
		{"role missing", `{"model":"m","messages":[{"role":"user","content":"x"},{"content":"y"}]}`, "", false, false, "messages[1].role"},
		{"stream not bool", `{"model":"m","stream":"yes","messages":[{"role":"user","content":"x"}]}`, "", false, false, "stream"},
		{"unknown effort", `{"model":"m","reasoning_effort":"ultra","messages":[{"role":"user","content":"x"}]}`, "", false, false, "reasoning_effort"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseRequest([]byte(c.body))
			if c.param == "-" {
				if err != nil || r.Model != c.model || r.Stream != c.stream || r.IncludeUsage != c.includeUsage {
					t.Fatalf("got %+v, %v", r, err)
				}
				return
			}
			var inv *ir.Error
			if !errors.As(err, &inv) || inv.Param != c.param || inv.Status != 400 {
				t.Fatalf("err = %v, want param %q", err, c.param)
			}
		})
	}
}

func TestUpstreamBody(t *testing.T) {
	on, off := true, false
	cases := []struct {
		name  string
		body  string
		patch Patch
		want  string
	}{
		{"model swapped in place, unknown fields and spacing kept, <&> as written", `{"model":"alias", "messages":[{"role":"user","content":"<a> & b"}],"x_new":{"deep": [1]},"temperature":0.5}`, Patch{},
			`{"model":"up", "messages":[{"role":"user","content":"<a> & b"}],"x_new":{"deep": [1]},"temperature":0.5}`},
		{"stream forces include_usage, keeps other options", `{"model":"a","stream":true,"stream_options":{"include_obfuscation":false},"messages":[{"role":"user","content":"x"}]}`, Patch{},
			`{"model":"up","stream":true,"stream_options":{"include_obfuscation":false,"include_usage":true},"messages":[{"role":"user","content":"x"}]}`},
		{"member order and spacing kept; include_usage set inside the client's options", "{\"stream\": true,\n \"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\n \"stream_options\": {\"include_usage\": false, \"z\": 1},\n \"model\": \"a\"}", Patch{},
			"{\"stream\": true,\n \"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\n \"stream_options\": {\"include_usage\": true, \"z\": 1},\n \"model\": \"up\"}"},
		{"stream without options", `{"model":"a","stream":true,"messages":[{"role":"user","content":"x"}]}`, Patch{},
			`{"model":"up","stream":true,"messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":true}}`},
		{"effort model: reasoning_effort only", `{"model":"a","messages":[{"role":"user","content":"x"}],"reasoning_effort":"medium","enable_thinking":true,"thinking":{"type":"enabled"}}`,
			Patch{Thinking: ir.Thinking{Effort: "high", Enabled: &on}}, `{"model":"up","messages":[{"role":"user","content":"x"}],"reasoning_effort":"high"}`},
		{"toggle model: enable_thinking only", `{"model":"a","messages":[{"role":"user","content":"x"}],"reasoning_effort":"none"}`,
			Patch{Thinking: ir.Thinking{Enabled: &off}}, `{"model":"up","messages":[{"role":"user","content":"x"}],"enable_thinking":false}`},
		{"no reasoning: every control goes; the cap replaces max_completion_tokens", `{"model":"a","messages":[{"role":"user","content":"x"}],"reasoning_effort":"low","max_completion_tokens":900}`,
			Patch{MaxTokens: 100}, `{"model":"up","messages":[{"role":"user","content":"x"}],"max_completion_tokens":100}`},
		{"a duplicated member is written once, where it first stood", `{"model":"a","messages":[{"role":"user","content":"x"}],"model":"b"}`, Patch{},
			`{"model":"up","messages":[{"role":"user","content":"x"}]}`},
		{"an escaped key is the member it names", `{"mod\u0065l":"a","messages":[{"role":"user","content":"x"}]}`, Patch{},
			`{"mod\u0065l":"up","messages":[{"role":"user","content":"x"}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseRequest([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.UpstreamBody("up", c.patch)
			if err != nil || string(got) != c.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, c.want)
			}
		})
	}
}

// Usage is normalized once: chat's prompt_tokens include cached tokens and its
// completion_tokens include reasoning tokens; the normalized fields are disjoint.
func TestResponseUsage(t *testing.T) {
	cases := []struct {
		body string
		want codec.Usage
		ok   bool
	}{
		{`{"usage":{"prompt_tokens":82,"completion_tokens":17}}`, codec.Usage{Input: 82, Output: 17}, true},
		{`{"usage":{"prompt_tokens":100,"completion_tokens":50,"prompt_tokens_details":{"cached_tokens":60,"cache_write_tokens":10},"completion_tokens_details":{"reasoning_tokens":20}}}`,
			codec.Usage{Input: 30, CacheRead: 60, CacheWrite: 10, Output: 30, Reasoning: 20}, true},
		{`{"usage":{"prompt_tokens":8,"total_tokens":8}}`, codec.Usage{Input: 8}, true}, // embeddings
		{`{"usage":null}`, codec.Usage{}, false},
		{`{"choices":[]}`, codec.Usage{}, false},
		{`not json`, codec.Usage{}, false},
	}
	for _, c := range cases {
		got, ok := ResponseUsage([]byte(c.body))
		if got != c.want || ok != c.ok {
			t.Errorf("%s: got %+v %v, want %+v %v", c.body, got, ok, c.want, c.ok)
		}
		// The same-format relay reads the same usage in its one scan of the answer.
		if _, got, ok := RelayAnswer([]byte(c.body), "m", nil); got != c.want || ok != c.ok {
			t.Errorf("RelayAnswer %s: got %+v %v, want %+v %v", c.body, got, ok, c.want, c.ok)
		}
	}
}

func TestStreamFixture(t *testing.T) {
	f, err := os.Open("../../testdata/chat/stream_usage.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := sse.NewReader(f)
	relay := NewRelay("client-model", false, nil)
	var rewritten []string
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		out, done, err := relay.Chunk(ev.Data)
		if err != nil {
			t.Fatal(err)
		}
		if out != nil {
			rewritten = append(rewritten, string(out))
		}
		if done {
			break
		}
	}
	usage, _ := relay.Usage()
	if want := (codec.Usage{Input: 50, CacheRead: 40, Output: 18, Reasoning: 12}); usage != want || !relay.Finished() {
		t.Fatalf("usage %+v, finished %v; want %+v", usage, relay.Finished(), want)
	}
	// The usage-only chunk the client did not ask for is dropped.
	if len(rewritten) != 5 || rewritten[4] != "[DONE]" {
		t.Fatalf("events: %q", rewritten)
	}
	for _, ev := range rewritten[:4] {
		if !strings.Contains(ev, `"model":"client-model"`) || strings.Count(ev, `"model":"up-model"`) != 0 && !strings.Contains(ev, `\"model\":\"up-model\"`) {
			t.Fatalf("model not swapped: %s", ev)
		}
	}
	// Content that merely looks like the model pair is escaped inside its string and untouched.
	if !strings.Contains(rewritten[2], `lo \"model\":\"up-model\"`) {
		t.Fatalf("content changed: %s", rewritten[2])
	}
}

func TestCost(t *testing.T) {
	u := codec.Usage{Input: 50, CacheRead: 40, CacheWrite: 5, Output: 18, Reasoning: 12}
	p := codec.Prices{Input: 2_500_000, CacheRead: 250_000, CacheWrite: 3_125_000, Output: 10_000_000}
	// 50*2.5e-6 + 40*2.5e-7 + 5*3.125e-6 + 30*1e-5 = 0.000125 + 0.00001 + 0.000015625 + 0.0003
	if got := u.Cost(p).String(); got != "0.000450625" {
		t.Fatalf("cost %s", got)
	}
}

func TestErrorBody(t *testing.T) {
	got := string(ErrorBody("bad \"x\"", "invalid_request_error", "", "messages"))
	want := `{"error":{"message":"bad \"x\"","type":"invalid_request_error","param":"messages","code":null}}`
	if got != want {
		t.Fatalf("%s", got)
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":null}]}`))
	f.Add([]byte(`{"stream_options":1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseRequest(body)
		if err != nil {
			return
		}
		out, err := r.UpstreamBody("up", Patch{})
		if err != nil {
			return
		}
		var in, got map[string]json.RawMessage
		json.Unmarshal(body, &in)
		if json.Unmarshal(out, &got) != nil || string(got["model"]) != `"up"` {
			t.Fatalf("upstream body broken: %s", out)
		}
		// Every member the patch does not touch is passed as it was.
		for k, v := range in {
			switch k {
			case "model", "stream_options", "reasoning_effort", "thinking", "enable_thinking":
				continue
			}
			if !bytes.Equal(got[k], v) {
				t.Fatalf("member %q changed: %s -> %s", k, v, got[k])
			}
		}
	})
}

func BenchmarkChunkPassThrough(b *testing.B) {
	chunk := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"up-model","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}],"usage":null}`)
	relay := NewRelay("client-model", false, nil)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		relay.Chunk(chunk)
	}
}

// TestAnswerUsageGolden: whole answers' usage, normalized to visible output and reasoning
// apart whichever way the provider counts (testdata/chat/usage).
func TestAnswerUsageGolden(t *testing.T) {
	cases := map[string]codec.Usage{
		"openai_reasoning":          {Input: 26, CacheRead: 6, Output: 9, Reasoning: 94},
		"xai_reasoning":             {Input: 26, CacheRead: 6, Output: 9, Reasoning: 94},
		"no_total_openai":           {Input: 20, Output: 3, Reasoning: 40},
		"no_total_reasoning_larger": {Input: 20, Output: 3, Reasoning: 40},
	}
	for name, want := range cases {
		body, err := os.ReadFile("../../testdata/chat/usage/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		r, err := DecodeAnswer(body)
		if err != nil || r.Usage != want {
			t.Errorf("%s: DecodeAnswer usage %+v, %v; want %+v", name, r.Usage, err, want)
		}
		if u, ok := ResponseUsage(body); !ok || u != want {
			t.Errorf("%s: ResponseUsage %+v; want %+v", name, u, want)
		}
		// A chat client of a converted answer sees the OpenAI convention: reasoning inside.
		var out struct {
			Usage struct {
				CompletionTokens int64 `json:"completion_tokens"`
				TotalTokens      int64 `json:"total_tokens"`
			} `json:"usage"`
		}
		json.Unmarshal(EncodeAnswer(r, "m"), &out)
		if out.Usage.CompletionTokens != want.Output+want.Reasoning || out.Usage.TotalTokens != want.Input+want.CacheRead+want.Output+want.Reasoning {
			t.Errorf("%s: encoded usage %+v", name, out.Usage)
		}
	}
}

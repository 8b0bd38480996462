package simulator

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// parseSSE splits a chat stream into its data payloads, requiring the exact framing
// "data: <payload>\n\n" for every event.
func parseSSE(t *testing.T, body string) []string {
	t.Helper()
	if !strings.HasSuffix(body, "\n\n") {
		t.Fatalf("stream does not end with a blank line: %q", body)
	}
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		payload, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(payload, "\n") {
			t.Fatalf("malformed event %q", ev)
		}
		out = append(out, payload)
	}
	return out
}

// streamedChunk keeps usage raw so the test can tell an absent key from null.
type streamedChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int             `json:"index"`
		Delta        json.RawMessage `json:"delta"`
		FinishReason *string         `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
}

func TestChatStreamMatchesNonStreaming(t *testing.T) {
	_, base := startSim(t)
	tests := []struct {
		name, request string
		includeUsage  bool
	}{
		{"text", `"messages":[{"role":"user","content":"hello reply with 7 words"}]`, false},
		{"text with usage", `"messages":[{"role":"user","content":"hello cached 1"}],"max_tokens":9`, true},
		{"one tool call", `"tools":` + toolsJSON + `,"tool_choice":{"type":"function","function":{"name":"clock"}},"messages":[{"role":"user","content":"t"}]`, false},
		{"parallel tool calls with usage", `"tools":` + toolsJSON + `,"messages":[{"role":"user","content":"parallel"}]`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := chat(t, base, `{"model":"m1",`+tc.request+`}`)
			opts := ""
			if tc.includeUsage {
				opts = `,"stream_options":{"include_usage":true}`
			}
			resp, data := post(t, base+"/v1/chat/completions", `{"model":"m1","stream":true`+opts+`,`+tc.request+`}`)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			events := parseSSE(t, string(data))
			if events[len(events)-1] != "[DONE]" {
				t.Fatalf("last event %q, want [DONE]", events[len(events)-1])
			}
			chunks := make([]streamedChunk, len(events)-1)
			for i, ev := range events[:len(events)-1] {
				if err := json.Unmarshal([]byte(ev), &chunks[i]); err != nil {
					t.Fatalf("chunk %d %q: %v", i, ev, err)
				}
				c := chunks[i]
				if c.ID != chunks[0].ID || c.Object != "chat.completion.chunk" || c.Model != "m1" {
					t.Errorf("chunk %d header: id %q object %q model %q", i, c.ID, c.Object, c.Model)
				}
			}

			// Usage: only with include_usage, as a final chunk with no choices; null before it.
			body := chunks
			if tc.includeUsage {
				last := chunks[len(chunks)-1]
				var usage chatUsage
				if len(last.Choices) != 0 || json.Unmarshal(last.Usage, &usage) != nil || usage != want.Usage {
					t.Errorf("usage chunk = %s %+v, want %+v", last.Usage, last.Choices, want.Usage)
				}
				body = chunks[:len(chunks)-1]
			}
			for i, c := range body {
				if wantUsage := map[bool]string{true: "null", false: ""}[tc.includeUsage]; string(c.Usage) != wantUsage {
					t.Errorf("chunk %d usage = %q, want %q", i, c.Usage, wantUsage)
				}
				if len(c.Choices) != 1 || c.Choices[0].Index != 0 {
					t.Fatalf("chunk %d choices: %+v", i, c.Choices)
				}
			}

			isTools := len(want.Choices[0].Message.ToolCalls) > 0
			opening := `{"role":"assistant","content":"","refusal":null}`
			if isTools {
				opening = `{"role":"assistant","content":null,"refusal":null}`
			}
			assertJSON(t, body[0].Choices[0].Delta, opening)
			end := body[len(body)-1].Choices[0]
			if string(end.Delta) != "{}" || end.FinishReason == nil || *end.FinishReason != want.Choices[0].FinishReason {
				t.Errorf("final chunk delta %s finish %v, want {} %q", end.Delta, end.FinishReason, want.Choices[0].FinishReason)
			}
			for i, c := range body[:len(body)-1] {
				if c.Choices[0].FinishReason != nil {
					t.Errorf("chunk %d has finish_reason %q before the end", i, *c.Choices[0].FinishReason)
				}
			}
			middle := body[1 : len(body)-1]
			if isTools {
				assertToolFragments(t, middle, want.Choices[0].Message.ToolCalls)
			} else {
				assertWordChunks(t, middle, want)
			}
		})
	}
}

// assertWordChunks checks one chunk per word, " word" after the first, joining to the
// non-streaming content.
func assertWordChunks(t *testing.T, chunks []streamedChunk, want chatResp) {
	t.Helper()
	var content string
	_ = json.Unmarshal(want.Choices[0].Message.Content, &content)
	words := strings.Fields(content)
	if len(chunks) != len(words) {
		t.Fatalf("%d content chunks for %d words", len(chunks), len(words))
	}
	for i, c := range chunks {
		w := words[i]
		if i > 0 {
			w = " " + w
		}
		wantDelta, _ := json.Marshal(map[string]string{"content": w})
		assertJSON(t, c.Choices[0].Delta, string(wantDelta))
	}
}

// assertToolFragments checks the tool-call delta protocol: an opening fragment per call with
// id, type, name and empty arguments, then argument pieces of at most 5 bytes carrying only
// index and arguments, concatenating to the non-streaming arguments.
func assertToolFragments(t *testing.T, chunks []streamedChunk, want []chatToolCall) {
	t.Helper()
	args := make([]string, len(want))
	next := 0 // index of the next call expected to open
	for i, c := range chunks {
		var d struct {
			ToolCalls []map[string]json.RawMessage `json:"tool_calls"`
		}
		if err := json.Unmarshal(c.Choices[0].Delta, &d); err != nil || len(d.ToolCalls) != 1 {
			t.Fatalf("chunk %d delta %s", i, c.Choices[0].Delta)
		}
		frag := d.ToolCalls[0]
		var idx int
		_ = json.Unmarshal(frag["index"], &idx)
		var fn map[string]string
		_ = json.Unmarshal(frag["function"], &fn)
		if _, opens := frag["id"]; opens {
			if idx != next || fn["name"] != want[idx].Function.Name || fn["arguments"] != "" ||
				string(frag["type"]) != `"function"` || !strings.HasPrefix(string(frag["id"]), `"call_`) {
				t.Errorf("opening fragment %d = %s", i, c.Choices[0].Delta)
			}
			next++
			continue
		}
		if idx != next-1 || len(frag) != 2 || len(fn) != 1 || len(fn["arguments"]) > 5 || fn["arguments"] == "" {
			t.Errorf("continuation fragment %d = %s", i, c.Choices[0].Delta)
		}
		args[idx] += fn["arguments"]
	}
	if next != len(want) {
		t.Errorf("%d calls opened, want %d", next, len(want))
	}
	for i := range want {
		if args[i] != want[i].Function.Arguments {
			t.Errorf("call %d arguments %q, want %q", i, args[i], want[i].Function.Arguments)
		}
	}
}

func TestSplitUTF8KeepsCharactersWhole(t *testing.T) {
	got := splitUTF8(`{"città":"é€"}`, 5)
	want := []string{`{"cit`, `tà":`, `"é`, `€"}`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("splitUTF8 = %q, want %q", got, want)
	}
}

func TestDropAfterChunksCutsConnection(t *testing.T) {
	s, base := startSim(t)
	s.SetBehavior("flaky", Behavior{DropAfterChunks: 3})
	req, _ := http.NewRequest(http.MethodPost, base+"/r/flaky/v1/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var got []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			got = append(got, line)
		}
	}
	if !errors.Is(sc.Err(), io.ErrUnexpectedEOF) {
		t.Errorf("read error = %v, want unexpected EOF", sc.Err())
	}
	if len(got) != 3 {
		t.Errorf("got %d events before the drop, want 3: %q", len(got), got)
	}
	for _, l := range got {
		if strings.Contains(l, "[DONE]") {
			t.Errorf("saw [DONE] in a dropped stream")
		}
	}
	// The simulator keeps serving after a drop.
	if r := chat(t, base, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`); r.Object != "chat.completion" {
		t.Errorf("after drop: %+v", r)
	}
}

func TestTokensPerSecondPacesChunks(t *testing.T) {
	s, base := startSim(t)
	s.SetBehavior("", Behavior{TokensPerSecond: 200}) // one chunk per 5ms
	start := time.Now()
	resp, data := post(t, base+"/v1/chat/completions",
		`{"model":"m","stream":true,"messages":[{"role":"user","content":"reply with 10 words"}]}`)
	elapsed := time.Since(start)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	chunks := len(parseSSE(t, string(data))) - 1 // role + 10 words + finish
	if chunks != 12 {
		t.Fatalf("%d chunks, want 12", chunks)
	}
	if min := time.Duration(chunks-1) * 5 * time.Millisecond; elapsed < min {
		t.Errorf("stream took %v, want at least %v", elapsed, min)
	}
}

func TestChatMidstreamError(t *testing.T) {
	_, base := startSim(t)
	tests := []struct {
		name, request string
		chunks        int // chunks before the error: the role chunk, then content
	}{
		{"text", `"messages":[{"role":"user","content":"midstream error"}]`, 3},
		{"tool call", `"tools":` + toolsJSON + `,"messages":[{"role":"user","content":"midstream error"}]`, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := post(t, base+"/v1/chat/completions", `{"model":"m","stream":true,`+tc.request+`}`)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			events := parseSSE(t, string(data))
			if len(events) != tc.chunks+1 {
				t.Fatalf("%d events, want %d chunks and the error: %q", len(events), tc.chunks, events)
			}
			assertJSON(t, []byte(events[len(events)-1]), `{"error":{"message":"The server had an error while processing your request (simulated).","type":"server_error","param":null,"code":null}}`)
		})
	}
}

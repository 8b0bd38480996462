package simulator

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// turn is one conversation, written in every format by the format's request builder.
type turn struct {
	system, user string
	maxTokens    int  // 0: none
	tools        bool // offer get_weather, clock and ping
	think        bool
}

// neutral is what every format must agree on for the same turn.
type neutral struct {
	Text                                     string
	Calls                                    []string // name + arguments
	Finish                                   string   // stop, length or tools
	Prompt, Cached, Output, Reasoning, Think int      // Think: reasoning words shown, if any
}

// formatCase sends a turn in one format and reads the answer back into neutral terms.
type formatCase struct {
	name    string
	path    string
	headers map[string]string
	body    func(turn) string
	read    func(t *testing.T, data []byte) neutral
}

var formats = []formatCase{
	{
		name: "chat", path: "/v1/chat/completions", headers: map[string]string{"Authorization": "Bearer k"},
		body: func(c turn) string {
			b := `{"model":"m1","messages":[{"role":"system","content":"` + c.system + `"},{"role":"user","content":"` + c.user + `"}]`
			if c.maxTokens > 0 {
				b += `,"max_completion_tokens":` + strconv.Itoa(c.maxTokens)
			}
			if c.tools {
				b += `,"tools":` + toolsJSON
			}
			if c.think {
				b += `,"reasoning_effort":"low"`
			}
			return b + `}`
		},
		read: func(t *testing.T, data []byte) neutral {
			var r chatResp
			_ = json.Unmarshal(data, &r)
			n := neutral{Prompt: r.Usage.PromptTokens, Cached: r.Usage.PromptTokensDetails.CachedTokens,
				Output: r.Usage.CompletionTokens, Reasoning: r.Usage.CompletionTokensDetails.ReasoningTokens}
			_ = json.Unmarshal(r.Choices[0].Message.Content, &n.Text)
			for _, tc := range r.Choices[0].Message.ToolCalls {
				n.Calls = append(n.Calls, tc.Function.Name+tc.Function.Arguments)
			}
			n.Finish = map[string]string{"stop": "stop", "length": "length", "tool_calls": "tools"}[r.Choices[0].FinishReason]
			return n
		},
	},
	{
		name: "messages", path: "/v1/messages", headers: messagesHeaders,
		body: func(c turn) string {
			b := `{"model":"m1","system":"` + c.system + `","messages":[{"role":"user","content":"` + c.user + `"}]`
			max := 2048
			if c.maxTokens > 0 {
				max = c.maxTokens
			}
			b += `,"max_tokens":` + strconv.Itoa(max)
			if c.tools {
				b += `,"tools":` + messagesToolsJSON
			}
			if c.think {
				b += `,"thinking":{"type":"enabled","budget_tokens":1024}`
			}
			return b + `}`
		},
		read: func(t *testing.T, data []byte) neutral {
			var r struct {
				Content []struct {
					Type, Text, Thinking, Name string
					Input                      json.RawMessage
				}
				StopReason string `json:"stop_reason"`
				Usage      struct {
					Input  int `json:"input_tokens"`
					Create int `json:"cache_creation_input_tokens"`
					Read   int `json:"cache_read_input_tokens"`
					Output int `json:"output_tokens"`
				}
			}
			_ = json.Unmarshal(data, &r)
			n := neutral{Prompt: r.Usage.Input + r.Usage.Create + r.Usage.Read, Cached: r.Usage.Read, Output: r.Usage.Output}
			for _, b := range r.Content {
				switch b.Type {
				case "text":
					n.Text = b.Text
				case "thinking":
					n.Think, n.Reasoning = countWords(b.Thinking), countWords(b.Thinking)
				case "tool_use":
					n.Calls = append(n.Calls, b.Name+string(b.Input))
				}
			}
			n.Finish = map[string]string{"end_turn": "stop", "max_tokens": "length", "tool_use": "tools"}[r.StopReason]
			return n
		},
	},
	{
		name: "gemini", path: "/v1beta/models/m1:generateContent", headers: map[string]string{"x-goog-api-key": "k"},
		body: func(c turn) string {
			b := `{"systemInstruction":{"parts":[{"text":"` + c.system + `"}]},` + userContents(c.user)
			var gen []string
			if c.maxTokens > 0 {
				gen = append(gen, `"maxOutputTokens":`+strconv.Itoa(c.maxTokens))
			}
			if c.think {
				gen = append(gen, `"thinkingConfig":{"thinkingBudget":1024,"includeThoughts":true}`)
			}
			if gen != nil {
				b += `,"generationConfig":{` + strings.Join(gen, ",") + `}`
			}
			if c.tools {
				b += `,"tools":` + geminiToolsJSON
			}
			return b + `}`
		},
		read: func(t *testing.T, data []byte) neutral {
			var r struct {
				Candidates []struct {
					Content struct {
						Parts []struct {
							Text         string
							Thought      bool
							FunctionCall *struct {
								Name string
								Args json.RawMessage
							}
						}
					}
					FinishReason string
				}
				UsageMetadata struct {
					Prompt     int `json:"promptTokenCount"`
					Candidates int `json:"candidatesTokenCount"`
					Cached     int `json:"cachedContentTokenCount"`
					Thoughts   int `json:"thoughtsTokenCount"`
				}
			}
			_ = json.Unmarshal(data, &r)
			u := r.UsageMetadata
			n := neutral{Prompt: u.Prompt, Cached: u.Cached, Output: u.Candidates + u.Thoughts, Reasoning: u.Thoughts}
			for _, p := range r.Candidates[0].Content.Parts {
				switch {
				case p.FunctionCall != nil:
					n.Calls = append(n.Calls, p.FunctionCall.Name+string(p.FunctionCall.Args))
				case p.Thought:
					n.Think = countWords(p.Text)
				default:
					n.Text = p.Text
				}
			}
			n.Finish = map[string]string{"STOP": "stop", "MAX_TOKENS": "length"}[r.Candidates[0].FinishReason]
			if n.Calls != nil {
				n.Finish = "tools" // Gemini says STOP; the calls say tools
			}
			return n
		},
	},
	{
		name: "responses", path: "/v1/responses", headers: map[string]string{"Authorization": "Bearer k"},
		body: func(c turn) string {
			b := `{"model":"m1","instructions":"` + c.system + `","input":"` + c.user + `"`
			if c.maxTokens > 0 {
				b += `,"max_output_tokens":` + strconv.Itoa(c.maxTokens)
			}
			if c.tools {
				b += `,"tools":` + responsesToolsJSON
			}
			if c.think {
				b += `,"reasoning":{"effort":"low","summary":"auto"}`
			}
			return b + `}`
		},
		read: func(t *testing.T, data []byte) neutral {
			var r struct {
				Status string
				Output []struct {
					Type, Name, Arguments string
					Content               []struct{ Text string }
					Summary               []struct{ Text string }
				}
				Usage struct {
					Input        int `json:"input_tokens"`
					InputDetails struct {
						Cached int `json:"cached_tokens"`
					} `json:"input_tokens_details"`
					Output        int `json:"output_tokens"`
					OutputDetails struct {
						Reasoning int `json:"reasoning_tokens"`
					} `json:"output_tokens_details"`
				}
			}
			_ = json.Unmarshal(data, &r)
			n := neutral{Prompt: r.Usage.Input, Cached: r.Usage.InputDetails.Cached, Output: r.Usage.Output,
				Reasoning: r.Usage.OutputDetails.Reasoning, Finish: "stop"}
			for _, it := range r.Output {
				switch it.Type {
				case "message":
					n.Text = it.Content[0].Text
				case "reasoning":
					n.Think = countWords(it.Summary[0].Text)
				case "function_call":
					n.Calls = append(n.Calls, it.Name+it.Arguments)
					n.Finish = "tools"
				}
			}
			if r.Status == "incomplete" {
				n.Finish = "length"
			}
			return n
		},
	},
}

func TestFormatsGiveTheSameAnswer(t *testing.T) {
	_, base := startSim(t)
	tests := []struct {
		name string
		turn turn
		want neutral
	}{
		{"text with cache", turn{system: "Be brief", user: "Hello there cached 2 reply with 5 words"},
			neutral{Text: "Simulated reply from m1. alpha", Finish: "stop", Prompt: 10, Cached: 2, Output: 5}},
		{"output cap", turn{system: "Be brief", user: "reply with 30 words", maxTokens: 17},
			neutral{Text: "Simulated reply from m1. " + sixteen + " mike", Finish: "length", Prompt: 6, Output: 17}},
		{"parallel tools", turn{system: "Be brief", user: "call them in parallel", tools: true},
			neutral{Calls: []string{"get_weather" + weatherArgs, "clock" + clockArgs, "ping{}"}, Finish: "tools", Prompt: 6, Output: 9}},
		{"thinking", turn{system: "Be brief", user: "think then reply with 2 words", think: true},
			neutral{Text: "Simulated reply", Finish: "stop", Prompt: 8, Output: 10, Reasoning: 8, Think: 8}},
	}
	for _, tc := range tests {
		for _, f := range formats {
			t.Run(tc.name+"/"+f.name, func(t *testing.T) {
				resp, data := callHeaders(t, http.MethodPost, base+f.path, f.body(tc.turn), f.headers)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d: %s", resp.StatusCode, data)
				}
				want := tc.want
				if f.name == "chat" {
					want.Think = 0 // OpenAI never returns reasoning text
				}
				if got := f.read(t, data); !reflect.DeepEqual(got, want) {
					t.Errorf("got  %+v\nwant %+v\nbody %s", got, want, data)
				}
			})
		}
	}
}

func TestInjectedFailuresUseEachFormatsEnvelope(t *testing.T) {
	s, base := startSim(t)
	messagesErr := func(typ, msg string) string {
		return `{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"}}`
	}
	geminiErr := func(code int, status, msg string, details string) string {
		return fmt.Sprintf(`{"error":{"code":%d,"message":%q,"status":%q%s}}`, code, msg, status, details)
	}
	openAIErr := func(typ, code, msg string) string {
		c := "null"
		if code != "" {
			c = `"` + code + `"`
		}
		return `{"error":{"message":"` + msg + `","type":"` + typ + `","param":null,"code":` + c + `}}`
	}
	retry := `,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]`
	tests := []struct {
		format     string
		status     int
		retryAfter int
		body       string
	}{
		{"messages", 429, 7, messagesErr("rate_limit_error", "Number of requests has exceeded your rate limit (simulated). Please try again later.")},
		{"messages", 500, 0, messagesErr("api_error", "Internal server error (simulated).")},
		{"messages", 503, 0, messagesErr("api_error", "Internal server error (simulated).")},
		{"messages", 529, 3, messagesErr("overloaded_error", "Overloaded")},
		{"messages", 504, 0, messagesErr("timeout_error", "Request timed out (simulated).")},
		{"messages", 402, 0, messagesErr("billing_error", "Your credit balance is too low (simulated).")},
		{"messages", 403, 0, messagesErr("permission_error", "Your API key does not have permission to use the specified resource (simulated).")},
		{"messages", 404, 0, messagesErr("not_found_error", "model: not found (simulated)")},
		{"gemini", 429, 7, geminiErr(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota) (simulated).", retry)},
		{"gemini", 429, 0, geminiErr(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota) (simulated).", "")},
		{"gemini", 500, 0, geminiErr(500, "INTERNAL", "An internal error has occurred (simulated). Please retry or report in https://developers.generativeai.google/guide/troubleshooting", "")},
		{"gemini", 503, 1, geminiErr(503, "UNAVAILABLE", "The model is overloaded (simulated). Please try again later.", `,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1s"}]`)},
		{"gemini", 504, 0, geminiErr(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete (simulated).", "")},
		{"gemini", 403, 0, geminiErr(403, "PERMISSION_DENIED", "The caller does not have permission (simulated).", "")},
		{"gemini", 404, 0, geminiErr(404, "NOT_FOUND", "Requested entity was not found (simulated).", "")},
		{"gemini", 400, 0, geminiErr(400, "INVALID_ARGUMENT", "Request contains an invalid argument (simulated Bad Request).", "")},
		{"responses", 429, 7, openAIErr("rate_limit_error", "rate_limit_exceeded", "Rate limit reached for requests (simulated). Please try again later.")},
		{"responses", 500, 0, openAIErr("server_error", "", "The server had an error while processing your request (simulated).")},
		{"responses", 503, 0, openAIErr("service_unavailable_error", "", "The service is temporarily unavailable (simulated). Please try again later.")},
	}
	byName := map[string]formatCase{}
	for _, f := range formats {
		byName[f.name] = f
	}
	for _, tc := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%d/stream=%v", tc.format, tc.status, stream), func(t *testing.T) {
				f := byName[tc.format]
				s.SetBehavior("down", Behavior{FailStatus: tc.status, RetryAfter: tc.retryAfter})
				path, body := f.path, f.body(turn{system: "s", user: "hi"})
				if stream {
					body = strings.Replace(body, "{", `{"stream":true,`, 1)
					path = strings.Replace(path, ":generateContent", ":streamGenerateContent?alt=sse", 1)
				}
				resp, data := callHeaders(t, http.MethodPost, base+"/r/down"+path, body, f.headers)
				if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" {
					t.Fatalf("status %d Content-Type %q, want %d JSON", resp.StatusCode, resp.Header.Get("Content-Type"), tc.status)
				}
				if got, want := resp.Header.Get("Retry-After"), map[bool]string{true: strconv.Itoa(tc.retryAfter)}[tc.retryAfter > 0]; got != want {
					t.Errorf("Retry-After %q, want %q", got, want)
				}
				want := tc.body
				if tc.format == "messages" {
					want = strings.TrimSuffix(want, "}") + `,"request_id":"` + resp.Header.Get("request-id") + `"}`
				}
				assertJSON(t, data, want)
			})
		}
	}
}

func TestDropAfterChunksInEveryFormat(t *testing.T) {
	s, base := startSim(t)
	s.SetBehavior("flaky", Behavior{DropAfterChunks: 3})
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			path, body := f.path, strings.Replace(f.body(turn{system: "s", user: "hi"}), "{", `{"stream":true,`, 1)
			path = strings.Replace(path, ":generateContent", ":streamGenerateContent?alt=sse", 1)
			req, _ := http.NewRequest(http.MethodPost, base+"/r/flaky"+path, strings.NewReader(body))
			for k, v := range f.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var data []string
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "data:") {
					data = append(data, line)
				}
			}
			if !errors.Is(sc.Err(), io.ErrUnexpectedEOF) || len(data) != 3 {
				t.Errorf("read error %v after %d events, want unexpected EOF after 3", sc.Err(), len(data))
			}
		})
	}
}

// LongLineBytes puts one comment line of exactly that many bytes after LongLineAfterChunks
// events of every SSE stream, its ending the stream's own; the stream is otherwise what the
// route sends without it.
func TestLongLineInEveryFormat(t *testing.T) {
	s, base := startSim(t)
	s.SetBehavior("long", Behavior{LongLineBytes: 5000, LongLineAfterChunks: 2})
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			path, body := f.path, strings.Replace(f.body(turn{system: "s", user: "hi"}), "{", `{"stream":true,`, 1)
			path = strings.Replace(path, ":generateContent", ":streamGenerateContent?alt=sse", 1)
			_, plain := callHeaders(t, http.MethodPost, base+"/r/plain"+path, body, f.headers)
			resp, data := callHeaders(t, http.MethodPost, base+"/r/long"+path, body, f.headers)
			ending := "\n"
			if f.name == "gemini" {
				ending = "\r\n"
			}
			line := ":" + strings.Repeat("x", 4999) + ending
			events := strings.SplitAfterN(string(data), ending+ending, 3)
			if resp.StatusCode != http.StatusOK || len(events) != 3 || !strings.HasPrefix(events[2], line) {
				t.Fatalf("status %d; want the line after two events:\n%.300s", resp.StatusCode, data)
			}
			without := events[0] + events[1] + strings.TrimPrefix(events[2], line)
			if got, want := strings.Count(without, ending+ending), strings.Count(string(plain), ending+ending); got != want || strings.Contains(without, "xxx") {
				t.Fatalf("%d events besides the line, want the route's own %d:\n%s", got, want, without)
			}
		})
	}
}

func TestTokensPerSecondPacesEveryFormat(t *testing.T) {
	s, base := startSim(t)
	s.SetBehavior("slow", Behavior{TokensPerSecond: 400}) // one event per 2.5ms
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			path, body := f.path, strings.Replace(f.body(turn{system: "s", user: "reply with 10 words"}), "{", `{"stream":true,`, 1)
			path = strings.Replace(path, ":generateContent", ":streamGenerateContent?alt=sse", 1)
			start := time.Now()
			resp, data := callHeaders(t, http.MethodPost, base+"/r/slow"+path, body, f.headers)
			elapsed := time.Since(start)
			events := strings.Count(string(data), "data: ")
			if resp.StatusCode != http.StatusOK || events < 10 {
				t.Fatalf("status %d, %d events", resp.StatusCode, events)
			}
			// Event i is due i intervals after the first; a terminator ([DONE]) is not paced.
			if min := time.Duration(events-2) * 2500 * time.Microsecond; elapsed < min {
				t.Errorf("%d events in %v, want at least %v", events, elapsed, min)
			}
		})
	}
}

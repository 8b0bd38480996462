package api_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// googleError is Google's error envelope with the details the gateway adds.
type googleError struct {
	Error struct {
		Code    int               `json:"code"`
		Message string            `json:"message"`
		Status  string            `json:"status"`
		Details []json.RawMessage `json:"details"`
	} `json:"error"`
}

// detail is the first entry of details with @type ending in typ ("RequestInfo", …).
func (g googleError) detail(typ string) map[string]any {
	for _, d := range g.Error.Details {
		var m map[string]any
		if json.Unmarshal(d, &m) == nil && strings.HasSuffix(m["@type"].(string), "google.rpc."+typ) {
			return m
		}
	}
	return nil
}

func readGoogleError(t *testing.T, resp *http.Response) googleError {
	t.Helper()
	raw := nodetest.Read(t, resp)
	var g googleError
	if err := json.Unmarshal(raw, &g); err != nil || g.Error.Status == "" {
		t.Fatalf("not a Google error envelope: %d %s", resp.StatusCode, raw)
	}
	if g.Error.Code != resp.StatusCode {
		t.Errorf("error.code %d, HTTP status %d", g.Error.Code, resp.StatusCode)
	}
	if ri := g.detail("RequestInfo"); ri == nil || ri["requestId"] != resp.Header.Get("X-Request-Id") || ri["requestId"] == "" {
		t.Errorf("RequestInfo %v, X-Request-Id %q", ri, resp.Header.Get("X-Request-Id"))
	}
	return g
}

const geminiHello = `{"contents":[{"role":"user","parts":[{"text":"Hello, reply with 4 words"}]}]}`

// geminiPost posts to /v1beta/models/<model>:<method> with the key in x-goog-api-key.
func geminiPost(env *nodetest.Env, key, modelMethod, body string, headers ...string) *http.Response {
	return env.Post("/v1beta/models/"+modelMethod, "", body, append([]string{"x-goog-api-key", key}, headers...)...)
}

type geminiAnswer struct {
	Candidates []struct {
		Content struct {
			Parts []struct {
				Text         string          `json:"text"`
				Thought      bool            `json:"thought"`
				FunctionCall json.RawMessage `json:"functionCall"`
			} `json:"parts"`
			Role string `json:"role"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount     int `json:"promptTokenCount"`
		CandidatesTokenCount int `json:"candidatesTokenCount"`
		TotalTokenCount      int `json:"totalTokenCount"`
	} `json:"usageMetadata"`
	ModelVersion string `json:"modelVersion"`
	ResponseID   string `json:"responseId"`
}

func (a geminiAnswer) text() string {
	var s string
	for _, c := range a.Candidates {
		for _, p := range c.Content.Parts {
			if !p.Thought {
				s += p.Text
			}
		}
	}
	return s
}

var modelUpstreams = map[string]string{"chat": "up-", "msg": "up-m", "gem": "up-g", "resp": "up-r"}

// sameRoute names the chat model's two routes alike, so answers from either compare equal.
var sameRoute = strings.NewReplacer("up-a.", "up-?.", "up-b.", "up-?.")

func TestGeminiKeySources(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	path := "/v1beta/models/chat:generateContent"
	cases := []struct {
		name    string
		path    string
		headers []string
		status  int
	}{
		{"x-goog-api-key", path, []string{"x-goog-api-key", env.Key}, 200},
		{"key query parameter", path + "?key=" + env.Key, nil, 200},
		{"Authorization Bearer (Gemini CLI's bearer mode)", path, []string{"Authorization", "Bearer " + env.Key}, 200},
		{"no key", path, nil, 401},
		{"unknown key", path, []string{"x-goog-api-key", "sk-token-" + strings.Repeat("x", 48)}, 401},
		{"not a gateway key", path + "?key=AIzaSyNotOurs", nil, 401},
		{"the query key is only the Gemini API's", "/v1/chat/completions?key=" + env.Key, nil, 401},
		{"x-goog-api-key is only the Gemini API's", "/v1/chat/completions", []string{"x-goog-api-key", env.Key}, 401},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := geminiHello
			if strings.HasPrefix(c.path, "/v1/") {
				body = chatBody("chat")
			}
			resp := env.Post(c.path, "", body, c.headers...)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, nodetest.Read(t, resp))
			}
			if c.status == 200 || strings.HasPrefix(c.path, "/v1/") {
				nodetest.Read(t, resp)
				return
			}
			g := readGoogleError(t, resp)
			if g.Error.Status != "UNAUTHENTICATED" || g.detail("ErrorInfo")["reason"] != "INVALID_API_KEY" {
				t.Errorf("%+v", g)
			}
		})
	}
}

// TestGeminiGenerateEveryUpstream: a gemini client reaches a model of every upstream format,
// plain, streamed (alt=sse) and as the JSON array of a stream without alt=sse; every answer
// names the client's model, and the request log holds its usage.
func TestGeminiGenerateEveryUpstream(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	for _, model := range []string{"chat", "msg", "gem", "resp"} {
		t.Run(model, func(t *testing.T) {
			resp := geminiPost(env, env.Key, model+":generateContent", geminiHello)
			raw := nodetest.Read(t, resp)
			var whole geminiAnswer
			if err := json.Unmarshal(raw, &whole); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			text := sameRoute.Replace(whole.text())
			if !strings.HasPrefix(text, "Simulated reply from "+modelUpstreams[model]) || len(strings.Fields(text)) != 4 {
				t.Errorf("text %q", text)
			}
			if whole.ModelVersion != model || whole.ResponseID == "" || whole.Candidates[0].FinishReason != "STOP" ||
				whole.UsageMetadata == nil || whole.UsageMetadata.CandidatesTokenCount != 4 || whole.UsageMetadata.PromptTokenCount == 0 {
				t.Errorf("answer %s", raw)
			}

			resp = geminiPost(env, env.Key, model+":streamGenerateContent?alt=sse", geminiHello)
			raw = nodetest.Read(t, resp)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("%d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
			}
			var streamed strings.Builder
			var last geminiAnswer
			for _, line := range strings.Split(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\n") {
				if line == "" {
					continue
				}
				data, ok := strings.CutPrefix(line, "data: ")
				if !ok {
					t.Fatalf("a line that is not data: %q (go-genai fails on it)", line)
				}
				last = geminiAnswer{}
				if err := json.Unmarshal([]byte(data), &last); err != nil || last.ModelVersion != model {
					t.Fatalf("chunk %s", data)
				}
				streamed.WriteString(sameRoute.Replace(last.text()))
			}
			if streamed.String() != text || last.Candidates[0].FinishReason != "STOP" || last.UsageMetadata.CandidatesTokenCount != 4 {
				t.Errorf("stream %q, last %+v; want %q", streamed.String(), last, text)
			}

			resp = geminiPost(env, env.Key, model+":streamGenerateContent", geminiHello)
			raw = nodetest.Read(t, resp)
			var array []geminiAnswer
			if err := json.Unmarshal(raw, &array); err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("not a JSON array: %d %v %s", resp.StatusCode, err, raw)
			}
			var fromArray string
			for _, a := range array {
				fromArray += sameRoute.Replace(a.text())
			}
			if fromArray != text || array[len(array)-1].Candidates[0].FinishReason != "STOP" {
				t.Errorf("array text %q, want %q: %s", fromArray, text, raw)
			}
		})
	}
	entries := usage(t, env)
	if len(entries) != 12 {
		t.Fatalf("%d log entries, want 12", len(entries))
	}
	for _, e := range entries {
		if e.ClientFormat != "gemini" || e.Status != 200 || e.OutputTokens != 4 || e.InputTokens == 0 {
			t.Errorf("log entry %+v", e)
		}
	}
}

// On a gemini route a gemini client's body is passed as it is (members IR has no place for
// included), the route's model goes in the path, and the answer names the client's model.
func TestGeminiSameFormatPassThrough(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	body := `{"contents":[{"role":"user","parts":[{"text":"Hello, reply with 3 words"}]}],
		"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}],"generationConfig":{"seed":7}}`
	resp := geminiPost(env, env.Key, "gem:generateContent", body)
	raw := nodetest.Read(t, resp)
	if resp.StatusCode != 200 || resp.Header.Get("X-Modelgate-Dropped") != "" {
		t.Fatalf("%d dropped=%q %s", resp.StatusCode, resp.Header.Get("X-Modelgate-Dropped"), raw)
	}
	if got := string(env.Sim.LastRequest("g")); got != body {
		t.Errorf("the route got %s\nwant the client's body %s", got, body)
	}
	if !strings.Contains(string(raw), `"modelVersion":"gem"`) || strings.Contains(string(raw), "up-g\"") {
		t.Errorf("answer %s", raw)
	}
	// Another format reports what it cannot express.
	resp = geminiPost(env, env.Key, "msg:generateContent", body)
	nodetest.Read(t, resp)
	if got := resp.Header.Get("X-Modelgate-Dropped"); got != "generationConfig.seed, safetySettings" {
		t.Errorf("X-Modelgate-Dropped %q", got)
	}
}

// A tool call and its result travel both ways: the call comes back with an id and args, the
// client answers it, and the model's text follows.
func TestGeminiToolRoundTrip(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	tools := `"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Weather",
		"parametersJsonSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}]`
	for _, model := range []string{"chat", "msg", "gem", "resp"} {
		t.Run(model, func(t *testing.T) {
			resp := geminiPost(env, env.Key, model+":generateContent",
				`{"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]}],`+tools+`}`)
			raw := nodetest.Read(t, resp)
			var a geminiAnswer
			json.Unmarshal(raw, &a)
			if resp.StatusCode != 200 || len(a.Candidates) != 1 || len(a.Candidates[0].Content.Parts) == 0 {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			var call struct {
				ID   string          `json:"id"`
				Name string          `json:"name"`
				Args json.RawMessage `json:"args"`
			}
			var modelTurn json.RawMessage
			for _, p := range a.Candidates[0].Content.Parts {
				if p.FunctionCall != nil {
					json.Unmarshal(p.FunctionCall, &call)
				}
			}
			var whole struct {
				Candidates []struct {
					Content json.RawMessage `json:"content"`
				} `json:"candidates"`
			}
			json.Unmarshal(raw, &whole)
			modelTurn = whole.Candidates[0].Content
			if call.Name != "get_weather" || string(call.Args) != `{"city":"sample"}` || a.Candidates[0].FinishReason != "STOP" {
				t.Fatalf("call %+v in %s", call, raw)
			}
			if model != "gem" && call.ID == "" {
				t.Errorf("a converted call carries the IR call id: %s", raw)
			}
			id := ""
			if call.ID != "" {
				id = `"id":"` + call.ID + `",`
			}
			next := `{"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]},` + string(modelTurn) + `,
				{"role":"user","parts":[{"functionResponse":{` + id + `"name":"get_weather","response":{"output":"18 C"}}}]}],` + tools + `}`
			resp = geminiPost(env, env.Key, model+":generateContent", next)
			raw = nodetest.Read(t, resp)
			var final geminiAnswer
			json.Unmarshal(raw, &final)
			if resp.StatusCode != 200 || !strings.HasPrefix(final.text(), "Simulated reply from") {
				t.Fatalf("after the result: %d %s", resp.StatusCode, raw)
			}
		})
	}
}

func TestGeminiCountTokens(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	contents := `{"contents":[{"parts":[{"text":"Hello there"}]}]}`
	cases := []struct {
		name, model, body string
		want              int
	}{
		// 4 per message + ceil(11 bytes / 3)
		{"estimate", "chat", contents, 8},
		{"wrapped request", "chat", `{"generateContentRequest":{"model":"models/chat","contents":[{"parts":[{"text":"Hello there"}]}]}}`, 8},
		// o200k_base: "Hello", " there"
		{"tokenizer", "resp", contents, 6},
	}
	for _, c := range cases {
		calls := env.Sim.Calls("a") + env.Sim.Calls("r")
		resp := geminiPost(env, env.Key, c.model+":countTokens", c.body)
		raw := nodetest.Read(t, resp)
		if resp.StatusCode != 200 || string(raw) != `{"totalTokens":`+itoa(c.want)+"}\n" {
			t.Errorf("%s: %d %s, want %d tokens", c.name, resp.StatusCode, raw, c.want)
		}
		if env.Sim.Calls("a")+env.Sim.Calls("r") != calls {
			t.Errorf("%s: countTokens reached an upstream", c.name)
		}
	}
	g := readGoogleError(t, geminiPost(env, env.Key, "nope:countTokens", contents))
	if g.Error.Status != "NOT_FOUND" || !strings.Contains(g.Error.Message, "/v1beta/models") {
		t.Errorf("%+v", g)
	}
}

func itoa(n int) string { return strings.TrimSpace(string(must(json.Marshal(n)))) }

func must[T any](v T, _ error) T { return v }

func TestGeminiModelList(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	restricted := env.NewKey(persistence.KeySpec{Name: "r", Models: []string{"msg", "embed"}})
	zdr := env.NewKey(persistence.KeySpec{Name: "z", ZDR: true})
	list := func(key string) []string {
		resp := env.Do(http.MethodGet, "/v1beta/models", "", "", "x-goog-api-key", key)
		var out struct {
			Models []struct {
				Name    string   `json:"name"`
				Methods []string `json:"supportedGenerationMethods"`
			} `json:"models"`
		}
		raw := nodetest.Read(t, resp)
		if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, raw)
		}
		var names []string
		for _, m := range out.Models {
			names = append(names, m.Name)
			if !reflect.DeepEqual(m.Methods, []string{"generateContent", "streamGenerateContent", "countTokens"}) {
				t.Errorf("%s methods %q", m.Name, m.Methods)
			}
		}
		return names
	}
	if got, want := list(env.Key), []string{"models/chat", "models/gem", "models/msg", "models/open-only", "models/resp"}; !reflect.DeepEqual(got, want) {
		t.Errorf("all chat models: %q, want %q", got, want)
	}
	if got := list(restricted); !reflect.DeepEqual(got, []string{"models/msg"}) {
		t.Errorf("restricted key: %q", got)
	}
	if got := list(zdr); !reflect.DeepEqual(got, []string{"models/chat"}) {
		t.Errorf("ZDR key: %q", got)
	}

	resp := env.Do(http.MethodGet, "/v1beta/models/msg", "", "", "x-goog-api-key", env.Key)
	raw := nodetest.Read(t, resp)
	want := `{"name":"models/msg","baseModelId":"msg","displayName":"msg","description":"served by modelgate; owned by modelgate","outputTokenLimit":512,` +
		`"supportedGenerationMethods":["generateContent","streamGenerateContent","countTokens"],"thinking":true}` + "\n"
	if resp.StatusCode != 200 || string(raw) != want {
		t.Errorf("%d %s\nwant %s", resp.StatusCode, raw, want)
	}
	for _, c := range []struct{ name, key string }{{"unknown", env.Key}, {"img", env.Key}, {"chat", restricted}} {
		g := readGoogleError(t, env.Do(http.MethodGet, "/v1beta/models/"+c.name, "", "", "x-goog-api-key", c.key))
		if g.Error.Status != "NOT_FOUND" {
			t.Errorf("%s: %+v", c.name, g)
		}
	}
}

// Errors come in Google's envelope with the status name a Google client expects, the
// request id as a RequestInfo and the limit details as RetryInfo and ErrorInfo.
func TestGeminiErrors(t *testing.T) {
	env := nodetest.Start(t, plansCatalog, nodetest.Options{Plan: "burst5"})
	restricted := env.NewKey(persistence.KeySpec{Name: "r", Models: []string{"msg"}})
	cases := []struct {
		name, key, action, body string
		status                  int
		rpc, reason, field      string
	}{
		{"unknown model", env.Key, "nope:generateContent", geminiHello, 404, "NOT_FOUND", "MODEL_NOT_FOUND", ""},
		{"restricted key", restricted, "chat:generateContent", geminiHello, 403, "PERMISSION_DENIED", "MODEL_NOT_ALLOWED", ""},
		{"image model", env.Key, "img:generateContent", geminiHello, 400, "INVALID_ARGUMENT", "MODEL_NOT_SUPPORTED_ON_ENDPOINT", "model"},
		{"bad role", env.Key, "chat:generateContent", `{"contents":[{"role":"bot","parts":[{"text":"x"}]}]}`, 400, "INVALID_ARGUMENT", "INVALID_REQUEST", "contents[0].role"},
		{"not JSON", env.Key, "chat:streamGenerateContent?alt=sse", `{"contents":`, 400, "INVALID_ARGUMENT", "INVALID_REQUEST", ""},
		{"unknown method", env.Key, "chat:embedContent", `{}`, 404, "NOT_FOUND", "UNKNOWN_METHOD", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := readGoogleError(t, geminiPost(env, c.key, c.action, c.body))
			if g.Error.Code != c.status || g.Error.Status != c.rpc || g.detail("ErrorInfo")["reason"] != c.reason {
				t.Errorf("%+v", g)
			}
			br := g.detail("BadRequest")
			if c.field == "" && br != nil || c.field != "" && (br == nil || !strings.Contains(string(must(json.Marshal(br))), `"field":"`+c.field+`"`)) {
				t.Errorf("BadRequest %v, want field %q", br, c.field)
			}
		})
	}
	t.Run("burst limit", func(t *testing.T) {
		for range 5 {
			resp := geminiPost(env, env.Key, "chat:generateContent", geminiHello)
			nodetest.Read(t, resp)
		}
		resp := geminiPost(env, env.Key, "chat:generateContent", geminiHello)
		g := readGoogleError(t, resp)
		retry := resp.Header.Get("Retry-After")
		info := g.detail("ErrorInfo")
		meta, _ := info["metadata"].(map[string]any)
		if resp.StatusCode != 429 || g.Error.Status != "RESOURCE_EXHAUSTED" || info["reason"] != "BURST_LIMIT_EXCEEDED" ||
			g.detail("RetryInfo")["retryDelay"] != retry+"s" || meta["max_rpm"] != "5" || meta["retry_after_seconds"] != retry {
			t.Errorf("%d Retry-After=%q %+v", resp.StatusCode, retry, g)
		}
	})
}

func TestGeminiUpstreamFailures(t *testing.T) {
	var env *nodetest.Env
	t.Run("every route failed", func(t *testing.T) {
		env = nodetest.Start(t, "", nodetest.Options{})
		env.Sim.SetBehavior("m", simulator.Behavior{FailStatus: 500})
		g := readGoogleError(t, geminiPost(env, env.Key, "msg:generateContent", geminiHello))
		if g.Error.Code != 502 || g.Error.Status != "INTERNAL" {
			t.Errorf("%+v", g)
		}
	})
	t.Run("the route's verdict on the request", func(t *testing.T) {
		env = nodetest.Start(t, "", nodetest.Options{})
		env.Sim.SetBehavior("r", simulator.Behavior{FailStatus: 400})
		resp := geminiPost(env, env.Key, "resp:generateContent", geminiHello)
		raw := nodetest.Read(t, resp)
		var g googleError
		if json.Unmarshal(raw, &g) != nil || resp.StatusCode != 400 || g.Error.Status != "INVALID_ARGUMENT" || g.Error.Message == "" {
			t.Errorf("%d %s", resp.StatusCode, raw)
		}
	})
	for _, model := range []string{"msg", "gem"} {
		t.Run("in-stream error from "+model, func(t *testing.T) {
			env = nodetest.Start(t, "", nodetest.Options{})
			resp := geminiPost(env, env.Key, model+":streamGenerateContent?alt=sse",
				`{"contents":[{"role":"user","parts":[{"text":"please midstream error"}]}]}`)
			raw := string(nodetest.Read(t, resp))
			lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(raw, "\r\n", "\n")), "\n")
			last := lines[len(lines)-1]
			var g googleError
			if resp.StatusCode != 200 || json.Unmarshal([]byte(strings.TrimPrefix(last, "data: ")), &g) != nil ||
				!strings.HasPrefix(last, "data: {\"error\":") || g.Error.Status != "UNAVAILABLE" {
				t.Errorf("%d %s", resp.StatusCode, raw)
			}
		})
	}
	t.Run("stream cut", func(t *testing.T) {
		env = nodetest.Start(t, "", nodetest.Options{})
		env.Sim.SetBehavior("m", simulator.Behavior{DropAfterChunks: 4})
		resp := geminiPost(env, env.Key, "msg:streamGenerateContent?alt=sse", geminiHello)
		raw := string(nodetest.Read(t, resp))
		if !strings.Contains(raw, `data: {"error":{"code":502,`) || !strings.Contains(raw, `"status":"INTERNAL"`) || !strings.Contains(raw, resp.Header.Get("X-Request-Id")) {
			t.Errorf("%s", raw)
		}
	})
}

// Gemini CLI is an interactive client; the bare Google SDK is not, on a plan for such clients.
func TestGeminiClientClassification(t *testing.T) {
	env := nodetest.Start(t, plansCatalog, nodetest.Options{Plan: "strict"})
	resp := geminiPost(env, env.Key, "chat:generateContent", geminiHello, "User-Agent", "GeminiCLI-tui/0.61.0/chat (linux; x64; terminal)")
	if raw := nodetest.Read(t, resp); resp.StatusCode != 200 {
		t.Fatalf("Gemini CLI: %d %s", resp.StatusCode, raw)
	}
	g := readGoogleError(t, geminiPost(env, env.Key, "chat:generateContent", geminiHello, "User-Agent", "google-genai-sdk/1.77.0 gl-go/go1.26.8"))
	if g.Error.Code != 403 || g.Error.Status != "PERMISSION_DENIED" || g.detail("ErrorInfo")["reason"] != "CODING_AGENT_REQUIRED" {
		t.Errorf("%+v", g)
	}
}

// Through the gateway: a Gemini signature on a text part is named as lost for clients
// that cannot carry it, and kept for gemini clients.
func TestTextSignatureLossReported(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	resp := env.Post("/v1/chat/completions", env.Key, `{"model":"gem","reasoning_effort":"high","messages":[{"role":"user","content":"Hello, reply with 3 words"}]}`)
	nodetest.Read(t, resp)
	if got := resp.Header.Get("X-Modelgate-Dropped"); !strings.Contains(got, "answer.text.signature") {
		t.Errorf("chat client: X-Modelgate-Dropped %q", got)
	}
	resp = geminiPost(env, env.Key, "gem:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"Hello, reply with 3 words"}]}],"generationConfig":{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":4096}}}`)
	raw := nodetest.Read(t, resp)
	if resp.Header.Get("X-Modelgate-Dropped") != "" || !strings.Contains(string(raw), `"thoughtSignature"`) {
		t.Errorf("gemini client: dropped %q, answer %s", resp.Header.Get("X-Modelgate-Dropped"), raw)
	}
}

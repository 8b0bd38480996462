package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// Auto models, fallback lists and catalog fallbacks, over the simulator.
//
// auto picks the cheapest candidate that can serve: nt (no tools) is the cheapest, then sm
// (a short context), then lg (a long context, the only ZDR one, on a messages route). sm, lg
// and nt count 2, 3 and 1 plan calls; auto counts 1 whatever it picks.
const routingCatalog = `
server: {first_byte_timeout: 2s, idle_stream_timeout: 2s, max_request_models: 3}
models:
  - id: auto
    kind: chat
    auto: {policy: cheapest, candidates: [small, long, notools]}
  - id: auto-tools-only
    kind: chat
    auto: {candidates: [notools]}
  - id: auto-limits
    kind: chat
    auto: {candidates: [long, small], max_price: {prompt: "0.0000015", completion: "0.00001"}}
  - id: small
    kind: chat
    context_length: 300
    max_output_tokens: 50
    quota_multiplier: 2
    pricing: {prompt: "0.000001", completion: "0.000002"}
    routes:
      - {id: sm, format: chat, base_url: "{{SIM}}/r/sm/v1", upstream_model: up-sm, credential_env: NODETEST_SIM_KEY}
  - id: long
    kind: chat
    context_length: 100000
    max_output_tokens: 100
    quota_multiplier: 3
    pricing: {prompt: "0.000002", completion: "0.000004"}
    routes:
      - {id: lg, format: messages, base_url: "{{SIM}}/r/lg/v1", upstream_model: up-lg, credential_env: NODETEST_SIM_KEY, zdr: true}
  - id: notools
    kind: chat
    tools: false
    context_length: 100000
    max_output_tokens: 100
    pricing: {prompt: "0.0000001", completion: "0.0000002"}
    routes:
      - {id: nt, format: chat, base_url: "{{SIM}}/r/nt/v1", upstream_model: up-nt, credential_env: NODETEST_SIM_KEY}
  - id: primary
    kind: chat
    max_output_tokens: 100
    pricing: {prompt: "0.000001", completion: "0.000002"}
    fallbacks: [gemm]
    routes:
      - {id: pm, format: messages, base_url: "{{SIM}}/r/pm/v1", upstream_model: up-pm, credential_env: NODETEST_SIM_KEY}
  - id: gemm
    kind: chat
    max_output_tokens: 100
    quota_multiplier: 2
    pricing: {prompt: "0.000001", completion: "0.000004"}
    routes:
      - {id: gm, format: gemini, base_url: "{{SIM}}/r/gm/v1beta", upstream_model: up-gm, credential_env: NODETEST_SIM_KEY}
plans:
  - {name: routing, window_requests: 100, burst_rpm: 100, allow_automated: true}
`

var (
	routingSeq atomic.Int64
	timeZero   time.Time
)

// routingKey is a fresh account on the routing plan and a key of spec.
func routingKey(t *testing.T, env *nodetest.Env, spec persistence.KeySpec) (acct, key string) {
	t.Helper()
	a, err := env.Node.Store.CreateAccount(fmt.Sprintf("routing%d@example.com", routingSeq.Add(1)), "routing")
	if err != nil {
		t.Fatal(err)
	}
	spec.Name = "k"
	_, secret, err := env.Node.Store.CreateKey(a.ID, spec)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID, secret
}

const toolsJSON = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`

func routingBody(model, extra string, words int) string {
	text := "hi" + strings.Repeat(" word", words)
	if extra != "" {
		extra = "," + extra
	}
	return `{"model":"` + model + `","max_tokens":20,"messages":[{"role":"user","content":"` + text + `"}]` + extra + `}`
}

// served is what one call got: its status, the model its answer and header name, and the
// account's log entry and plan units.
type served struct {
	status      int
	answerModel string
	header      string
	logModel    string
	route       string
	units       int64
	body        string
}

func callRouting(t *testing.T, env *nodetest.Env, acct, key, body string) served {
	t.Helper()
	resp := env.Post("/v1/chat/completions", key, body)
	raw := nodetest.Read(t, resp)
	out := served{status: resp.StatusCode, header: resp.Header.Get("X-Modelgate-Model"), body: string(raw)}
	var answer struct {
		Model string `json:"model"`
	}
	if strings.HasPrefix(out.body, "data:") {
		for _, line := range strings.Split(out.body, "\n") {
			if m := strings.TrimPrefix(line, "data: "); m != line && m != "[DONE]" && json.Unmarshal([]byte(m), &answer) == nil && answer.Model != "" {
				break
			}
		}
	} else {
		json.Unmarshal(raw, &answer)
	}
	out.answerModel = answer.Model
	env.WaitIdle()
	logs, err := env.Node.Store.ListLog(acct, timeZero, timeZero, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(logs); n > 0 {
		out.logModel, out.route = logs[n-1].Model, logs[n-1].Route
	}
	rec, _, err := env.Node.Store.LoadQuota(acct)
	if err != nil {
		t.Fatal(err)
	}
	out.units = rec.WindowUsed
	return out
}

func TestAutoPicksACandidateThatCanServe(t *testing.T) {
	env := nodetest.Start(t, routingCatalog, nodetest.Options{})
	cases := []struct {
		name   string
		key    persistence.KeySpec
		body   string
		model  string // the candidate that serves
		route  string
		others []string // routes that must not be called
	}{
		{"the cheapest that can", persistence.KeySpec{}, routingBody("auto", "", 0), "notools", "nt", []string{"sm", "lg"}},
		{"tools skip the candidate without them", persistence.KeySpec{}, routingBody("auto", toolsJSON, 0), "small", "sm", []string{"nt", "lg"}},
		{"a long input fits only the long context", persistence.KeySpec{}, routingBody("auto", toolsJSON, 400), "long", "lg", []string{"nt", "sm"}},
		{"a ZDR key gets only a ZDR candidate", persistence.KeySpec{ZDR: true}, routingBody("auto", "", 0), "long", "lg", []string{"nt", "sm"}},
		{"under the price ceiling", persistence.KeySpec{}, routingBody("auto-limits", "", 0), "small", "sm", []string{"nt", "lg"}},
		{"a key restricted to one candidate gets it", persistence.KeySpec{Models: []string{"small"}}, routingBody("auto", "", 0), "small", "sm", []string{"nt", "lg"}},
		{"streamed", persistence.KeySpec{}, strings.Replace(routingBody("auto", toolsJSON, 0), `"max_tokens":20`, `"max_tokens":20,"stream":true`, 1), "small", "sm", []string{"nt", "lg"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := map[string]int64{}
			for _, r := range append(tc.others, tc.route) {
				before[r] = env.Sim.Calls(r)
			}
			acct, key := routingKey(t, env, tc.key)
			got := callRouting(t, env, acct, key, tc.body)
			want := served{status: 200, answerModel: tc.model, header: tc.model, logModel: tc.model, route: tc.route, units: 1000, body: got.body}
			if got != want {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
			if env.Sim.Calls(tc.route) != before[tc.route]+1 {
				t.Fatalf("route %s called %d times", tc.route, env.Sim.Calls(tc.route)-before[tc.route])
			}
			for _, r := range tc.others {
				if env.Sim.Calls(r) != before[r] {
					t.Fatalf("route %s was called", r)
				}
			}
		})
	}
}

func TestAutoZDRKeyNeverReachesANonZDRCandidate(t *testing.T) {
	env := nodetest.Start(t, routingCatalog, nodetest.Options{})
	env.Sim.SetBehavior("lg", simulator.Behavior{FailStatus: 500})
	acct, key := routingKey(t, env, persistence.KeySpec{ZDR: true})
	got := callRouting(t, env, acct, key, routingBody("auto", "", 0))
	if got.status != http.StatusBadGateway || env.Sim.Calls("nt") != 0 || env.Sim.Calls("sm") != 0 {
		t.Fatalf("status %d, nt %d, sm %d calls: %s", got.status, env.Sim.Calls("nt"), env.Sim.Calls("sm"), got.body)
	}
	// A key that is not ZDR fails over from the failing candidate to the next.
	env.Sim.SetBehavior("nt", simulator.Behavior{FailStatus: 500})
	acct, key = routingKey(t, env, persistence.KeySpec{})
	got = callRouting(t, env, acct, key, routingBody("auto", "", 0))
	if got.status != 200 || got.logModel != "small" || got.answerModel != "small" || got.units != 1000 {
		t.Fatalf("after nt failed: %+v", got)
	}
}

func TestFallbackListCrossesFormats(t *testing.T) {
	cases := []struct {
		name, body string
	}{
		{"the client's list", `{"model":"primary","models":["gemm"],"max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`},
		{"the client's list without model", `{"models":["primary","gemm"],"max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`},
		{"the list, streamed", `{"models":["primary","gemm"],"stream":true,"max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`},
		{"the catalog's fallbacks", `{"model":"primary","max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := nodetest.Start(t, routingCatalog, nodetest.Options{}) // pm fails afresh, not cooling down
			env.Sim.SetBehavior("pm", simulator.Behavior{FailStatus: 500})
			pm, gm := env.Sim.Calls("pm"), env.Sim.Calls("gm")
			acct, key := routingKey(t, env, persistence.KeySpec{})
			got := callRouting(t, env, acct, key, tc.body)
			// gemm counts 2 plan calls: the list reserved its dearest model's, the one that served counts.
			want := served{status: 200, answerModel: "gemm", header: "gemm", logModel: "gemm", route: "gm", units: 2000, body: got.body}
			if got != want || env.Sim.Calls("pm") != pm+1 || env.Sim.Calls("gm") != gm+1 {
				t.Fatalf("got %+v\nwant %+v; pm %d gm %d calls", got, want, env.Sim.Calls("pm")-pm, env.Sim.Calls("gm")-gm)
			}
			if strings.Contains(got.body, `"models"`) {
				t.Fatalf("the answer carries models: %s", got.body)
			}
		})
	}
	// The first model answering counts its own units, not the list's dearest.
	env := nodetest.Start(t, routingCatalog, nodetest.Options{})
	acct, key := routingKey(t, env, persistence.KeySpec{})
	got := callRouting(t, env, acct, key, `{"model":"primary","models":["gemm"],"max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`)
	if got.status != 200 || got.logModel != "primary" || got.answerModel != "primary" || got.units != 1000 {
		t.Fatalf("primary answering: %+v", got)
	}
}

func TestModelChoiceBadInput(t *testing.T) {
	env := nodetest.Start(t, routingCatalog, nodetest.Options{})
	msgs := `"max_tokens":20,"messages":[{"role":"user","content":"hi"}]`
	cases := []struct {
		name   string
		key    persistence.KeySpec
		body   string
		status int
		code   string
		param  string
		msg    string
	}{
		{"unknown model in models", persistence.KeySpec{}, `{"model":"small","models":["nope"],` + msgs + `}`, 404, "model_not_found", "models[0]",
			`models[0]: the model "nope" does not exist; GET /v1/models lists the models this key can use`},
		{"empty list", persistence.KeySpec{}, `{"model":"small","models":[],` + msgs + `}`, 400, "invalid_request_error", "models",
			"models must list at least one model id"},
		{"too long", persistence.KeySpec{}, `{"model":"small","models":["long","notools","gemm","primary"],` + msgs + `}`, 400, "invalid_request_error", "models",
			"models lists 4 models; this gateway tries at most 3"},
		{"not strings", persistence.KeySpec{}, `{"model":"small","models":[1],` + msgs + `}`, 400, "invalid_request_error", "models",
			"models must be an array of model ids (strings), tried in order"},
		{"an empty entry", persistence.KeySpec{}, `{"model":"small","models":["long",""],` + msgs + `}`, 400, "invalid_request_error", "models[1]",
			"models[1] is empty: each entry must be a model id"},
		{"an auto model in the list", persistence.KeySpec{}, `{"model":"small","models":["auto"],` + msgs + `}`, 400, "invalid_request_error", "models[0]",
			`models[0]: "auto" is an auto model: it cannot be a fallback; name it in model instead`},
		{"a ZDR key and a non-ZDR entry", persistence.KeySpec{ZDR: true}, `{"model":"long","models":["small"],` + msgs + `}`, 403, "model_not_available_in_zdr_mode", "models[0]",
			`models[0]: this API key is in zero-data-retention mode and "small" has no zero-data-retention route`},
		{"a restricted key and an entry it may not use", persistence.KeySpec{Models: []string{"small"}}, `{"model":"small","models":["long"],` + msgs + `}`, 403, "model_not_allowed", "models[0]",
			`models[0]: this API key is restricted and may not call "long"`},
		{"auto: images and no candidate takes them", persistence.KeySpec{}, `{"model":"auto-limits",` + msgs[:len(msgs)-1] + `,{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}]}`, 400, "no_candidate", "model",
			`no candidate of "auto-limits" can serve this request: long: it does not take images; small: it does not take images`},
		{"auto: thinking and no candidate reasons", persistence.KeySpec{}, `{"model":"auto-limits","reasoning_effort":"high",` + msgs + `}`, 400, "no_candidate", "model",
			`no candidate of "auto-limits" can serve this request: long: it does not reason; small: it does not reason`},
		{"auto: the one that fits is over the price ceiling", persistence.KeySpec{}, routingBody("auto-limits", "", 400), 400, "no_candidate", "model",
			`no candidate of "auto-limits" can serve this request: long: its prompt price 0.000002 is over the ceiling 0.0000015; small: the input is about 520 tokens and the answer may take 20, over model small's context window of 300 tokens`},
		{"auto with no candidate able to serve", persistence.KeySpec{}, routingBody("auto-tools-only", toolsJSON, 0), 400, "no_candidate", "model",
			`no candidate of "auto-tools-only" can serve this request: notools: it does not take tools`},
		{"auto, every candidate refused", persistence.KeySpec{ZDR: true}, routingBody("auto", toolsJSON, 60000), 400, "no_candidate", "model",
			`no candidate of "auto" can serve this request: small: it has no zero-data-retention route; long: ` +
				`the input is about 100028 tokens and the answer may take 20, over model long's context window of 100000 tokens; notools: it has no zero-data-retention route`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, key := routingKey(t, env, tc.key)
			resp := env.Post("/v1/chat/completions", key, tc.body)
			raw := nodetest.Read(t, resp)
			var e struct {
				Error struct{ Message, Type, Code, Param string }
			}
			json.Unmarshal(raw, &e)
			code := e.Error.Code
			if code == "" {
				code = e.Error.Type
			}
			if resp.StatusCode != tc.status || code != tc.code && e.Error.Type != tc.code || e.Error.Param != tc.param || e.Error.Message != tc.msg {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
		})
	}
}

func TestModelsListAutoCandidates(t *testing.T) {
	env := nodetest.Start(t, routingCatalog, nodetest.Options{})
	env.Sim.SetBehavior("sm", simulator.Behavior{FailStatus: 500})
	_, key := routingKey(t, env, persistence.KeySpec{})
	for range 3 { // small's one route fails until it cools down
		nodetest.Read(t, env.Post("/v1/chat/completions", key, routingBody("small", "", 0)))
	}
	cases := []struct {
		name, path string
		key        persistence.KeySpec
		want       string // the auto model's "auto" member, or the list's ids
	}{
		{"list", "/v1/models", persistence.KeySpec{}, "auto,auto-limits,auto-tools-only,gemm,long,notools,primary,small"},
		{"list, ZDR key", "/v1/models", persistence.KeySpec{ZDR: true}, "auto,auto-limits,long"},
		{"list, restricted to a candidate", "/v1/models", persistence.KeySpec{Models: []string{"notools"}}, "auto,auto-tools-only,notools"},
		{"auto's record", "/v1/models/auto", persistence.KeySpec{}, `{"policy":"cheapest","candidates":["small","long","notools"],"candidates_now":[` +
			`{"id":"small","available":false,"reason":"every route is cooling down; retry in 1 s"},{"id":"long","available":true},{"id":"notools","available":true}]}`},
		{"auto's record, ZDR key", "/v1/models/auto", persistence.KeySpec{ZDR: true}, `{"policy":"cheapest","candidates":["long"],"candidates_now":[` +
			`{"id":"small","available":false,"reason":"no zero-data-retention route"},{"id":"long","available":true},{"id":"notools","available":false,"reason":"no zero-data-retention route"}]}`},
		{"auto's record, restricted key", "/v1/models/auto", persistence.KeySpec{Models: []string{"notools"}}, `{"policy":"cheapest","candidates":["notools"],"candidates_now":[{"id":"notools","available":true}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, key := routingKey(t, env, tc.key)
			resp := env.Do(http.MethodGet, tc.path, key, "")
			raw := nodetest.Read(t, resp)
			var list struct {
				Data []struct {
					ID string `json:"id"`
				} `json:"data"`
				Auto json.RawMessage `json:"auto"`
			}
			if err := json.Unmarshal(raw, &list); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			got := string(list.Auto)
			if list.Data != nil {
				var ids []string
				for _, m := range list.Data {
					ids = append(ids, m.ID)
				}
				got = strings.Join(ids, ",")
			}
			if got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

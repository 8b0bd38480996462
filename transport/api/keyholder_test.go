package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// meteredCatalog has a plan of one call per window: an account's first call is within the
// plan (charged nothing), every later one is paid from its credits at the model's prices.
var meteredCatalog = nodetest.DefaultCatalog + `
plans:
  - {name: metered, window_requests: 1, burst_rpm: 100, allow_automated: true}
`

// startMetered is a node whose account is on the metered plan with $1 of credits.
func startMetered(t *testing.T) *nodetest.Env {
	t.Helper()
	env := nodetest.Start(t, meteredCatalog, nodetest.Options{Plan: "metered"})
	if _, _, err := env.Node.Quota.AddCredits(context.Background(), env.Account.ID, money.Amount(1_000_000_000_000), "topup-1"); err != nil {
		t.Fatal(err)
	}
	return env
}

// generationOut is GET /v1/generations/{id}'s answer.
type generationOut struct {
	Data struct {
		ID               string  `json:"id"`
		Object           string  `json:"object"`
		CreatedAt        string  `json:"created_at"`
		Model            string  `json:"model"`
		KeyID            string  `json:"key_id"`
		Status           int     `json:"status"`
		ClientFormat     string  `json:"client_format"`
		UpstreamFormat   string  `json:"upstream_format"`
		Stream           bool    `json:"stream"`
		InputTokens      int64   `json:"input_tokens"`
		CachedTokens     int64   `json:"cached_tokens"`
		CacheWriteTokens int64   `json:"cache_write_tokens"`
		OutputTokens     int64   `json:"output_tokens"`
		ReasoningTokens  int64   `json:"reasoning_tokens"`
		CostUSD          string  `json:"cost_usd"`
		ListCostUSD      string  `json:"list_cost_usd"`
		AllowanceCalls   float64 `json:"allowance_calls"`
		LatencyMs        int64   `json:"latency_ms"`
		TTFTMs           int64   `json:"ttft_ms"`
		Attempts         int     `json:"attempts"`
	} `json:"data"`
}

// getJSON sends a GET with one key header and decodes a 200's body into out.
func getJSON(t *testing.T, env *nodetest.Env, path string, headers []string, out any) (int, []byte) {
	t.Helper()
	resp := env.Do(http.MethodGet, path, "", "", headers...)
	raw := nodetest.Read(t, resp)
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: %v: %s", path, err, raw)
		}
	}
	return resp.StatusCode, raw
}

func bearer(key string) []string { return []string{"Authorization", "Bearer " + key} }

// The key-holder endpoints: a whole answer of an admitted call carries X-Modelgate-Cost,
// exactly the cost its log entry holds ("0" within the plan, the price beyond it), on every
// endpoint; a streamed answer and a refusal before admission carry none. GET
// /v1/generations/{X-Request-Id} returns that entry — tokens, cost, latency — to a key of the
// same account.
func TestCostHeaderIsTheLoggedCostAndTheGenerationShowsIt(t *testing.T) {
	env := startMetered(t)
	second := env.NewKey(persistence.KeySpec{Name: "second"}) // same account, another key
	keyID := func(secret string) string { k, _ := env.Node.Store.LookupKey(secret); return k.ID }
	cases := []struct {
		name, path, body string
		status           int
		header           bool   // X-Modelgate-Cost expected
		cost, listCost   string // the logged costs; "" = only checked against the header
		in, out          int64  // the logged tokens; 0 = not pinned
		format           string // client format logged
	}{
		// The simulator counts prompt words as tokens and answers 16 words: 3 × 0.000001 + 16 × 0.000002.
		{name: "chat within the plan", path: "/v1/chat/completions", body: `{"model":"chat","messages":[{"role":"user","content":"one two three"}]}`,
			status: 200, header: true, cost: "0", listCost: "0.000035", in: 3, out: 16, format: "chat"},
		{name: "chat paid from credits", path: "/v1/chat/completions", body: `{"model":"chat","messages":[{"role":"user","content":"one two three four five six seven"}]}`,
			status: 200, header: true, cost: "0.000039", listCost: "0.000039", in: 7, out: 16, format: "chat"},
		{name: "messages paid", path: "/v1/messages", body: `{"model":"msg","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`,
			status: 200, header: true, format: "messages"},
		{name: "responses paid", path: "/v1/responses", body: `{"model":"resp","input":"hi"}`, status: 200, header: true, format: "responses"},
		{name: "embeddings paid", path: "/v1/embeddings", body: `{"model":"embed","input":"one two"}`, status: 200, header: true, format: "embeddings"},
		{name: "streamed: no header", path: "/v1/chat/completions", body: `{"model":"chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			status: 200, format: "chat"},
		{name: "refused before admission: no header", path: "/v1/chat/completions", body: `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`,
			status: 404, cost: "0", listCost: "0", format: "chat"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Post(c.path, env.Key, c.body)
			nodetest.Read(t, resp)
			rid := resp.Header.Get("X-Request-Id")
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			env.WaitIdle()
			e, err := env.Node.Store.LogEntry(env.Account.ID, rid)
			if err != nil {
				t.Fatalf("log entry %s: %v", rid, err)
			}
			logged, list := money.Amount(e.Cost).String(), money.Amount(e.ListCost).String()
			header, has := resp.Header.Get("X-Modelgate-Cost"), resp.Header.Values("X-Modelgate-Cost") != nil
			if has != c.header || c.header && header != logged {
				t.Fatalf("X-Modelgate-Cost %q (present %v), logged %s; want present %v", header, has, logged, c.header)
			}
			if c.cost != "" && (logged != c.cost || list != c.listCost) {
				t.Fatalf("logged cost %s, list %s; want %s, %s", logged, list, c.cost, c.listCost)
			}
			if c.cost == "" && e.Cost == 0 {
				t.Fatalf("a paid call logged no cost: %+v", e)
			}
			// Any key of the account reads the entry: what the log holds, as it holds it.
			var g generationOut
			status, raw := getJSON(t, env, "/v1/generations/"+rid, bearer(second), &g)
			d := g.Data
			if status != 200 || d.ID != rid || d.Object != "generation" || d.Model != e.Model || d.KeyID != keyID(env.Key) ||
				d.Status != c.status || d.ClientFormat != c.format || d.UpstreamFormat != e.UpstreamFormat || d.Stream != e.Stream ||
				d.CostUSD != logged || d.ListCostUSD != list || d.InputTokens != e.InputTokens || d.OutputTokens != e.OutputTokens ||
				d.CachedTokens != e.CachedTokens || d.CacheWriteTokens != e.CacheWriteTokens || d.ReasoningTokens != e.ReasoningTokens ||
				d.LatencyMs != e.LatencyMs || d.TTFTMs != e.TTFTMs || d.Attempts != e.Attempts ||
				d.CreatedAt != time.Unix(0, e.Time).UTC().Format(time.RFC3339Nano) {
				t.Fatalf("generation %d %s\nlogged %+v", status, raw, e)
			}
			if c.in != 0 && (d.InputTokens != c.in || d.OutputTokens != c.out) {
				t.Fatalf("tokens %d/%d, want %d/%d", d.InputTokens, d.OutputTokens, c.in, c.out)
			}
			if c.status == 200 && (d.LatencyMs < 0 || d.UpstreamFormat == "" || d.Attempts != 1) {
				t.Fatalf("a served call's entry without its route's format or attempt: %s", raw)
			}
		})
	}
}

// Another account's request id and an unknown one are the same 404, in the chat envelope;
// the answer names no other account's data.
func TestGenerationOfAnotherAccountIsNotFound(t *testing.T) {
	env := startMetered(t)
	resp := env.Post("/v1/chat/completions", env.Key, chatBody("chat"))
	nodetest.Read(t, resp)
	mine := resp.Header.Get("X-Request-Id")
	other, err := env.Node.Store.CreateAccount("other@example.com", "metered")
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey, err := env.Node.Store.CreateKey(other.ID, persistence.KeySpec{Name: "o"})
	if err != nil {
		t.Fatal(err)
	}
	env.WaitIdle()
	cases := []struct {
		name, key, id string
		status        int
	}{
		{"its own account's key", env.Key, mine, 200},
		{"another account's key", otherKey, mine, 404},
		{"an unknown id", env.Key, "req_000000000000000000000000", 404},
		{"a malformed id", env.Key, "not%20an%20id", 404},
		{"no key", "", mine, 401},
	}
	var notFound []nodetest.Envelope
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var g generationOut
			var headers []string
			if c.key != "" {
				headers = bearer(c.key)
			}
			status, raw := getJSON(t, env, "/v1/generations/"+c.id, headers, &g)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, raw)
			}
			if status == 200 {
				if g.Data.ID != mine {
					t.Fatalf("generation %s", raw)
				}
				return
			}
			envl, err := nodetest.ReadEnvelope(raw)
			if err != nil || envl.Format != "chat" || envl.RequestID == "" {
				t.Fatalf("%v: %s", err, raw)
			}
			if status == 404 {
				if envl.Code != "generation_not_found" || envl.Param != "id" || envl.Type != "invalid_request_error" {
					t.Fatalf("404 %s", raw)
				}
				envl.RequestID = ""
				notFound = append(notFound, envl)
			}
		})
	}
	for i := 1; i < len(notFound); i++ {
		if notFound[i].Message != notFound[0].Message || notFound[i].Code != notFound[0].Code {
			t.Errorf("404s differ: %+v and %+v", notFound[0], notFound[i])
		}
	}
}

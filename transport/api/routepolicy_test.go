package api_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// withCheaperRouteB reloads the env's catalog with model chat choosing its route by
// lowest_price, and its route b (weight 1 of 4) at half the model's prices. Set in Go,
// not through the catalog file.
func withCheaperRouteB(t *testing.T, env *nodetest.Env) {
	t.Helper()
	cat, err := catalog.LoadFile(filepath.Join(env.DataDir, "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := cat.Lookup("chat")
	b, _ := cat.Route("b")
	half := func(s string) money.Amount {
		a, err := money.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	m.RoutePolicy = catalog.RouteLowestPrice
	b.Pricing = &catalog.Pricing{Prompt: half("0.0000005"), Completion: half("0.000001"), CacheRead: half("0.00000005")}
	env.Node.Catalog.Store(cat)
}

// A model of route_policy lowest_price is served by its cheaper route, whatever
// the weights (a takes 3/4 by weight: four calls all to b by chance are 1 in 256). The client
// pays the model's price (list_cost_usd, and cost_usd beyond the plan); the operator's usage
// shows what the route cost, upstream_cost_usd, per entry and in its totals; the account's
// own usage API shows it nowhere, not even inside its cursor.
func TestLowestPriceRouteServesAndItsCostIsLogged(t *testing.T) {
	env := startMetered(t) // the first call within the plan, the others paid from credits
	withCheaperRouteB(t, env)
	// The simulator counts prompt words as tokens and answers 16 words:
	//   the model's price  3 × 0.000001  + 16 × 0.000002 = 0.000035
	//   route b's price    3 × 0.0000005 + 16 × 0.000001 = 0.0000175
	bodies := []string{
		`{"model":"chat","messages":[{"role":"user","content":"one two three"}]}`,
		`{"model":"chat","stream":true,"messages":[{"role":"user","content":"one two three"}]}`,
		`{"model":"chat","messages":[{"role":"user","content":"one two three"}]}`,
		`{"model":"chat","stream":true,"messages":[{"role":"user","content":"one two three"}]}`,
	}
	for i, body := range bodies {
		resp := env.Post("/v1/chat/completions", env.Key, body)
		if raw := nodetest.Read(t, resp); resp.StatusCode != 200 {
			t.Fatalf("call %d: %d %s", i+1, resp.StatusCode, raw)
		}
	}
	if a, b := env.Sim.Calls("a"), env.Sim.Calls("b"); a != 0 || b != 4 {
		t.Fatalf("calls a=%d b=%d, want every call on the cheaper route b", a, b)
	}

	resp := env.Admin(http.MethodGet, "/admin/v1/accounts/"+env.Account.ID+"/usage", "")
	raw := nodetest.Read(t, resp)
	var out struct {
		Data []struct {
			Route       string `json:"route"`
			Input       int64  `json:"input_tokens"`
			Output      int64  `json:"output_tokens"`
			ListCostUSD string `json:"list_cost_usd"`
			CostUSD     string `json:"cost_usd"`
			Upstream    string `json:"upstream_cost_usd"`
		} `json:"data"`
		Totals struct {
			ListCostUSD string `json:"list_cost_usd"`
			CostUSD     string `json:"cost_usd"`
			Upstream    string `json:"upstream_cost_usd"`
		} `json:"totals"`
		TotalUpstream string `json:"total_upstream_cost_usd"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != 200 || len(out.Data) != 4 {
		t.Fatalf("usage: %d %s", resp.StatusCode, raw)
	}
	for i, e := range out.Data {
		charged := "0.000035"
		if i == 0 {
			charged = "0" // within the plan
		}
		if e.Route != "b" || e.Input != 3 || e.Output != 16 || e.ListCostUSD != "0.000035" || e.CostUSD != charged || e.Upstream != "0.0000175" {
			t.Fatalf("entry %d = %+v, want route b at list 0.000035, charged %s, upstream 0.0000175", i, e, charged)
		}
	}
	if tt := out.Totals; tt.ListCostUSD != "0.00014" || tt.CostUSD != "0.000105" || tt.Upstream != "0.00007" || out.TotalUpstream != "0.00007" {
		t.Fatalf("totals = %+v, total_upstream_cost_usd %q", tt, out.TotalUpstream)
	}

	resp = env.Do(http.MethodGet, "/account/v1/usage?limit=1", env.Key, "")
	raw = nodetest.Read(t, resp)
	var page struct {
		Data       []json.RawMessage `json:"data"`
		NextCursor string            `json:"next_cursor"`
	}
	if err := json.Unmarshal(raw, &page); err != nil || resp.StatusCode != 200 || len(page.Data) != 1 || page.NextCursor == "" {
		t.Fatalf("account usage: %d %s", resp.StatusCode, raw)
	}
	cursor, _ := base64.RawURLEncoding.DecodeString(page.NextCursor)
	if strings.Contains(string(raw), "upstream_cost") || strings.Contains(string(raw), "0.0000175") || strings.Contains(string(cursor), `"uc"`) {
		t.Fatalf("the account's usage shows the upstream cost: %s (cursor %s)", raw, cursor)
	}
}

package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// keyInfoOut is GET /v1/key's answer.
type keyInfoOut struct {
	Data struct {
		Label          string  `json:"label"`
		Usage          string  `json:"usage"`
		UsageDaily     string  `json:"usage_daily"`
		UsageMonthly   string  `json:"usage_monthly"`
		Limit          *string `json:"limit"`
		LimitRemaining *string `json:"limit_remaining"`
		IsFreeTier     bool    `json:"is_free_tier"`
		RateLimit      *struct {
			Requests  int64  `json:"requests"`
			Interval  string `json:"interval"`
			Remaining int64  `json:"remaining"`
			ResetsAt  string `json:"resets_at"`
		} `json:"rate_limit"`
		Key struct {
			ID        string   `json:"id"`
			Name      string   `json:"name"`
			Hint      string   `json:"hint"`
			Models    []string `json:"models"`
			ZDR       bool     `json:"zdr"`
			CreatedAt string   `json:"created_at"`
		} `json:"key"`
		Today     periodOut `json:"today"`
		ThisMonth periodOut `json:"this_month"`
		Account   struct {
			ID               string       `json:"id"`
			Plan             string       `json:"plan"`
			CreditBalanceUSD string       `json:"credit_balance_usd"`
			Window           allowanceOut `json:"window"`
			Weekly           allowanceOut `json:"weekly"`
		} `json:"account"`
	} `json:"data"`
}

type periodOut struct {
	Since    string `json:"since"`
	Requests int64  `json:"requests"`
	CostUSD  string `json:"cost_usd"`
}

type allowanceOut struct {
	Used      float64  `json:"used"`
	Limit     int64    `json:"limit"`
	Remaining *float64 `json:"remaining"`
	ResetsAt  string   `json:"resets_at"`
}

// The key-holder endpoints: GET /v1/key after two calls (one within the plan, one paid) shows
// the calling key and its usage — the usage query's totals for the key today and this month —
// and the account's allowance and credits as the quota owner holds them, whichever of the
// three key headers carries the key. A key that made no call shows its own zero usage.
func TestKeyInfoMatchesTheQuotaAndTheUsageQuery(t *testing.T) {
	env := startMetered(t)
	idle := env.NewKey(persistence.KeySpec{Name: "idle", Models: []string{"chat"}, ZDR: true})
	for _, words := range []string{"one two three", "one two three four five six seven"} {
		resp := env.Post("/v1/chat/completions", env.Key, `{"model":"chat","messages":[{"role":"user","content":"`+words+`"}]}`)
		if nodetest.Read(t, resp); resp.StatusCode != 200 {
			t.Fatalf("chat: %d", resp.StatusCode)
		}
	}
	env.WaitIdle()
	busy, _ := env.Node.Store.LookupKey(env.Key)
	calm, _ := env.Node.Store.LookupKey(idle)
	plan, _ := env.Node.Catalog.Load().Plan("metered")
	st, err := env.Node.Quota.State(context.Background(), env.Account.ID, plan)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	usage := func(k persistence.Key, since time.Time) periodOut {
		page, err := env.Node.Store.QueryLog(persistence.LogQuery{Account: env.Account.ID, KeyID: k.ID, From: since})
		if err != nil {
			t.Fatal(err)
		}
		return periodOut{Since: since.Format(time.RFC3339), Requests: page.Totals.Count, CostUSD: money.Amount(page.Totals.Cost).String()}
	}
	// What the usage query and the quota owner say, pinned to what two calls must make.
	if u := usage(busy, day); u.Requests != 2 || u.CostUSD != "0.000039" || st.Balance.String() != "0.999961" ||
		st.Window.Used != 1000 || st.Window.Limit != 1000 || st.Weekly.Limit != 0 {
		t.Fatalf("usage %+v, quota %+v", u, st)
	}
	cases := []struct {
		name    string
		headers []string
		key     persistence.Key
	}{
		{"Authorization: Bearer", bearer(env.Key), busy},
		{"x-api-key", []string{"x-api-key", env.Key}, busy},
		{"x-goog-api-key", []string{"x-goog-api-key", env.Key}, busy},
		{"another key of the account", bearer(idle), calm},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Do(http.MethodGet, "/v1/key", "", "", c.headers...)
			var out keyInfoOut
			raw := nodetest.Read(t, resp)
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			if err := json.Unmarshal(raw, &out); err != nil {
				t.Fatal(err)
			}
			d := out.Data
			today, thisMonth := usage(c.key, day), usage(c.key, month)
			models := c.key.Models
			if d.Label != c.key.Name || d.Key.ID != c.key.ID || d.Key.Name != c.key.Name || d.Key.Hint != c.key.Hint ||
				strings.Join(d.Key.Models, ",") != strings.Join(models, ",") || d.Key.Models == nil || d.Key.ZDR != c.key.ZDR ||
				d.Key.CreatedAt != time.Unix(c.key.CreatedAt, 0).UTC().Format(time.RFC3339) {
				t.Fatalf("key %+v, want %+v", d.Key, c.key)
			}
			if d.Today != today || d.ThisMonth != thisMonth || d.UsageDaily != today.CostUSD ||
				d.UsageMonthly != thisMonth.CostUSD || d.Usage != thisMonth.CostUSD {
				t.Fatalf("usage today %+v month %+v (%s/%s/%s); the usage query says %+v, %+v", d.Today, d.ThisMonth,
					d.Usage, d.UsageDaily, d.UsageMonthly, today, thisMonth)
			}
			if c.key.ID == busy.ID && (d.Today.Requests != 2 || d.Today.CostUSD != "0.000039") ||
				c.key.ID == calm.ID && (d.Today.Requests != 0 || d.Today.CostUSD != "0") {
				t.Fatalf("today %+v", d.Today)
			}
			a := d.Account
			if a.ID != env.Account.ID || a.Plan != "metered" || a.CreditBalanceUSD != st.Balance.String() || d.IsFreeTier ||
				a.Window != (allowanceOut{Used: 1, Limit: 1, Remaining: a.Window.Remaining, ResetsAt: st.Window.ResetsAt.UTC().Format(time.RFC3339)}) ||
				a.Window.Remaining == nil || *a.Window.Remaining != 0 ||
				a.Weekly.Limit != 0 || a.Weekly.Remaining != nil || a.Weekly.ResetsAt != st.Weekly.ResetsAt.UTC().Format(time.RFC3339) {
				t.Fatalf("account %s", raw)
			}
			if d.Limit != nil || d.LimitRemaining != nil || !strings.Contains(string(raw), `"limit":null,"limit_remaining":null`) {
				t.Fatalf("limits %s", raw)
			}
			// The account-wide burst: two calls taken of 100; /v1/key takes none.
			if r := d.RateLimit; r == nil || r.Requests != 100 || r.Interval != "1m" || r.Remaining != 98 || r.ResetsAt == "" ||
				resp.Header.Get("X-RateLimit-Limit") != "100" || resp.Header.Get("X-RateLimit-Remaining") != "98" {
				t.Fatalf("rate limit %+v, headers %v", r, resp.Header)
			}
		})
	}
}

// GET /v1/key without a usable key is a 401 naming the three headers it takes; a revoked
// key is refused as everywhere.
func TestKeyInfoRefusesCallersWithoutAKey(t *testing.T) {
	env := startMetered(t)
	revoked := env.NewKey(persistence.KeySpec{Name: "gone"})
	k, _ := env.Node.Store.LookupKey(revoked)
	if _, err := env.Node.Store.RevokeKey(k.ID); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		headers []string
		message string
	}{
		{"no key", nil, "no API key: send 'Authorization: Bearer <API key>', 'x-api-key: <API key>' or 'x-goog-api-key: <API key>'"},
		{"unknown key", bearer("sk-token-" + strings.Repeat("u", 48)), "invalid API key"},
		{"revoked key", []string{"x-goog-api-key", revoked}, "this API key has been revoked"},
		{"not a key", []string{"x-api-key", "hello"}, "invalid API key: keys start with sk-token- or sk-user-"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Do(http.MethodGet, "/v1/key", "", "", c.headers...)
			raw := nodetest.Read(t, resp)
			e, err := nodetest.ReadEnvelope(raw)
			if resp.StatusCode != 401 || err != nil || e.Code != "invalid_api_key" || e.Message != c.message {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
		})
	}
}

// A key with a spending budget shows it as limit and what its calls left of it in the period
// as limit_remaining (quota.Service.KeyState); a key without one shows null for both.
func TestKeyInfoShowsTheKeysBudgetAndWhatIsLeft(t *testing.T) {
	env := startMetered(t)
	half, _ := money.Parse("0.5")
	budgeted := env.NewKey(persistence.KeySpec{Name: "budgeted", Limits: persistence.KeyLimits{Budget: half, Period: "day"}})
	resp := env.Post("/v1/chat/completions", budgeted, `{"model":"chat","messages":[{"role":"user","content":"one two three"}]}`)
	if nodetest.Read(t, resp); resp.StatusCode != 200 {
		t.Fatalf("chat: %d", resp.StatusCode)
	}
	env.WaitIdle()
	k, _ := env.Node.Store.LookupKey(budgeted)
	plan, _ := env.Node.Catalog.Load().Plan("metered")
	st, err := env.Node.Quota.KeyState(context.Background(), env.Account.ID, k.ID, plan, k.Limits)
	if err != nil || st.Spent <= 0 || st.Remaining != half-st.Spent {
		t.Fatalf("key state %+v %v: the call's cost should count", st, err)
	}
	for _, c := range []struct {
		name, key, limit, remaining string
	}{
		{"a key with a budget", budgeted, "0.5", st.Remaining.String()},
		{"a key without", env.Key, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Do(http.MethodGet, "/v1/key", c.key, "")
			raw := nodetest.Read(t, resp)
			var out keyInfoOut
			if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			str := func(p *string) string {
				if p == nil {
					return ""
				}
				return *p
			}
			if str(out.Data.Limit) != c.limit || str(out.Data.LimitRemaining) != c.remaining || (c.limit == "") != (out.Data.Limit == nil) {
				t.Fatalf("limit %q remaining %q; want %q %q", str(out.Data.Limit), str(out.Data.LimitRemaining), c.limit, c.remaining)
			}
		})
	}
}

package api_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/api"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// keyLimitsCatalog prices the chat model so that a few calls spend a cent: a call capped
// at 20 output tokens is estimated at well under $0.01 and costs a few thousandths.
var keyLimitsCatalog = strings.Replace(nodetest.DefaultCatalog,
	`pricing: {prompt: "0.000001", completion: "0.000002", cache_read: "0.0000001"}`,
	`pricing: {prompt: "0.0001", completion: "0.0001"}`, 1) + `
plans:
  - {name: demo, allow_automated: true}
`

// One call in each client format, its output capped at 40 tokens: estimated at $0.004 or
// more (so it does not fit what a spent budget has left), it costs about $0.002.
var keyLimitCalls = []struct{ format, path, body string }{
	{"chat", "/v1/chat/completions", `{"model":"chat","max_tokens":40,"messages":[{"role":"user","content":"hi"}]}`},
	{"messages", "/v1/messages", `{"model":"chat","max_tokens":40,"messages":[{"role":"user","content":"hi"}]}`},
	{"chat", "/v1/responses", `{"model":"chat","max_output_tokens":40,"input":"hi"}`},
	{"google", "/v1beta/models/chat:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":40}}`},
}

func keyLimitsEnv(t *testing.T, now time.Time) (*nodetest.Env, *testutil.Clock, func(persistence.KeyLimits) (persistence.Key, string)) {
	clk := testutil.NewClock(now)
	health := routehealth.DefaultPolicy()
	health.Now = clk.Now
	env := nodetest.Start(t, keyLimitsCatalog, nodetest.Options{Health: health, Quota: quota.Config{Now: clk.Now}})
	acct, err := env.Node.Store.CreateAccount("limits@example.com", "demo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	newKey := func(l persistence.KeyLimits) (persistence.Key, string) {
		n++
		k, secret, err := env.Node.Store.CreateKey(acct.ID, persistence.KeySpec{Name: "k" + string(rune('0'+n)), Limits: l})
		if err != nil {
			t.Fatal(err)
		}
		return k, secret
	}
	return env, clk, newKey
}

// A key with a $0.01 daily budget is served until its calls have spent it, then refused
// with 402 in every client format, saying when the budget returns (the next 00:00 UTC) in
// the message, in resets_at and in X-Modelgate-Budget-Reset; at that time it is served again.
func TestKeyBudgetSpentIs402InEveryFormat(t *testing.T) {
	env, clk, newKey := keyLimitsEnv(t, time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	k, secret := newKey(persistence.KeyLimits{Budget: money.Amount(10_000_000_000), Period: persistence.BudgetDay}) // $0.01
	served := 0
	for ; served < 50; served++ { // calls estimated at $0.002 or more until one does not fit
		resp := env.Post(keyLimitCalls[0].path, secret, strings.Replace(keyLimitCalls[0].body, "40", "20", 1))
		raw := nodetest.Read(t, resp)
		if resp.StatusCode == 402 {
			break
		}
		if resp.StatusCode != 200 {
			t.Fatalf("call %d: %d %s", served, resp.StatusCode, raw)
		}
	}
	if served == 0 || served == 50 {
		t.Fatalf("%d calls served before the budget ran out", served)
	}
	acct, _ := env.Node.Store.GetAccount(k.AccountID)
	plan, _ := env.Node.Catalog.Load().Plan(acct.Plan)
	st, err := env.Node.Quota.KeyState(t.Context(), k.AccountID, k.ID, plan, k.Limits)
	if err != nil {
		t.Fatal(err)
	}
	if st.Spent <= 0 || st.Held != 0 || st.Spent+st.Remaining != k.Limits.Budget || st.Remaining >= 4_000_000_000 || st.ResetsAt != time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC) {
		t.Fatalf("key state after spending: %+v", st)
	}
	const midnight = "2026-11-23T00:00:00Z"
	for _, c := range keyLimitCalls {
		t.Run(c.path, func(t *testing.T) {
			resp := env.Post(c.path, secret, c.body)
			raw := nodetest.Read(t, resp)
			if resp.StatusCode != 402 || resp.Header.Get(api.BudgetResetHeader) != midnight {
				t.Fatalf("%d %s %q, want 402 and %s: %s", resp.StatusCode, api.BudgetResetHeader, resp.Header.Get(api.BudgetResetHeader), midnight, raw)
			}
			e := readEnvelope(t, raw)
			want := map[string]string{"resets_at": midnight, "budget_usd": "0.01", "period": "day"}
			if e.Format != c.format || e.Code != "key_budget_exhausted" || !reflect.DeepEqual(e.Fields, want) || !strings.Contains(e.Message, "returns at "+midnight) {
				t.Fatalf("%s envelope, code %q, fields %v, message %q: %s", e.Format, e.Code, e.Fields, e.Message, raw)
			}
		})
	}
	clk.Add(12 * time.Hour) // 00:00 UTC: a new day, a new budget
	if resp := env.Post(keyLimitCalls[0].path, secret, keyLimitCalls[0].body); resp.StatusCode != 200 {
		t.Fatalf("the next day: %d %s", resp.StatusCode, nodetest.Read(t, resp))
	} else {
		nodetest.Read(t, resp)
	}
}

// A key past its expiry is refused at the key check with 401 key_expired in every client
// format, the message saying when it expired; the same key is served before that time.
func TestExpiredKeyIs401InEveryFormat(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	env, clk, newKey := keyLimitsEnv(t, now)
	expires := now.Add(time.Hour)
	_, secret := newKey(persistence.KeyLimits{ExpiresAt: expires.Unix()})
	if resp := env.Post(keyLimitCalls[0].path, secret, keyLimitCalls[0].body); resp.StatusCode != 200 {
		t.Fatalf("before its expiry: %d %s", resp.StatusCode, nodetest.Read(t, resp))
	} else {
		nodetest.Read(t, resp)
	}
	clk.Add(time.Hour)
	for _, c := range keyLimitCalls {
		t.Run(c.path, func(t *testing.T) {
			resp := env.Post(c.path, secret, c.body)
			raw := nodetest.Read(t, resp)
			if resp.StatusCode != 401 {
				t.Fatalf("%d, want 401: %s", resp.StatusCode, raw)
			}
			e := readEnvelope(t, raw)
			if e.Format != c.format || e.Code != "key_expired" || e.Message != "this API key expired at "+expires.Format(time.RFC3339) {
				t.Fatalf("%s envelope, code %q, message %q: %s", e.Format, e.Code, e.Message, raw)
			}
		})
	}
}

// A key with rpm 2 gets its third call in a minute refused with 429 key_rpm_exceeded and
// the exact Retry-After (until its first call leaves the sliding window), in the client's
// format; another key of the same account is not limited by it.
func TestKeyRPMThirdCallIs429(t *testing.T) {
	env, clk, newKey := keyLimitsEnv(t, time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	_, secret := newKey(persistence.KeyLimits{RPM: 2})
	_, other := newKey(persistence.KeyLimits{})
	for i, c := range keyLimitCalls[:2] {
		if resp := env.Post(c.path, secret, c.body); resp.StatusCode != 200 {
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, nodetest.Read(t, resp))
		} else {
			nodetest.Read(t, resp)
		}
		clk.Add(10 * time.Second)
	}
	for _, c := range keyLimitCalls {
		resp := env.Post(c.path, secret, c.body)
		raw := nodetest.Read(t, resp)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "40" {
			t.Fatalf("%s: %d Retry-After %q, want 429 and 40: %s", c.path, resp.StatusCode, resp.Header.Get("Retry-After"), raw)
		}
		e := readEnvelope(t, raw)
		want := map[string]string{"retry_after_seconds": "40", "max_rpm": "2"}
		if e.Format != c.format || e.Code != "key_rpm_exceeded" || !reflect.DeepEqual(e.Fields, want) {
			t.Fatalf("%s: %s envelope, code %q, fields %v: %s", c.path, e.Format, e.Code, e.Fields, raw)
		}
	}
	if resp := env.Post(keyLimitCalls[0].path, other, keyLimitCalls[0].body); resp.StatusCode != 200 {
		t.Fatalf("the account's other key: %d %s", resp.StatusCode, nodetest.Read(t, resp))
	} else {
		nodetest.Read(t, resp)
	}
	clk.Add(40 * time.Second)
	if resp := env.Post(keyLimitCalls[0].path, secret, keyLimitCalls[0].body); resp.StatusCode != 200 {
		t.Fatalf("after Retry-After: %d %s", resp.StatusCode, nodetest.Read(t, resp))
	} else {
		nodetest.Read(t, resp)
	}
}

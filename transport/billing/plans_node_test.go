package billing_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/billing"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// plansCatalog sells basic (3 calls a window) and pro (1000) as subscriptions; accounts
// start on free.
const plansCatalog = "plans:\n" +
	"  - {name: free, window_requests: 10, allow_automated: true}\n" +
	"  - {name: basic, window_requests: 3, allow_automated: true, stripe_price: price_basic}\n" +
	"  - {name: pro, window_requests: 1000, allow_automated: true, stripe_price: price_pro}\n"

func startPlansNode(t *testing.T) *nodetest.Env {
	t.Setenv("NODETEST_STRIPE_KEY", "sk_test_node")
	t.Setenv("NODETEST_STRIPE_WHSEC", stripeSecret)
	env := nodetest.Start(t, nodetest.DefaultCatalog+plansCatalog+"billing:\n  stripe: {secret_key_env: NODETEST_STRIPE_KEY, webhook_secret_env: NODETEST_STRIPE_WHSEC,"+
		" api_base: \"{{SIM}}\"}\n", nodetest.Options{Plan: "free"})
	env.Sim.StripeWebhook(env.Node.URL+billing.WebhookPath, stripeSecret)
	for id, cents := range map[string]int64{"price_basic": 500, "price_pro": 2000} {
		if err := env.Sim.SetStripePrice(id, simulator.StripePrice{UnitAmount: cents, Currency: "usd"}); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

func planOf(t *testing.T, env *nodetest.Env) billing.PlanView {
	t.Helper()
	var v billing.PlanView
	if err := json.Unmarshal(nodetest.Read(t, env.Do(http.MethodGet, "/account/v1/plan", env.Key, "")), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// choosePlan asks for plan name with the account's browser session.
func choosePlan(t *testing.T, env *nodetest.Env, session []string, name string) billing.PlanChange {
	t.Helper()
	resp := env.Post("/account/v1/plan/checkout", "", `{"plan":"`+name+`"}`, session...)
	var c billing.PlanChange
	if body := nodetest.Read(t, resp); resp.StatusCode != http.StatusOK || json.Unmarshal(body, &c) != nil {
		t.Fatalf("choose %s: %d %s", name, resp.StatusCode, body)
	}
	return c
}

// calls makes n chat calls and returns their statuses.
func calls(t *testing.T, env *nodetest.Env, n int) []int {
	t.Helper()
	var out []int
	for range n {
		resp := env.Post("/v1/chat/completions", env.Key, `{"model":"chat","messages":[{"role":"user","content":"hi"}],"max_tokens":5}`)
		nodetest.Read(t, resp)
		out = append(out, resp.StatusCode)
	}
	return out
}

// TestPlansThroughStripe: an account subscribes through Stripe's checkout, then changes plan
// and cancels, and only Stripe's events move it: the upgrade at once, the downgrade and the
// cancellation at the period's end, each with the window of the plan it is on.
func TestPlansThroughStripe(t *testing.T) {
	env := startPlansNode(t)
	v := planOf(t, env)
	if v.Plan != "free" || len(v.Plans) != 2 || v.Plans[0].Name != "basic" || v.Plans[1].Name != "pro" || v.Subscription != nil {
		t.Fatalf("before: %+v", v)
	}
	resp := env.Post("/account/v1/plan/checkout", env.Key, `{"plan":"pro"}`)
	if body := nodetest.Read(t, resp); resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "session_required") {
		t.Fatalf("an API key chose a plan: %d %s", resp.StatusCode, body)
	}
	session := env.Session(env.Account.ID)
	resp = env.Post("/account/v1/plan/checkout", "", `{"plan":"free"}`, session...)
	if body := nodetest.Read(t, resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `plan \"free\" is not sold here`) {
		t.Fatalf("a plan not on sale: %d %s", resp.StatusCode, body)
	}

	// Subscribing: the checkout alone changes nothing; paying does.
	co := choosePlan(t, env, session, "pro")
	if co.URL == "" || co.SessionID == "" || planOf(t, env).Plan != "free" {
		t.Fatalf("checkout %+v", co)
	}
	paid, err := noRedirect.Post(co.URL, "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	paid.Body.Close()
	if loc := paid.Header.Get("Location"); !strings.Contains(loc, "/dashboard/plan?session="+co.SessionID) {
		t.Fatalf("paid: back to %q", loc)
	}
	v = planOf(t, env)
	if v.Plan != "pro" || v.NextPlan != "" || v.Subscription == nil || v.Subscription.Status != "active" || v.Subscription.Plan != "pro" {
		t.Fatalf("after subscribing: %+v %+v", v, v.Subscription)
	}
	sub, renews := v.Subscription.ID, v.Subscription.CurrentPeriodEnd
	if got := calls(t, env, 4); !allOK(got) {
		t.Fatalf("4 calls on pro: %v", got)
	}

	// A downgrade: pro's window stays to the period's end.
	if c := choosePlan(t, env, session, "basic"); c.Subscription != sub {
		t.Fatalf("the change answered %+v, want subscription %s", c, sub)
	}
	if v = planOf(t, env); v.Plan != "pro" || v.NextPlan != "basic" || v.NextPlanAt != renews {
		t.Fatalf("after choosing basic: plan %s, next %s at %s; want pro, then basic at %s", v.Plan, v.NextPlan, v.NextPlanAt, renews)
	}
	if got := calls(t, env, 1); !allOK(got) {
		t.Fatalf("a fifth call before the period's end: %v", got)
	}
	// The period ends (Stripe renews at basic's price): basic's 3 calls a window, 5 made.
	if _, err := env.Sim.RenewSubscription(sub); err != nil {
		t.Fatal(err)
	}
	if v = planOf(t, env); v.Plan != "basic" || v.NextPlan != "" {
		t.Fatalf("after the renewal: %+v", v)
	}
	if got := calls(t, env, 1); got[0] != http.StatusPaymentRequired { // beyond the window, and no credits
		t.Fatalf("a call past basic's window: %v, want 402", got)
	}

	// An upgrade, paid at once: pro's window at once.
	choosePlan(t, env, session, "pro")
	if v = planOf(t, env); v.Plan != "pro" || v.NextPlan != "" {
		t.Fatalf("after the upgrade: %+v", v)
	}
	if got := calls(t, env, 1); !allOK(got) {
		t.Fatalf("a call after the upgrade: %v", got)
	}

	// Cancelling in Stripe's portal: pro to the period's end, then free.
	resp = env.Post("/account/v1/billing/portal", "", "", session...)
	var portal struct {
		URL string `json:"url"`
	}
	if body := nodetest.Read(t, resp); resp.StatusCode != http.StatusOK || json.Unmarshal(body, &portal) != nil || !strings.HasPrefix(portal.URL, env.SimURL) {
		t.Fatalf("portal: %d %s", resp.StatusCode, body)
	}
	cancel, err := noRedirect.PostForm(portal.URL+"/cancel", url.Values{"subscription": {sub}})
	if err != nil {
		t.Fatal(err)
	}
	cancel.Body.Close()
	v = planOf(t, env)
	if v.Plan != "pro" || v.NextPlan != "free" || v.Subscription == nil || !v.Subscription.CancelAtPeriodEnd {
		t.Fatalf("after cancelling: %+v %+v", v, v.Subscription)
	}
	if _, err := env.Sim.RenewSubscription(sub); err != nil { // the period ends: the subscription with it
		t.Fatal(err)
	}
	if v = planOf(t, env); v.Plan != "free" || v.NextPlan != "" || v.Subscription.Status != "canceled" {
		t.Fatalf("after the period's end: %+v %+v", v, v.Subscription)
	}

	var payments struct {
		Data []struct {
			StripeID string `json:"stripe_id"`
			Kind     string `json:"kind"`
			Outcome  string `json:"outcome"`
			Plan     string `json:"plan"`
		} `json:"data"`
	}
	if err := json.Unmarshal(nodetest.Read(t, env.Admin(http.MethodGet, "/admin/v1/payments", "")), &payments); err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	for _, p := range payments.Data {
		if p.Kind != "plan" || !strings.HasPrefix(p.StripeID, "evt_") {
			t.Errorf("record %+v: want a plan record of an event", p)
		}
		outcomes[p.Outcome]++
	}
	if outcomes["upgraded"] != 2 || outcomes["downgraded"] != 1 || outcomes["scheduled"] != 2 || outcomes["ended"] != 1 {
		t.Errorf("plan records by outcome %v", outcomes)
	}
	wantMetrics(t, env, `modelgate_payments_total{kind="plan",outcome="upgraded"} 2`, `modelgate_payments_total{kind="plan",outcome="ended"} 1`)
}

func allOK(statuses []int) bool {
	for _, s := range statuses {
		if s != http.StatusOK {
			return false
		}
	}
	return true
}

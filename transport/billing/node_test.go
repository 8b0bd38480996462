package billing_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/transport/billing"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// A node with billing.stripe on the simulator's Stripe, whose webhooks go to the node.
const stripeSecret = "whsec_node_test"

func startStripeNode(t *testing.T) *nodetest.Env {
	t.Setenv("NODETEST_STRIPE_KEY", "sk_test_node")
	t.Setenv("NODETEST_STRIPE_WHSEC", stripeSecret)
	env := nodetest.Start(t, nodetest.DefaultCatalog+"billing:\n  stripe: {secret_key_env: NODETEST_STRIPE_KEY, webhook_secret_env: NODETEST_STRIPE_WHSEC,"+
		" api_base: \"{{SIM}}\", credit_amounts: [\"10.00\", \"25.00\"]}\n", nodetest.Options{})
	env.Sim.StripeWebhook(env.Node.URL+billing.WebhookPath, stripeSecret)
	return env
}

type creditsView struct {
	BalanceUSD string `json:"balance_usd"`
	History    []struct {
		Kind      string `json:"kind"`
		AmountUSD string `json:"amount_usd"`
	} `json:"history"`
	Purchase *billing.Offer `json:"purchase"`
}

func credits(t *testing.T, env *nodetest.Env) creditsView {
	t.Helper()
	var v creditsView
	if err := json.Unmarshal(nodetest.Read(t, env.Do(http.MethodGet, "/account/v1/credits", env.Key, "")), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// noRedirect reads a redirect instead of following it.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestBuyingCreditsThroughStripe: the account API starts a checkout, the buyer pays on
// Stripe's page, and only the signed webhook grants the credits: once, exactly, whatever
// the redeliveries; the operator sees the payment and the metric counts it.
func TestBuyingCreditsThroughStripe(t *testing.T) {
	env := startStripeNode(t)
	before := credits(t, env)
	if before.Purchase == nil || strings.Join(before.Purchase.AmountsUSD, ",") != "10.00,25.00" {
		t.Fatalf("the credits view offers %+v, want 10.00 and 25.00", before.Purchase)
	}

	resp := env.Post("/account/v1/credits/checkout", env.Key, `{"amount_usd":"7.00"}`)
	if body := nodetest.Read(t, resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "one of 10.00, 25.00") {
		t.Errorf("an amount not on sale: %d %s", resp.StatusCode, body)
	}
	resp = env.Post("/account/v1/credits/checkout", env.Key, `{"amount_usd":"25.00"}`)
	var co billing.Checkout
	if err := json.Unmarshal(nodetest.Read(t, resp), &co); err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(co.URL, env.SimURL) {
		t.Fatalf("checkout: %d %+v %v", resp.StatusCode, co, err)
	}
	if got := credits(t, env).BalanceUSD; got != before.BalanceUSD {
		t.Fatalf("the checkout alone moved the balance from %s to %s", before.BalanceUSD, got)
	}

	// The buyer pays on the hosted page; Stripe sends the webhook, then sends them back.
	paid, err := noRedirect.Post(co.URL, "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	paid.Body.Close()
	if loc := paid.Header.Get("Location"); paid.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "/dashboard/credits?session="+co.SessionID) {
		t.Fatalf("pay: %d to %q, want 303 to the credits page with the session", paid.StatusCode, loc)
	}
	events := env.Sim.StripeEvents()
	if len(events) == 0 {
		t.Fatal("the simulator's Stripe sent no event")
	}
	// The same event again, as Stripe retries: nothing more.
	if err := env.Sim.Redeliver(events[0].ID); err != nil {
		t.Fatal(err)
	}
	after := credits(t, env)
	if want := addUSD(t, before.BalanceUSD, "25"); after.BalanceUSD != want {
		t.Errorf("balance %s after paying 25.00 (and a redelivery), want %s", after.BalanceUSD, want)
	}
	var payments struct {
		Data []struct {
			StripeID  string `json:"stripe_id"`
			Account   string `json:"account_id"`
			AmountUSD string `json:"amount_usd"`
			Cents     int64  `json:"charged_cents"`
		} `json:"data"`
	}
	if err := json.Unmarshal(nodetest.Read(t, env.Admin(http.MethodGet, "/admin/v1/payments", "")), &payments); err != nil {
		t.Fatal(err)
	}
	if len(payments.Data) != 1 || payments.Data[0].StripeID != co.SessionID || payments.Data[0].Account != env.Account.ID ||
		payments.Data[0].AmountUSD != "25" || payments.Data[0].Cents != 2500 {
		t.Errorf("payments %+v, want the one session of 25.00", payments.Data)
	}
	wantMetrics(t, env, `modelgate_payments_total{kind="credits",outcome="granted"} 1`, `modelgate_payments_total{kind="credits",outcome="repeated"} 1`)
}

// Refunds and a dispute sent by the simulator's Stripe take the credits back: exactly, once
// per refund, below zero when the credits were spent.
func TestRefundsAndDisputesThroughStripe(t *testing.T) {
	env := startStripeNode(t)
	start := credits(t, env).BalanceUSD
	first := buy(t, env, "25.00")
	if _, err := env.Sim.Refund(first, 1000); err != nil {
		t.Fatal(err)
	}
	if got, want := credits(t, env).BalanceUSD, addUSD(t, start, "15"); got != want {
		t.Fatalf("after a 10.00 refund of 25.00: %s, want %s", got, want)
	}
	id, err := env.Sim.Refund(first, 0) // the rest
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Sim.Redeliver(id); err != nil {
		t.Fatal(err)
	}
	if got := credits(t, env).BalanceUSD; got != start {
		t.Fatalf("after refunding all of it (and a redelivery): %s, want %s", got, start)
	}
	second := buy(t, env, "10.00")
	if _, err := env.Sim.Dispute(second); err != nil {
		t.Fatal(err)
	}
	if got := credits(t, env).BalanceUSD; got != start {
		t.Fatalf("after a disputed 10.00: %s, want %s", got, start)
	}
	wantMetrics(t, env, `modelgate_payments_total{kind="refund",outcome="reversed"} 3`, `modelgate_payments_total{kind="refund",outcome="repeated"} 1`)
}

// A webhook signed with another secret, or too old, is refused and grants nothing.
func TestForgedAndStaleWebhooksGrantNothing(t *testing.T) {
	env := startStripeNode(t)
	before := credits(t, env).BalanceUSD
	env.Sim.StripeWebhook(env.Node.URL+billing.WebhookPath, "whsec_an_attacker")
	buy(t, env, "10.00")
	events := env.Sim.StripeEvents()
	if len(events) == 0 {
		t.Fatal("no event sent")
	}
	for _, e := range events {
		for _, d := range e.Deliveries {
			if d.Status != http.StatusBadRequest {
				t.Errorf("a forged delivery of %s answered %d, want 400", e.ID, d.Status)
			}
		}
	}
	if got := credits(t, env).BalanceUSD; got != before {
		t.Errorf("a forged webhook moved the balance from %s to %s", before, got)
	}
}

// buy starts a checkout for amount and pays it on the hosted page; it returns the session.
func buy(t *testing.T, env *nodetest.Env, amount string) string {
	t.Helper()
	resp := env.Post("/account/v1/credits/checkout", env.Key, `{"amount_usd":"`+amount+`"}`)
	var co billing.Checkout
	if err := json.Unmarshal(nodetest.Read(t, resp), &co); err != nil || co.URL == "" {
		t.Fatalf("checkout: %d %v", resp.StatusCode, err)
	}
	paid, err := noRedirect.Post(co.URL, "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	paid.Body.Close()
	return co.SessionID
}

// addUSD is a + b as the API writes amounts.
func addUSD(t *testing.T, a, b string) string {
	t.Helper()
	x, err := money.Parse(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := money.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return (x + y).String()
}

// The buyer comes back before Stripe's webhook arrives (its endpoint unreachable until
// then): the way back grants nothing; the webhook, when it comes, grants once, however
// often it comes.
func TestTheWayBackBeforeTheWebhookGrantsNothing(t *testing.T) {
	env := startStripeNode(t)
	before := credits(t, env).BalanceUSD
	env.Sim.StripeWebhook(env.Node.URL+billing.WebhookPath, "") // no endpoint: Stripe holds the event
	session := buy(t, env, "10.00")
	back := env.Do(http.MethodGet, "/dashboard/credits?session="+session, "", "")
	nodetest.Read(t, back)
	if got := credits(t, env).BalanceUSD; back.StatusCode != http.StatusOK || got != before {
		t.Fatalf("back from paying: %d, balance %s; want 200 and %s unchanged", back.StatusCode, got, before)
	}
	env.Sim.StripeWebhook(env.Node.URL+billing.WebhookPath, stripeSecret)
	var completed string
	for _, e := range env.Sim.StripeEvents() {
		if e.Type == "checkout.session.completed" {
			completed = e.ID
		}
	}
	for range 2 {
		if err := env.Sim.Redeliver(completed); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := credits(t, env).BalanceUSD, addUSD(t, before, "10"); got != want {
		t.Errorf("after the webhook, twice: %s, want %s", got, want)
	}
}

// wantMetrics checks the node's metrics hold each of wants.
func wantMetrics(t *testing.T, env *nodetest.Env, wants ...string) {
	t.Helper()
	m := env.Metrics()
	for _, want := range wants {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

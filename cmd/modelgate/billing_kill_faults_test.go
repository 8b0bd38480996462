//go:build faults

package main

// A Stripe webhook that grants credits, with the gateway killed by SIGKILL after the grant is
// durable and before the 200 is written: Stripe sees a failed delivery and sends the event
// again after the restart, and nothing more is granted.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/transport/billing"
)

const (
	bkStripeKeyEnv    = "KILLTEST_STRIPE_KEY"
	bkStripeSecretEnv = "KILLTEST_STRIPE_WHSEC"
	bkStripeSecret    = "whsec_killtest"
)

// bkEvent is an event of the simulator's Stripe and its deliveries.
type bkEvent struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"event"`
	Sent    []struct {
		URL    string `json:"url"`
		Status int    `json:"status"`
		Error  string `json:"error"`
	} `json:"deliveries"`
}

// TestFaultKillNineBetweenGrantAndReply: the gateway dies of SIGKILL inside the webhook of a
// paid $10 checkout, once just after the credits were granted (before the payment is
// recorded) and once just after the payment was recorded (before the 200); Stripe's delivery
// failed. Restarted on the same data directory and addresses, the gateway answers the event
// sent again, and again, with 200, and the account holds exactly one grant of 10.00 for the
// session, and the operator exactly one payment.
func TestFaultKillNineBetweenGrantAndReply(t *testing.T) {
	if testing.Short() {
		t.Skip("kill -9 test: builds and runs the gateway and simulator binaries (skipped with -short)")
	}
	began := time.Now()
	gatewayBin, simBin := ktBuild(t)
	for _, point := range []string{"billing.webhook.granted", "billing.webhook.recorded"} {
		t.Run(point, func(t *testing.T) { killNineInWebhook(t, gatewayBin, simBin, point) })
	}
	t.Logf("%v", time.Since(began).Round(time.Millisecond))
}

func killNineInWebhook(t *testing.T, gatewayBin, simBin, point string) {
	_, simBase := ktStart(t, "modelgate-sim", simBin, nil, regexp.MustCompile(`modelgate-sim listening.* base_url=(http://\S+)`), "--addr", "127.0.0.1:0")
	sim := &ktClient{t: t, base: simBase, http: &http.Client{Timeout: 10 * time.Second}}
	tmp := t.TempDir()
	data, catalog := filepath.Join(tmp, "data"), filepath.Join(tmp, "catalog.yaml")
	cat := strings.ReplaceAll(ktCatalog, "{{SIM}}", simBase) + "billing:\n  stripe: {secret_key_env: " + bkStripeKeyEnv +
		", webhook_secret_env: " + bkStripeSecretEnv + `, api_base: "` + simBase + `", credit_amounts: ["10.00"]}` + "\n"
	if err := os.WriteFile(catalog, []byte(cat), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func(name, addr, adminAddr string, env ...string) (*ktProc, *ktClient) {
		env = append(env, "MODELGATE_ADMIN_TOKEN="+ktAdminToken, ktSimKeyEnv+"=sim-secret", bkStripeKeyEnv+"=sk_test_killtest",
			bkStripeSecretEnv+"="+bkStripeSecret)
		servingRe := regexp.MustCompile(`"msg":"modelgate serving".*"url":"(http://[^"]+)","admin":"(http://[^"]+)"`)
		p, addrs := ktStart(t, "modelgate ("+name+")", gatewayBin, env, servingRe, "serve", "--config", catalog, "--data", data,
			"--addr", addr, "--admin-addr", adminAddr)
		base, admin, _ := strings.Cut(addrs, " ")
		c := &ktClient{t: t, base: base, adminBase: admin, http: &http.Client{Timeout: 10 * time.Second}}
		c.waitHealthy()
		return p, c
	}
	gw, c := start("armed at "+point, "127.0.0.1:0", "127.0.0.1:0", supervise.KillAtEnv+"="+point)

	var acct struct {
		ID string `json:"id"`
	}
	c.admin(http.MethodPost, "/accounts", map[string]string{"email": "buyer@test.local", "plan": "kt-paid"}, 201, &acct)
	var key struct {
		Secret string `json:"key"`
	}
	c.admin(http.MethodPost, "/accounts/"+acct.ID+"/keys", map[string]string{"name": "buyer"}, 201, &key)
	hook := c.base + billing.WebhookPath
	if status, raw, err := sim.do(http.MethodPut, "/_sim/stripe/webhook", "", map[string]string{"url": hook, "secret": bkStripeSecret}); err != nil || status != 200 {
		t.Fatalf("point the simulator's webhook at the gateway: %d %s %v", status, raw, err)
	}
	if v := bkCredits(t, c, key.Secret); len(v.History) != 0 || ktAmount(t, v.BalanceUSD) != 0 {
		t.Fatalf("a new account's credits: %+v, want none", v)
	}

	// The checkout, paid on the hosted page: the simulator delivers the webhook before it
	// answers, and the gateway dies at the fault point inside it.
	status, raw, err := c.do(http.MethodPost, "/account/v1/credits/checkout", key.Secret, map[string]string{"amount_usd": "10.00"})
	var co billing.Checkout
	if err != nil || status != 200 || json.Unmarshal(raw, &co) != nil || co.SessionID == "" || !strings.HasPrefix(co.URL, simBase+"/") {
		t.Fatalf("checkout: %d %s %v", status, raw, err)
	}
	noRedirect := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	paid, err := noRedirect.Post(co.URL, "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	paid.Body.Close()
	if paid.StatusCode != http.StatusSeeOther {
		t.Fatalf("pay: %d, want 303", paid.StatusCode)
	}
	select {
	case <-gw.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the gateway is still running after the webhook reached " + point)
	}
	if ws, ok := gw.err.(*exec.ExitError); !ok || ws.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("gateway ended with %v, want killed by SIGKILL", gw.err)
	}
	ev := bkSessionEvent(t, sim, co.SessionID)
	if len(ev.Sent) == 0 {
		t.Fatal("the simulator recorded no delivery of the event")
	}
	for _, d := range ev.Sent {
		if d.URL != hook || d.Status != 0 || d.Error == "" {
			t.Fatalf("deliveries before the restart %+v: want every one to %s failed without an answer", ev.Sent, hook)
		}
	}
	before := len(ev.Sent)

	// The same gateway again, on its data directory and its addresses (Stripe's endpoint),
	// not armed; the event is sent again twice, as Stripe retries and an operator resends.
	pub, adm := strings.TrimPrefix(c.base, "http://"), strings.TrimPrefix(c.adminBase, "http://")
	gw, c = start("restarted", pub, adm)
	for i := 1; i <= 2; i++ {
		status, raw, err := sim.do(http.MethodPost, "/_sim/stripe/events/"+url.PathEscape(ev.ID)+"/redeliver", "", nil)
		var got bkEvent
		if err != nil || status != 200 || json.Unmarshal(raw, &got) != nil {
			t.Fatalf("redeliver %d: %d %s %v", i, status, raw, err)
		}
		if n := len(got.Sent); n != before+i || got.Sent[n-1].URL != hook || got.Sent[n-1].Status != http.StatusOK {
			t.Fatalf("redeliver %d: deliveries %+v, want %d, the last one answered 200", i, got.Sent, before+i)
		}
	}

	v := bkCredits(t, c, key.Secret)
	if ktAmount(t, v.BalanceUSD) != ktAmount(t, "10.00") || len(v.History) != 1 || v.History[0].Kind != "top_up" ||
		v.History[0].Reference != co.SessionID || ktAmount(t, v.History[0].AmountUSD) != ktAmount(t, "10.00") {
		t.Errorf("credits %+v, want a balance of 10.00 and one top-up of 10.00 for %s", v, co.SessionID)
	}
	var q struct {
		Balance string `json:"balance_usd"`
	}
	c.admin(http.MethodGet, "/accounts/"+acct.ID+"/quota", nil, 200, &q)
	if ktAmount(t, q.Balance) != ktAmount(t, "10.00") {
		t.Errorf("the operator's view of the balance: %s, want 10.00", q.Balance)
	}
	var payments struct {
		Data []struct {
			StripeID string `json:"stripe_id"`
			EventID  string `json:"stripe_event_id"`
			Kind     string `json:"kind"`
			Outcome  string `json:"outcome"`
			Account  string `json:"account_id"`
			Amount   string `json:"amount_usd"`
			Cents    int64  `json:"charged_cents"`
		} `json:"data"`
	}
	c.admin(http.MethodGet, "/payments", nil, 200, &payments)
	if p := payments.Data; len(p) != 1 || p[0].StripeID != co.SessionID || p[0].EventID != ev.ID || p[0].Account != acct.ID ||
		ktAmount(t, p[0].Amount) != ktAmount(t, "10.00") || p[0].Cents != 1000 {
		t.Errorf("payments %+v, want the one session %s of 10.00 (event %s)", p, co.SessionID, ev.ID)
	}
}

// bkCreditsView is GET /account/v1/credits.
type bkCreditsView struct {
	BalanceUSD string `json:"balance_usd"`
	History    []struct {
		Kind      string `json:"kind"`
		AmountUSD string `json:"amount_usd"`
		Reference string `json:"reference"`
	} `json:"history"`
}

func bkCredits(t *testing.T, c *ktClient, key string) bkCreditsView {
	t.Helper()
	status, raw, err := c.do(http.MethodGet, "/account/v1/credits", key, nil)
	var v bkCreditsView
	if err != nil || status != 200 || json.Unmarshal(raw, &v) != nil {
		t.Fatalf("GET /account/v1/credits: %d %s %v", status, raw, err)
	}
	return v
}

// bkSessionEvent is the one checkout.session.completed event the simulator's Stripe made for
// the session.
func bkSessionEvent(t *testing.T, sim *ktClient, session string) bkEvent {
	t.Helper()
	status, raw, err := sim.do(http.MethodGet, "/_sim/stripe/events", "", nil)
	var list struct {
		Events []bkEvent `json:"events"`
	}
	if err != nil || status != 200 || json.Unmarshal(raw, &list) != nil {
		t.Fatalf("GET /_sim/stripe/events: %d %s %v", status, raw, err)
	}
	var found []bkEvent
	for _, ev := range list.Events {
		var body struct {
			Data struct {
				Object struct {
					ID string `json:"id"`
				} `json:"object"`
			} `json:"data"`
		}
		if ev.Type == "checkout.session.completed" && json.Unmarshal(ev.Payload, &body) == nil && body.Data.Object.ID == session {
			found = append(found, ev)
		}
	}
	if len(found) != 1 {
		t.Fatalf("events of session %s: %d in %s, want one checkout.session.completed", session, len(found), raw)
	}
	return found[0]
}

package clustertest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/cluster/accounts"
	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/billing"
)

// TestStripeOnANodeThatDoesNotOwnTheAccount: on three nodes, Stripe's webhooks reach a node
// that does not lead the account's shard. A credit purchase is granted once (the webhook
// delivered twice), a refund received on that node finds the purchase, and the plan the
// account buys moves as its subscription's events say (an upgrade at once, a downgrade at the
// period's end), with the window of the plan it is on counted on every node.
func TestStripeOnANodeThatDoesNotOwnTheAccount(t *testing.T) {
	c := New(t, Options{Nodes: 3, Shards: 4})
	c.StartAll()
	c.WaitLeaders(30 * time.Second)
	acct, secret := newAccountKey(t, c.Nodes[0], "free")
	leader := shardLeader(t, c, acct)
	var hook *Node
	for _, n := range c.Nodes {
		if n.ID != leader {
			hook = n
			break
		}
	}
	c.Sim.StripeWebhook(hook.URL()+billing.WebhookPath, StripeSecret)
	for id, cents := range map[string]int64{"price_ct_basic": 500, "price_ct_pro": 2000} {
		if err := c.Sim.SetStripePrice(id, simulator.StripePrice{UnitAmount: cents, Currency: "usd"}); err != nil {
			t.Fatal(err)
		}
	}
	session, csrf := login(t, c, acct)
	other := c.Nodes[(int(hook.ID))%len(c.Nodes)] // the account API on yet another node

	// Credits: $10, the webhook delivered twice; then a $4 refund.
	r := authCall(t, other, "POST", "/account/v1/credits/checkout", map[string]string{"amount_usd": "10.00"}, session, csrf)
	var co billing.Checkout
	if json.Unmarshal([]byte(r.body), &co); r.status != 200 || co.URL == "" {
		t.Fatalf("credits checkout on node %d: %d %s", other.ID, r.status, r.body)
	}
	pay(t, co.URL)
	events := c.Sim.StripeEvents()
	if err := c.Sim.Redeliver(events[len(events)-1].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sim.Refund(co.SessionID, 400); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		if got := balanceOn(t, n, acct); got != "6" {
			t.Errorf("node %d: balance %s after 10.00 bought and 4.00 refunded, want 6", n.ID, got)
		}
	}

	// A plan: pro bought through the checkout, then basic chosen (pro to the period's end).
	r = authCall(t, other, "POST", "/account/v1/plan/checkout", map[string]string{"plan": ProPlan}, session, csrf)
	var pc billing.PlanChange
	if json.Unmarshal([]byte(r.body), &pc); r.status != 200 || pc.URL == "" {
		t.Fatalf("plan checkout: %d %s", r.status, r.body)
	}
	pay(t, pc.URL)
	view := planOn(t, c.Nodes[0], session)
	if view.Plan != ProPlan || view.Subscription == nil {
		t.Fatalf("after subscribing: %+v", view)
	}
	sub := view.Subscription.ID
	for _, n := range c.Nodes { // 6 calls: more than basic's window of 3
		for range 2 {
			if status, _ := n.Chat(secret); status != http.StatusOK {
				t.Fatalf("node %d: a call on %s: %d", n.ID, ProPlan, status)
			}
		}
	}
	if r = authCall(t, other, "POST", "/account/v1/plan/checkout", map[string]string{"plan": BasicPlan}, session, csrf); r.status != 200 {
		t.Fatalf("choose %s: %d %s", BasicPlan, r.status, r.body)
	}
	for _, n := range c.Nodes {
		if v := planOn(t, n, session); v.Plan != ProPlan || v.NextPlan != BasicPlan {
			t.Errorf("node %d after the downgrade: plan %s, next %s; want %s, then %s", n.ID, v.Plan, v.NextPlan, ProPlan, BasicPlan)
		}
	}
	if _, err := c.Sim.RenewSubscription(sub); err != nil { // the period ends
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		if v := planOn(t, n, session); v.Plan != BasicPlan || v.NextPlan != "" {
			t.Errorf("node %d after the renewal: plan %s, next %s; want %s", n.ID, v.Plan, v.NextPlan, BasicPlan)
		}
		// Basic's window is spent (6 calls of 3): each further call is paid from the credits.
		status, h, b := n.Do(http.MethodPost, "/v1/chat/completions", secret, chatBody())
		if status != http.StatusOK || h.Get("X-Modelgate-Cost") == "" || h.Get("X-Modelgate-Cost") == "0" {
			t.Errorf("node %d: a call past %s's window: %d cost %q %s; want 200 paid from credits", n.ID, BasicPlan, status, h.Get("X-Modelgate-Cost"), b)
		}
	}

	// Back to pro: at once, and the calls are in the window again.
	if r = authCall(t, other, "POST", "/account/v1/plan/checkout", map[string]string{"plan": ProPlan}, session, csrf); r.status != 200 {
		t.Fatalf("choose %s again: %d %s", ProPlan, r.status, r.body)
	}
	for _, n := range c.Nodes {
		if v := planOn(t, n, session); v.Plan != ProPlan {
			t.Errorf("node %d after the upgrade: plan %s, want %s", n.ID, v.Plan, ProPlan)
		}
		status, h, _ := n.Do(http.MethodPost, "/v1/chat/completions", secret, chatBody())
		if status != http.StatusOK || h.Get("X-Modelgate-Cost") != "0" {
			t.Errorf("node %d: a call on %s: %d cost %q; want 200 within the window (cost 0)", n.ID, ProPlan, status, h.Get("X-Modelgate-Cost"))
		}
	}

	// Every node lists the same payments: the purchase, its refund, and the plan events.
	var kinds []string
	for _, n := range c.Nodes {
		var p struct {
			Data []struct {
				Kind string `json:"kind"`
			} `json:"data"`
		}
		adminJSON(t, n, "/admin/v1/payments", &p)
		count := map[string]int{}
		for _, d := range p.Data {
			count[d.Kind]++
		}
		if count["credits"] != 1 || count["refund"] != 1 || count["plan"] < 4 {
			t.Errorf("node %d lists payments %v: want 1 credits, 1 refund and the plan events", n.ID, count)
		}
		kinds = append(kinds, strings.Repeat("x", len(p.Data)))
	}
	if kinds[0] != kinds[1] || kinds[1] != kinds[2] {
		t.Errorf("the nodes list %d, %d and %d payments", len(kinds[0]), len(kinds[1]), len(kinds[2]))
	}
}

// shardLeader is the node leading the account's shard.
func shardLeader(t *testing.T, c *Cluster, acct string) uint64 {
	t.Helper()
	s, err := c.Nodes[0].Status()
	if err != nil {
		t.Fatal(err)
	}
	shard := accounts.ShardOf(acct, membership.FirstAccountShard, s.Shards)
	for _, v := range s.Shard {
		if v.Shard == shard && v.Leader != 0 {
			return v.Leader
		}
	}
	t.Fatalf("no leader of shard %d in %+v", shard, s.Shard)
	return 0
}

// login sets the account's password through the admin API and logs in on a node: the
// session and its CSRF token.
func login(t *testing.T, c *Cluster, acct string) (session, csrf string) {
	t.Helper()
	const password = "a long enough passphrase 42"
	if status, b := c.Nodes[0].Admin(http.MethodPut, "/admin/v1/accounts/"+acct+"/password", map[string]string{"password": password}); status != http.StatusOK {
		t.Fatalf("set the password: %d %s", status, b)
	}
	var a struct{ Email string }
	adminJSON(t, c.Nodes[0], "/admin/v1/accounts/"+acct, &a)
	r := authCall(t, c.Nodes[1], "POST", "/auth/login", map[string]string{"email": a.Email, "password": password}, "", "")
	var l struct {
		CSRF string `json:"csrf_token"`
	}
	json.Unmarshal([]byte(r.body), &l)
	if session = sessionCookie(r.header); r.status != 200 || session == "" || l.CSRF == "" {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	return session, l.CSRF
}

// pay pays a checkout on the simulator's hosted page.
func pay(t *testing.T, checkout string) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(checkout, url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("pay %s: %d", checkout, resp.StatusCode)
	}
}

func planOn(t *testing.T, n *Node, session string) billing.PlanView {
	t.Helper()
	r := authCall(t, n, "GET", "/account/v1/plan", nil, session, "")
	var v billing.PlanView
	if err := json.Unmarshal([]byte(r.body), &v); err != nil || r.status != 200 {
		t.Fatalf("node %d: plan: %d %s", n.ID, r.status, r.body)
	}
	return v
}

func balanceOn(t *testing.T, n *Node, acct string) string {
	t.Helper()
	var q struct {
		Balance string `json:"balance_usd"`
	}
	adminJSON(t, n, "/admin/v1/accounts/"+acct+"/quota", &q)
	return q.Balance
}

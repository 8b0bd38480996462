package clustertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
)

// TestCallsOnEveryNodeCountAgainstOneAccountExactly: one account on a plan of 3 calls, topped
// up through node 2, called 3 times through each of four nodes (3 voters per account shard:
// the fourth is a non-voting replica of a shard, and its proposals are forwarded too). Its steps all go to its
// shard's leader whichever node took the call, so the window counts 3 (not 3 per node), the
// 9 calls beyond it are paid, and every node's view of the account agrees with its log:
// balance = top-up − Σ logged cost, exactly, with all 12 calls logged once; and every node
// shows each call's cost (X-Modelgate-Cost) in GET /v1/generations/{id} and GET /v1/key.
func TestCallsOnEveryNodeCountAgainstOneAccountExactly(t *testing.T) {
	c := New(t, Options{Nodes: 4, Shards: 4, Replicas: 3})
	c.StartAll()
	acct, secret := newAccountKey(t, c.Nodes[0], PaidPlan)
	if status, b := c.Nodes[1].Admin(http.MethodPost, "/admin/v1/accounts/"+acct+"/credits",
		map[string]any{"amount_usd": "1.00", "idempotency_key": "ct-topup"}); status != http.StatusOK && status != http.StatusCreated {
		t.Fatalf("top-up: %d %s", status, b)
	}
	costs := map[string]string{} // X-Modelgate-Cost by X-Request-Id
	var headerSum money.Amount
	for _, n := range c.Nodes {
		for range 3 {
			status, h, b := n.Do(http.MethodPost, "/v1/chat/completions", secret, map[string]any{
				"model": Model, "messages": []map[string]string{{"role": "user", "content": "hi"}}, "max_tokens": 5})
			if status != http.StatusOK {
				t.Fatalf("node %d: chat: %d %s", n.ID, status, b)
			}
			costs[h.Get("X-Request-Id")] = h.Get("X-Modelgate-Cost")
			headerSum += mustMoney(t, h.Get("X-Modelgate-Cost"))
		}
	}
	for _, n := range c.Nodes {
		var q struct {
			Balance string `json:"balance_usd"`
			Spent   string `json:"spent_usd"`
			Window  struct {
				Used float64 `json:"used"`
			} `json:"window"`
			InFlight int `json:"in_flight"`
		}
		adminJSON(t, n, "/admin/v1/accounts/"+acct+"/quota", &q)
		var u struct {
			Data   []json.RawMessage `json:"data"`
			Totals struct {
				Count   int64  `json:"count"`
				CostUSD string `json:"cost_usd"`
			} `json:"totals"`
		}
		// A follower's log is its replica's: it has every entry the leader applied once it
		// caught up, which the quota read (linearizable) above waited for on the shard.
		waitLog(t, n, acct, 12, &u)
		balance, spent, cost := mustMoney(t, q.Balance), mustMoney(t, q.Spent), mustMoney(t, u.Totals.CostUSD)
		top := mustMoney(t, "1.00")
		if q.Window.Used != 3 || q.InFlight != 0 || u.Totals.Count != 12 || spent != cost || balance != top-cost || cost <= 0 {
			t.Errorf("node %d: window used %v, in flight %d, logged %d costing %s, spent %s, balance %s: want 3, 0, 12, spent = logged cost > 0, balance = 1.00 − logged cost",
				n.ID, q.Window.Used, q.InFlight, u.Totals.Count, cost, spent, balance)
		}
		if headerSum != cost {
			t.Errorf("node %d: the answers' X-Modelgate-Cost sum to %s, the log to %s", n.ID, headerSum, cost)
		}
		checkKeyHolderViews(t, n, secret, costs, cost)
	}
}

// checkKeyHolderViews: every call's GET /v1/generations/{id} on node n (its replica of the
// account's shard, caught up by waitLog) holds the cost its answer's X-Modelgate-Cost said,
// and GET /v1/key counts every call and the logged cost.
func checkKeyHolderViews(t *testing.T, n *Node, secret string, costs map[string]string, logged money.Amount) {
	t.Helper()
	for rid, want := range costs {
		var g struct {
			Data struct {
				ID      string `json:"id"`
				CostUSD string `json:"cost_usd"`
				Status  int    `json:"status"`
			} `json:"data"`
		}
		status, _, b := n.Do(http.MethodGet, "/v1/generations/"+rid, secret, nil)
		if json.Unmarshal(b, &g); status != http.StatusOK || g.Data.ID != rid || g.Data.CostUSD != want || g.Data.Status != 200 {
			t.Errorf("node %d: generation %s: %d %s; want cost %s", n.ID, rid, status, b, want)
		}
	}
	var k struct {
		Data struct {
			Usage     string `json:"usage"`
			ThisMonth struct {
				Requests int64 `json:"requests"`
			} `json:"this_month"`
		} `json:"data"`
	}
	status, _, b := n.Do(http.MethodGet, "/v1/key", secret, nil)
	if json.Unmarshal(b, &k); status != http.StatusOK || k.Data.ThisMonth.Requests != int64(len(costs)) || k.Data.Usage != logged.String() {
		t.Errorf("node %d: /v1/key: %d %s; want %d requests costing %s", n.ID, status, b, len(costs), logged)
	}
}

func newAccountKey(t *testing.T, n *Node, plan string) (acct, secret string) {
	t.Helper()
	status, b := n.Admin(http.MethodPost, "/admin/v1/accounts", map[string]any{"email": fmt.Sprintf("bill%d@example.com", time.Now().UnixNano()), "plan": plan})
	if status != http.StatusCreated {
		t.Fatalf("create account: %d %s", status, b)
	}
	var a struct{ ID string }
	json.Unmarshal(b, &a)
	status, b = n.Admin(http.MethodPost, "/admin/v1/accounts/"+a.ID+"/keys", map[string]any{"name": "bill"})
	if status != http.StatusCreated {
		t.Fatalf("create key: %d %s", status, b)
	}
	var k struct{ Key string }
	json.Unmarshal(b, &k)
	return a.ID, k.Key
}

func adminJSON(t *testing.T, n *Node, path string, v any) {
	t.Helper()
	status, b := n.Admin(http.MethodGet, path, nil)
	if status != http.StatusOK {
		t.Fatalf("node %d: GET %s: %d %s", n.ID, path, status, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("node %d: GET %s: %v: %s", n.ID, path, err, b)
	}
}

// waitLog reads the account's usage on n until it holds want entries (a follower applies
// the shard's log a moment after the leader), for at most 5 s.
func waitLog(t *testing.T, n *Node, acct string, want int64, v any) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var count struct {
			Totals struct{ Count int64 } `json:"totals"`
		}
		adminJSON(t, n, "/admin/v1/accounts/"+acct+"/usage", &count)
		if count.Totals.Count >= want || time.Now().After(deadline) {
			adminJSON(t, n, "/admin/v1/accounts/"+acct+"/usage", v)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mustMoney(t *testing.T, s string) money.Amount {
	t.Helper()
	m, err := money.Parse(s)
	if err != nil {
		t.Fatalf("money %q: %v", s, err)
	}
	return m
}

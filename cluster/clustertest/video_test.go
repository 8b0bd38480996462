package clustertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/modelgate/modelgate/cluster/accounts"
	"github.com/modelgate/modelgate/cluster/membership"
)

// videoTask is what a poll reads of a task.
type videoTask struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Progress int    `json:"progress"`
	Metadata *struct {
		URL string `json:"url"`
	} `json:"metadata"`
	Error *struct{ Code string } `json:"error"`
}

// TestAVideoTaskSurvivesItsShardLeaderKilledAndBillsOnce: a paid video is created on node 2
// and polled on node 3; mid-task (the simulator's job takes 6 s) the leader of the
// account's shard, where the task's actor runs, is killed with SIGKILL. The new leader takes
// the task up from the shard's record: it completes once, every node shows it completed,
// and the account is billed exactly once (one log entry for the task, costing 4 s × $0.05,
// and the balance is the top-up less everything logged), also on the killed node once it
// is back.
func TestAVideoTaskSurvivesItsShardLeaderKilledAndBillsOnce(t *testing.T) {
	const shards = 2
	c := New(t, Options{Nodes: 3, Shards: shards})
	c.StartAll()
	putSim(t, c, VideoRoute, `{"video_ms": 6000}`)
	acct, secret := newAccountKey(t, c.Nodes[0], PaidPlan)
	if status, b := c.Nodes[1].Admin(http.MethodPost, "/admin/v1/accounts/"+acct+"/credits",
		map[string]any{"amount_usd": "1.00", "idempotency_key": "video-topup"}); status != http.StatusOK && status != http.StatusCreated {
		t.Fatalf("top-up: %d %s", status, b)
	}
	for range 3 { // the plan's 3 calls: the video is paid
		if status, b := c.Nodes[0].Chat(secret); status != http.StatusOK {
			t.Fatalf("chat: %d %s", status, b)
		}
	}
	status, _, b := c.Nodes[1].Do(http.MethodPost, "/v1/videos", secret, map[string]any{"model": VideoModel, "prompt": "a wave", "mode": "text", "seconds": "4"})
	var task videoTask
	if status != http.StatusOK || json.Unmarshal(b, &task) != nil || task.ID == "" {
		t.Fatalf("create on node 2: %d %s", status, b)
	}
	poll := func(n *Node) videoTask {
		t.Helper()
		status, _, b := n.Do(http.MethodGet, "/v1/videos/"+task.ID+"?model="+VideoModel, secret, nil)
		var v videoTask
		if status != http.StatusOK || json.Unmarshal(b, &v) != nil {
			t.Fatalf("node %d: poll: %d %s", n.ID, status, b)
		}
		return v
	}
	waitTask(t, 10*time.Second, func() bool { return poll(c.Nodes[2]).Status == "in_progress" }, "in progress on node 3")

	shard := accounts.ShardOf(acct, membership.FirstAccountShard, shards)
	leader := c.shardLeader(shard)
	leader.Kill()
	c.WaitLeaders(30 * time.Second)
	if c.shardLeader(shard) == leader {
		t.Fatalf("node %d still leads shard %d after its kill", leader.ID, shard)
	}
	var running []*Node
	for _, n := range c.Nodes {
		if n.Running() {
			running = append(running, n)
		}
	}
	waitTask(t, 40*time.Second, func() bool { return poll(running[0]).Status == "completed" }, "completed after the failover")
	leader.Start()
	wantCost := mustMoney(t, "0.20")
	for _, n := range c.Nodes {
		waitTask(t, 10*time.Second, func() bool { return poll(n).Status == "completed" }, fmt.Sprintf("completed on node %d", n.ID))
		if v := poll(n); v.Progress != 100 || v.Metadata == nil || v.Metadata.URL == "" {
			t.Errorf("node %d: completed task %+v, want progress 100 and a URL", n.ID, v)
		}
		var u struct {
			Data []struct {
				RequestID string `json:"request_id"`
				CostUSD   string `json:"cost_usd"`
			} `json:"data"`
			Totals struct {
				Count   int64  `json:"count"`
				CostUSD string `json:"cost_usd"`
			} `json:"totals"`
		}
		waitVideoLogged(t, n, acct, task.ID, &u)
		var billed []string
		for _, e := range u.Data {
			if e.RequestID == task.ID {
				billed = append(billed, e.CostUSD)
			}
		}
		var q struct {
			Balance string `json:"balance_usd"`
			Spent   string `json:"spent_usd"`
		}
		adminJSON(t, n, "/admin/v1/accounts/"+acct+"/quota", &q)
		cost := mustMoney(t, u.Totals.CostUSD)
		if len(billed) != 1 || mustMoney(t, billed[0]) != wantCost || mustMoney(t, q.Balance) != mustMoney(t, "1.00")-cost || mustMoney(t, q.Spent) != cost {
			t.Errorf("node %d: task logged %d times costing %q, balance %s, spent %s, logged cost %s: want once at %s, balance 1.00 − logged cost, spent = logged cost",
				n.ID, len(billed), billed, q.Balance, q.Spent, cost, wantCost)
		}
	}
}

// shardLeader is the node every running node names the leader of shard.
func (c *Cluster) shardLeader(shard uint64) *Node {
	c.t.Helper()
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		st, err := n.Status()
		if err != nil {
			c.t.Fatal(err)
		}
		for _, s := range st.Shard {
			if s.Shard == shard && s.Leader != 0 {
				return c.Nodes[s.Leader-1]
			}
		}
	}
	c.t.Fatalf("no node knows a leader of shard %d", shard)
	return nil
}

// putSim sets a simulator route's behaviour.
func putSim(t *testing.T, c *Cluster, route, behaviour string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, c.SimURL+"/_sim/routes/"+route, bytes.NewBufferString(behaviour))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("simulator route %s: %d", route, resp.StatusCode)
	}
}

func waitTask(t *testing.T, d time.Duration, ok func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not %s within %s", what, d)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitVideoLogged reads the account's usage on n until the task's entry is there (a
// replica applies the settle a moment after the leader), for at most 5 s.
func waitVideoLogged(t *testing.T, n *Node, acct, task string, v any) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		adminJSON(t, n, "/admin/v1/accounts/"+acct+"/usage", v)
		b, _ := json.Marshal(v)
		if bytes.Contains(b, []byte(task)) || time.Now().After(deadline) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

package clustertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/cluster/accounts"
	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/codec/money"
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
// and polled on node 3; mid-task (the simulator's job takes 4 s) the leader of the
// account's shard, where the task's actor runs, is killed with SIGKILL. The new leader takes
// the task up from the shard's record: it completes once, every node shows it completed,
// and the account is billed exactly once (one log entry for the task, costing 4 s × $0.05,
// and the balance is the top-up less everything logged), also on the killed node once it
// is back. The finished video was copied to a second node before completion: with the node
// that stored it killed too, every other node serves the same bytes at its URL.
func TestAVideoTaskSurvivesItsShardLeaderKilledAndBillsOnce(t *testing.T) {
	const shards = 2
	c := New(t, Options{Nodes: 3, Shards: shards})
	c.StartAll()
	putSim(t, c, VideoRoute, `{"video_ms": 4000}`)
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
	// A poll right after a kill may meet a shard still electing or catching up (a 5xx with
	// Retry-After): waits poll again.
	poll := func(n *Node) (videoTask, string) {
		t.Helper()
		status, _, b := n.Do(http.MethodGet, "/v1/videos/"+task.ID+"?model="+VideoModel, secret, nil)
		var v videoTask
		if status != http.StatusOK || json.Unmarshal(b, &v) != nil {
			return v, fmt.Sprintf("%d %s", status, b)
		}
		return v, v.Status
	}
	state := func(n *Node) string { _, s := poll(n); return s }
	waitTask(t, 10*time.Second, func() bool { return state(c.Nodes[2]) == "in_progress" }, "in progress on node 3")

	shard := accounts.ShardOf(acct, membership.FirstAccountShard, shards)
	leader := c.shardLeader(shard)
	leader.Kill()
	c.WaitLeaders(30 * time.Second)
	successor := c.shardLeader(shard) // runs the task from here on, and stores its video
	if successor == leader {
		t.Fatalf("node %d still leads shard %d after its kill", leader.ID, shard)
	}
	waitTask(t, 40*time.Second, func() bool { return state(successor) == "completed" }, "completed after the failover")
	// The killed leader comes back, and the node that stored the video goes: the video must
	// be on a second node, from which every node serves it.
	leader.Start()
	c.WaitLeaders(30 * time.Second)
	successor.Kill()
	c.WaitLeaders(30 * time.Second)
	var content []byte
	check := func(n *Node) {
		t.Helper()
		waitTask(t, 10*time.Second, func() bool { return state(n) == "completed" }, fmt.Sprintf("completed on node %d", n.ID))
		v, _ := poll(n)
		if v.Progress != 100 || v.Metadata == nil || !strings.Contains(v.Metadata.URL, "/assets/vid/") {
			t.Fatalf("node %d: completed task %+v, want progress 100 and a video URL", n.ID, v)
		}
		path := v.Metadata.URL[strings.Index(v.Metadata.URL, "/assets/vid/"):]
		status, h, body := n.Do(http.MethodGet, path, "", nil)
		if status != http.StatusOK || h.Get("Content-Type") != "video/mp4" || len(body) == 0 || (content != nil && !bytes.Equal(body, content)) {
			t.Errorf("node %d: GET %s: %d %q, %d bytes (the first node served %d)", n.ID, path, status, h.Get("Content-Type"), len(body), len(content))
		}
		if content == nil {
			content = body
		}
		checkBilledOnce(t, n, acct, task.ID, mustMoney(t, "0.20"))
	}
	for _, n := range c.Nodes {
		if n != successor {
			check(n)
		}
	}
	successor.Start()
	check(successor)
}

// checkBilledOnce checks on n that the account's log holds task once, costing want, and
// that its balance is the 1.00 top-up less everything logged.
func checkBilledOnce(t *testing.T, n *Node, acct, task string, want money.Amount) {
	t.Helper()
	var u struct {
		Data []struct {
			RequestID string `json:"request_id"`
			CostUSD   string `json:"cost_usd"`
		} `json:"data"`
		Totals struct {
			CostUSD string `json:"cost_usd"`
		} `json:"totals"`
	}
	waitVideoLogged(t, n, acct, task, &u)
	var billed []string
	for _, e := range u.Data {
		if e.RequestID == task {
			billed = append(billed, e.CostUSD)
		}
	}
	var q struct {
		Balance string `json:"balance_usd"`
		Spent   string `json:"spent_usd"`
	}
	adminJSON(t, n, "/admin/v1/accounts/"+acct+"/quota", &q)
	cost := mustMoney(t, u.Totals.CostUSD)
	if len(billed) != 1 || mustMoney(t, billed[0]) != want || mustMoney(t, q.Balance) != mustMoney(t, "1.00")-cost || mustMoney(t, q.Spent) != cost {
		t.Errorf("node %d: task logged %d times costing %q, balance %s, spent %s, logged cost %s: want once at %s, balance 1.00 − logged cost, spent = logged cost",
			n.ID, len(billed), billed, q.Balance, q.Spent, cost, want)
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

package node

// Two probes. /healthz says the process is alive: 200 whenever it answers, with what is
// wrong in its body, so a liveness probe never restarts a node for what a restart does
// not cure (a full disk, a leaderless shard, a drain). /readyz says whether to send it
// calls: 503 while it drains, while a restarted node's replicas have not caught up, while
// its store refuses writes, and when the metadata shard has been without a leader for
// longer than a call waits for one. An election alone (a drain's leader transfer, a kill)
// does not make the other nodes unready: their calls wait it out.

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/transport/respond"
)

// readyGrace is how long the metadata shard may be without a leader before a node says it
// is not ready: the budget a call's key check waits for one.
const readyGrace = keyCheckTimeout

// catchUpTry bounds one wait for a shard to catch up; a try that fails (no leader yet) is
// made again, catchUpPause later, until the node closes.
const (
	catchUpTry   = 10 * time.Second
	catchUpPause = 200 * time.Millisecond
)

// readiness is what /readyz reads in cluster mode.
type readiness struct {
	caughtUp       atomic.Bool
	metaLeaderless atomic.Int64 // unix ns since the metadata shard has had no leader known; 0: it has one
	stop           context.CancelFunc
}

// readyState is one reading of a node, for the verdict.
type readyState struct {
	cluster         bool
	draining        bool
	caughtUp        bool
	metaLeaderless  time.Duration // 0: the metadata shard has a leader
	storeWritable   bool
	storeProblem    string
	leaderlessShard []uint64
}

// verdict is /readyz's answer for s: the status code and the status word.
func (s readyState) verdict() (int, string) {
	switch {
	case s.draining:
		return http.StatusServiceUnavailable, "draining"
	case s.cluster && !s.caughtUp:
		return http.StatusServiceUnavailable, "starting"
	case s.cluster && s.metaLeaderless > readyGrace:
		return http.StatusServiceUnavailable, "unavailable"
	case !s.storeWritable:
		return http.StatusServiceUnavailable, "degraded"
	}
	return http.StatusOK, "ok"
}

// watchReadiness follows the metadata shard's leader and waits, in the background, until
// every replica on this node has caught up with its shard.
func (c *clusterNode) watchReadiness() {
	ctx, stop := context.WithCancel(context.Background())
	c.ready.stop = stop
	c.ready.metaLeaderless.Store(time.Now().UnixNano())
	c.engine.OnLeaderChange(func(shard, leader uint64) {
		if shard != membership.MetaShard {
			return
		}
		if leader == 0 {
			c.ready.metaLeaderless.CompareAndSwap(0, time.Now().UnixNano())
			return
		}
		c.ready.metaLeaderless.Store(0)
	})
	if _, ok := c.engine.Leader(membership.MetaShard); ok {
		c.ready.metaLeaderless.Store(0)
	}
	supervise.Go("node.catch-up", func() { c.catchUp(ctx) })
}

// catchUp waits for each shard of this node in turn, then marks the node caught up; it
// gives up when ctx ends (the node closes).
func (c *clusterNode) catchUp(ctx context.Context) {
	for _, s := range c.shards() {
		for {
			tctx, tcancel := context.WithTimeout(ctx, catchUpTry)
			err := c.engine.CaughtUp(tctx, s)
			tcancel()
			if err == nil {
				break
			}
			select { // a try that failed at once (a shard not started yet) is not made again at once
			case <-ctx.Done():
				return
			case <-time.After(catchUpPause):
			}
		}
	}
	c.ready.caughtUp.Store(true)
}

// readyState reads the node now.
func (n *Node) readyState() readyState {
	s := readyState{storeWritable: true}
	if err := n.Store.CheckWritable(); err != nil {
		s.storeWritable, s.storeProblem = false, err.Error()
	}
	if c := n.cluster; c != nil {
		s.cluster, s.draining, s.caughtUp = true, c.draining.Load(), c.ready.caughtUp.Load()
		if since := c.ready.metaLeaderless.Load(); since != 0 {
			s.metaLeaderless = max(time.Since(time.Unix(0, since)), time.Nanosecond)
		}
		for _, sh := range c.shards() {
			if _, ok := c.engine.Leader(sh); !ok {
				s.leaderlessShard = append(s.leaderlessShard, sh)
			}
		}
	}
	return s
}

// readyz answers whether to send this node calls (see the top of this file).
func (n *Node) readyz(w http.ResponseWriter, _ *http.Request) {
	s := n.readyState()
	code, status := s.verdict()
	body := map[string]any{"status": status}
	if !s.storeWritable {
		body["store"] = s.storeProblem
	}
	if c := n.cluster; c != nil {
		cl := map[string]any{"node_id": c.file.NodeID, "cluster_id": c.file.ClusterID, "caught_up": s.caughtUp}
		if s.metaLeaderless > 0 {
			cl["meta_leaderless_ms"] = s.metaLeaderless.Milliseconds()
		}
		if len(s.leaderlessShard) > 0 {
			cl["shards_without_leader"] = s.leaderlessShard
		}
		body["cluster"] = cl
	}
	respond.JSON(w, code, body)
}

// clusterHealthz is /healthz in cluster mode, from the same reading as /readyz: 200 while the
// process answers, with "draining", "unavailable" (the metadata shard has no leader now:
// keys are checked only while the read lease lasts), "degraded" (account shards without a leader, a store refusing
// writes) or "ok".
func (n *Node) clusterHealthz(w http.ResponseWriter) {
	s, c := n.readyState(), n.cluster
	body := map[string]any{"node_id": c.file.NodeID, "cluster_id": c.file.ClusterID}
	status := "ok"
	switch {
	case s.draining:
		status = "draining"
	case s.metaLeaderless > 0:
		status, body["reason"] = "unavailable", "the metadata shard has no leader: keys are checked from this node's replica while its read lease lasts, then not at all"
	default:
		leader, _ := c.engine.Leader(membership.MetaShard)
		body["meta_leader"] = leader
		if len(s.leaderlessShard) > 0 {
			status, body["shards_without_leader"] = "degraded", s.leaderlessShard
		}
		if !s.storeWritable {
			status, body["store"] = "degraded", s.storeProblem
		}
	}
	respond.JSON(w, http.StatusOK, map[string]any{"status": status, "cluster": body})
}

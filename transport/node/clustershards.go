package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/transport/respond"
)

// The shards of the whole cluster, for the operator commands. With each account shard on
// its voters only, no node runs every shard: a node asks the others for theirs, and sends a
// change of a shard it does not run to one that does. Over the internal listener (mutual
// TLS, the cluster's nodes only):
//
//	GET  /internal/v1/shards                 this node's shards (ShardView list)
//	POST /internal/v1/shards/{shard}/members a membership change or leader transfer (memberOp)
//	POST /internal/v1/shards/{shard}/replica start or stop this node's replica of the shard
const (
	internalShards     = "/internal/v1/shards"
	maxShardViewsBody  = 4 << 20
	replicaCatchUpWait = 2 * time.Minute
)

// memberOp is one change of a shard's members, made by a node running the shard.
type memberOp struct {
	Op   string `json:"op"` // add_non_voting, add_voter, remove, transfer
	Node uint64 `json:"node"`
	Addr string `json:"addr,omitempty"`
}

// replicaOp starts (as a joiner) or stops this node's replica of a shard.
type replicaOp struct {
	Op string `json:"op"` // start, stop
}

func (c *clusterNode) registerInternal(mux *http.ServeMux) {
	mux.HandleFunc("GET "+internalShards, func(w http.ResponseWriter, r *http.Request) {
		respond.JSON(w, http.StatusOK, c.statusView(r.Context()).Shard)
	})
	mux.HandleFunc("POST "+internalShards+"/{shard}/members", internalOp(func(ctx context.Context, shard uint64, op memberOp) (int, error) {
		if !c.runs(shard) {
			return http.StatusMisdirectedRequest, fmt.Errorf("node %d runs no replica of shard %d", c.file.NodeID, shard)
		}
		return http.StatusServiceUnavailable, c.memberOpHere(ctx, shard, op)
	}))
	mux.HandleFunc("POST "+internalShards+"/{shard}/replica", internalOp(func(ctx context.Context, shard uint64, op replicaOp) (int, error) {
		return http.StatusServiceUnavailable, c.replicaOpHere(ctx, shard, op)
	}))
}

// internalOp is the handler of an operation on a shard: the shard from the path, the
// operation (T) from the JSON body, then do, bounded by memberChangeTimeout; 204 when it
// returns no error, else the status it returns with it.
func internalOp[T any](do func(ctx context.Context, shard uint64, op T) (int, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		shard, err := strconv.ParseUint(r.PathValue("shard"), 10, 64)
		if err != nil || shard == 0 {
			http.Error(w, "shard: not a shard id", http.StatusBadRequest)
			return
		}
		var op T
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&op); err != nil {
			http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), memberChangeTimeout)
		defer cancel()
		if status, err := do(ctx, shard, op); err != nil {
			http.Error(w, err.Error(), status)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// runs reports whether shard runs on this node.
func (c *clusterNode) runs(shard uint64) bool {
	return shard == membership.MetaShard || c.held.has(shard)
}

// memberOpHere makes op on this node's replica of shard.
func (c *clusterNode) memberOpHere(ctx context.Context, shard uint64, op memberOp) error {
	switch op.Op {
	case "add_non_voting":
		return c.engine.AddNonVoting(ctx, shard, op.Node, op.Addr)
	case "add_voter":
		return c.engine.AddReplica(ctx, shard, op.Node, op.Addr)
	case "remove":
		return c.engine.RemoveReplica(ctx, shard, op.Node)
	case "transfer":
		return c.engine.TransferLeader(ctx, shard, op.Node)
	}
	return fmt.Errorf("no member operation %q", op.Op)
}

// replicaOpHere starts this node's replica of account shard as a joiner, or stops it and
// deletes the engine's data of it; either is recorded in the shard set, and either done
// twice changes nothing.
func (c *clusterNode) replicaOpHere(ctx context.Context, shard uint64, op replicaOp) error {
	if shard < membership.FirstAccountShard || shard >= membership.FirstAccountShard+uint64(c.file.Shards) {
		return fmt.Errorf("%d is not an account shard", shard)
	}
	switch op.Op {
	case "start":
		if c.held.has(shard) {
			return nil
		}
		if err := c.held.put(shard, true, false); err != nil {
			return err
		}
		return c.startAccountShard(shard)
	case "stop":
		if !c.held.has(shard) {
			return nil
		}
		if err := c.held.put(shard, false, true); err != nil {
			return err
		}
		c.replicas.Delete(shard)
		return c.engine.StopShard(ctx, shard)
	}
	return fmt.Errorf("no replica operation %q", op.Op)
}

// internalCall sends a request to node's internal listener; a 2xx is success.
func (c *clusterNode) internalCall(ctx context.Context, node uint64, method, path string, body any) ([]byte, error) {
	addr, err := c.fwd.Addr(ctx, node, membership.FirstAccountShard)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "https://"+addr+path, rd)
	if err != nil {
		return nil, err
	}
	resp, err := c.internal.Do(req)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", node, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxShardViewsBody))
	if err == nil && resp.StatusCode/100 != 2 {
		err = fmt.Errorf("node %d answered %d: %s", node, resp.StatusCode, bytes.TrimSpace(out))
	}
	return out, err
}

// nodes are the cluster's members (the metadata shard's voters and non-voters) by id, with
// their raft addresses.
func (c *clusterNode) nodes(ctx context.Context) (map[uint64]string, error) {
	ctx, cancel := context.WithTimeout(ctx, keyCheckTimeout) // the metadata shard may have no leader
	defer cancel()
	m, err := c.engine.Membership(ctx, membership.MetaShard)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(m.Voting)
	maps.Copy(out, m.NonVoting)
	return out, nil
}

// clusterShards is every shard as the nodes running it see it: this node's view of its
// shards, and each other node's of the shards it runs, the best view of each shard kept
// (members read through its leader, then the latest term, then the most applied). A node
// that does not answer is left out (errs says which).
func (c *clusterNode) clusterShards(ctx context.Context) (views map[uint64]ShardView, errs []error) {
	views = map[uint64]ShardView{}
	keep := func(v ShardView) {
		old, seen := views[v.Shard]
		if !seen || better(v, old) {
			views[v.Shard] = v
		}
	}
	nodes, err := c.nodes(ctx)
	if err != nil {
		nodes, errs = map[uint64]string{c.file.NodeID: c.file.RaftAddr}, []error{err}
	}
	for _, id := range slices.Sorted(maps.Keys(nodes)) {
		theirs, err := c.shardsOf(ctx, id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, v := range theirs {
			keep(v)
		}
	}
	return views, errs
}

// shardsOf is node's view of the shards it runs (this node's own, or asked of it).
func (c *clusterNode) shardsOf(ctx context.Context, node uint64) ([]ShardView, error) {
	if node == c.file.NodeID {
		return c.statusView(ctx).Shard, nil
	}
	b, err := c.internalCall(ctx, node, http.MethodGet, internalShards, nil)
	if err != nil {
		return nil, err
	}
	var views []ShardView
	return views, json.Unmarshal(b, &views)
}

func better(a, b ShardView) bool {
	switch {
	case a.MembersConfirmed != b.MembersConfirmed:
		return a.MembersConfirmed
	case a.Term != b.Term:
		return a.Term > b.Term
	}
	return a.Applied > b.Applied
}

// onShard makes op on shard: here when the shard runs here, else on a voter of it that
// takes it (the shard's leader first).
func (c *clusterNode) onShard(ctx context.Context, view ShardView, op memberOp) error {
	if c.runs(view.Shard) {
		return c.memberOpHere(ctx, view.Shard, op)
	}
	targets := slices.DeleteFunc(append([]uint64{view.Leader}, view.Voters...), func(n uint64) bool { return n == 0 })
	last := fmt.Errorf("shard %d has no voter to ask", view.Shard)
	for _, n := range targets {
		if _, err := c.internalCall(ctx, n, http.MethodPost, fmt.Sprintf("%s/%d/members", internalShards, view.Shard), op); err != nil {
			last = err
			continue
		}
		return nil
	}
	return last
}

// onNode starts or stops node's replica of shard.
func (c *clusterNode) onNode(ctx context.Context, node, shard uint64, op replicaOp) error {
	if node == c.file.NodeID {
		return c.replicaOpHere(ctx, shard, op)
	}
	_, err := c.internalCall(ctx, node, http.MethodPost, fmt.Sprintf("%s/%d/replica", internalShards, shard), op)
	return err
}

// moveReplica moves shard's voter m.From to m.To: m.To joins as a non-voting replica (or
// is one already, a joined node), catches up, is made a voter; then m.From hands over the
// leadership if it has it, leaves the shard and stops its replica. The shard keeps its
// number of voters but for the moment between the promotion and the removal. With From 0
// the shard only gains m.To.
func (c *clusterNode) moveReplica(ctx context.Context, m membership.Move, view ShardView, addrs map[uint64]string) error {
	to := addrs[m.To]
	if to == "" {
		return fmt.Errorf("node %d is no member of the cluster", m.To)
	}
	if !slices.Contains(view.NonVoters, m.To) {
		if err := c.onShard(ctx, view, memberOp{Op: "add_non_voting", Node: m.To, Addr: to}); err != nil {
			return fmt.Errorf("add node %d to shard %d: %w", m.To, m.Shard, err)
		}
	}
	if err := c.onNode(ctx, m.To, m.Shard, replicaOp{Op: "start"}); err != nil {
		return fmt.Errorf("start shard %d on node %d: %w", m.Shard, m.To, err)
	}
	if err := c.waitReplica(ctx, m.To, m.Shard, view.Applied); err != nil {
		return err
	}
	if err := c.onShard(ctx, view, memberOp{Op: "add_voter", Node: m.To, Addr: to}); err != nil {
		return fmt.Errorf("make node %d a voter of shard %d: %w", m.To, m.Shard, err)
	}
	view.Voters = append(view.Voters, m.To)
	if m.From == 0 { // a voter added to a shard short of them
		return nil
	}
	if view.Leader == m.From {
		if err := c.onShard(ctx, view, memberOp{Op: "transfer", Node: m.To}); err != nil {
			return fmt.Errorf("hand shard %d's leadership from node %d to node %d: %w", m.Shard, m.From, m.To, err)
		}
		view.Leader = m.To
	}
	view.Voters = slices.DeleteFunc(view.Voters, func(n uint64) bool { return n == m.From })
	if err := c.onShard(ctx, view, memberOp{Op: "remove", Node: m.From}); err != nil {
		return fmt.Errorf("take node %d out of shard %d: %w", m.From, m.Shard, err)
	}
	if err := c.onNode(ctx, m.From, m.Shard, replicaOp{Op: "stop"}); err != nil {
		return fmt.Errorf("node %d left shard %d, then its replica did not stop (it is no member: it applies nothing): %w", m.From, m.Shard, err)
	}
	return nil
}

// waitReplica waits until node's replica of shard has applied at least applied entries.
func (c *clusterNode) waitReplica(ctx context.Context, node, shard, applied uint64) error {
	ctx, cancel := context.WithTimeout(ctx, replicaCatchUpWait)
	defer cancel()
	for {
		views, err := c.shardsOf(ctx, node)
		if err == nil {
			for _, v := range views {
				if v.Shard == shard && !v.Pending && v.Applied >= applied {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %d's replica of shard %d did not catch up to entry %d: %w (%v)", node, shard, applied, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// errIncomplete is a cluster-wide command that could not see every node.
var errIncomplete = errors.New("some nodes did not answer")

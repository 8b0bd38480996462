package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/cluster/accounts"
	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/transport/edge"
	"github.com/modelgate/modelgate/transport/respond"
)

// register adds the cluster's operator routes to the admin listener's router, behind the
// admin token (the same on every node): status, join (add a member), remove and drain.
func (c *clusterNode) register(r *mux.Router, guard func(http.Handler) http.Handler) {
	a := r.PathPrefix("/admin/cluster").Subrouter()
	a.Use(guard)
	a.HandleFunc("/status", c.status).Methods(http.MethodGet)
	a.HandleFunc("/members", c.addMember).Methods(http.MethodPost)
	a.HandleFunc("/members/{id}", c.removeMember).Methods(http.MethodDelete)
	a.HandleFunc("/members/{id}/drain", c.drain).Methods(http.MethodPost)
	a.HandleFunc("/members/{id}/promote", c.promoteMember).Methods(http.MethodPost)
	a.HandleFunc("/rebalance", c.rebalance).Methods(http.MethodPost)
}

// rebalanceTimeout bounds a rebalance: each replica it moves catches up first.
const rebalanceTimeout = 10 * time.Minute

// rebalance places the account shards' replicas and leaderships evenly over the cluster's
// nodes, asking every node for the shards it runs (clusterShards) and sending each change
// to a node running the shard:
//
//  1. each shard that lost a voter (a node removed) gains one, then voters move
//     (membership.PlanReplicas) until no node votes in two more shards than another: a
//     node that joined takes its share off the others (moveReplica);
//  2. the non-voting replicas of account shards are removed and stopped (a joined node
//     follows every shard until then): a node keeps only the shards it votes in;
//  3. leaderships move (membership.PlanLeaders), one leader transfer at a time: a shard's
//     leader answers its accounts' admissions, so a node leading many does their work alone.
//
// A change that fails stops the rebalance; what moved before stays moved, and a rebalance
// sent again plans from there. Every node must answer: a plan from part of the cluster
// could pile shards onto the nodes it saw.
func (c *clusterNode) rebalance(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), rebalanceTimeout)
	defer cancel()
	views, addrs, ok := c.wholeCluster(ctx, w)
	if !ok {
		return
	}
	fail := func(what string, done any, err error) {
		respond.Error(w, http.StatusServiceUnavailable, "server_error", "rebalance_failed", "",
			fmt.Sprintf("%v; then %s: %v (send the rebalance again)", done, what, err))
	}
	replicas := []membership.Move{}
	for _, m := range membership.PlanReplicas(accountShards(views), slices.Sorted(maps.Keys(addrs)), c.file.Replicas) {
		if err := c.moveReplica(ctx, m, views[m.Shard], addrs); err != nil {
			fail(fmt.Sprintf("shard %d's replica from node %d to node %d", m.Shard, m.From, m.To), map[string]any{"replicas_moved": replicas}, err)
			return
		}
		replicas = append(replicas, m)
		if views, addrs, ok = c.wholeCluster(ctx, w); !ok {
			return
		}
	}
	trimmed := []membership.Move{} // From: the node whose non-voting replica went
	for _, id := range slices.Sorted(maps.Keys(views)) {
		v := views[id]
		if id == membership.MetaShard {
			continue
		}
		for _, n := range v.NonVoters {
			if err := c.onShard(ctx, v, memberOp{Op: "remove", Node: n}); err != nil {
				fail(fmt.Sprintf("the non-voting replica of shard %d on node %d", id, n), map[string]any{"replicas_moved": replicas, "non_voting_removed": trimmed}, err)
				return
			}
			if err := c.onNode(ctx, n, id, replicaOp{Op: "stop"}); err != nil {
				c.logStopFailed(id, n, err)
			}
			trimmed = append(trimmed, membership.Move{Shard: id, From: n})
		}
	}
	if len(replicas)+len(trimmed) > 0 {
		if views, _, ok = c.wholeCluster(ctx, w); !ok {
			return
		}
	}
	moved := []membership.Move{}
	for _, m := range membership.PlanLeaders(accountShards(views)) {
		if err := c.onShard(ctx, views[m.Shard], memberOp{Op: "transfer", Node: m.To}); err != nil {
			fail(fmt.Sprintf("shard %d's leadership to node %d", m.Shard, m.To), map[string]any{"replicas_moved": replicas, "non_voting_removed": trimmed, "moved": moved}, err)
			return
		}
		moved = append(moved, m)
	}
	respond.JSON(w, http.StatusOK, map[string]any{"replicas_moved": replicas, "non_voting_removed": trimmed, "moved": moved})
}

// wholeCluster is every shard's view and every node's raft address, answering 503 itself
// when a node did not answer.
func (c *clusterNode) wholeCluster(ctx context.Context, w http.ResponseWriter) (map[uint64]ShardView, map[uint64]string, bool) {
	views, errs := c.clusterShards(ctx)
	addrs, err := c.nodes(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		respond.Error(w, http.StatusServiceUnavailable, "server_error", "cluster_incomplete", "",
			fmt.Sprintf("%v: %v (every node must answer; retry once they do, or remove a dead one first)", errIncomplete, errors.Join(errs...)))
		return nil, nil, false
	}
	return views, addrs, true
}

// accountShards are the account shards of views, for the planners.
func accountShards(views map[uint64]ShardView) []membership.Led {
	var out []membership.Led
	for _, id := range slices.Sorted(maps.Keys(views)) {
		if v := views[id]; id != membership.MetaShard {
			out = append(out, membership.Led{Shard: id, Leader: v.Leader, Voters: v.Voters, Removed: v.Removed})
		}
	}
	return out
}

func (c *clusterNode) logStopFailed(shard, node uint64, err error) {
	slog.Warn("a replica taken out of its shard did not stop (it applies nothing; a restart of its node stops it)", "shard", shard, "node", node, "err", err)
}

// StatusView is GET /admin/cluster/status: the cluster as this node sees it.
type StatusView struct {
	ClusterID string            `json:"cluster_id"`
	NodeID    uint64            `json:"node_id"`
	RaftAddr  string            `json:"raft_addr"`
	Draining  bool              `json:"draining"`
	Peers     []membership.Peer `json:"peers"` // the founding members
	Shards    int               `json:"shards"`
	Replicas  int               `json:"replicas"`
	Members   []MemberView      `json:"members"`
	Shard     []ShardView       `json:"shard_status"`
}

// MemberView is one node as the shards on this node know it.
type MemberView struct {
	ID        uint64 `json:"id"`
	RaftAddr  string `json:"raft_addr"`
	Voting    int    `json:"voting_shards"`     // shards (on this node) it votes in
	NonVoting int    `json:"non_voting_shards"` // shards it follows without a vote
	Leading   int    `json:"leading_shards"`
}

// ShardView is one shard running on this node. Lag is what this replica has received and
// not applied yet (entries).
type ShardView struct {
	Shard            uint64   `json:"shard"`
	Leader           uint64   `json:"leader"` // 0: none known
	Term             uint64   `json:"term"`
	Voters           []uint64 `json:"voters"`
	NonVoters        []uint64 `json:"non_voters"`
	Removed          []uint64 `json:"removed,omitempty"` // never members again
	MembersConfirmed bool     `json:"members_confirmed"`
	Applied          uint64   `json:"applied"`
	LastIndex        uint64   `json:"last_index"`
	Lag              uint64   `json:"lag"`
	Pending          bool     `json:"pending,omitempty"`
}

func (c *clusterNode) statusView(ctx context.Context) StatusView {
	v := StatusView{ClusterID: c.file.ClusterID, NodeID: c.file.NodeID, RaftAddr: c.file.RaftAddr, Draining: c.draining.Load(),
		Peers: c.file.Peers, Shards: c.file.Shards, Replicas: c.file.Replicas, Members: []MemberView{}, Shard: []ShardView{}}
	members := map[uint64]*MemberView{}
	member := func(id uint64, addr string) *MemberView {
		m, ok := members[id]
		if !ok {
			m = &MemberView{ID: id, RaftAddr: addr}
			members[id] = m
		}
		return m
	}
	for _, st := range c.engine.Status(ctx) {
		sv := ShardView{Shard: st.Shard, Leader: st.Leader, Term: st.Term, Voters: sortedIDs(st.Voting), NonVoters: sortedIDs(st.NonVoting),
			Removed: st.Removed, MembersConfirmed: st.MembersConfirmed, Applied: st.Applied, LastIndex: st.LastIndex, Lag: st.Unapplied(), Pending: st.Pending}
		for id, addr := range st.Voting {
			member(id, addr).Voting++
		}
		for id, addr := range st.NonVoting {
			member(id, addr).NonVoting++
		}
		if st.Leader != 0 {
			member(st.Leader, st.Voting[st.Leader]).Leading++
		}
		v.Shard = append(v.Shard, sv)
	}
	for _, id := range sortedIDs(members) {
		v.Members = append(v.Members, *members[id])
	}
	return v
}

func sortedIDs[V any](m map[uint64]V) []uint64 {
	ids := make([]uint64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (c *clusterNode) status(w http.ResponseWriter, r *http.Request) {
	respond.JSON(w, http.StatusOK, c.statusView(r.Context()))
}

// JoinRequest is POST /admin/cluster/members: add NodeID, reached at RaftAddr, as a
// non-voting replica of every shard (a node serves every account).
type JoinRequest struct {
	NodeID   uint64 `json:"node_id"`
	RaftAddr string `json:"raft_addr"`
}

// JoinAnswer is what a joining node writes into its cluster file.
type JoinAnswer struct {
	ClusterID string            `json:"cluster_id"`
	Peers     []membership.Peer `json:"peers"`
	Shards    int               `json:"shards"`
	Replicas  int               `json:"replicas"`
	Joined    []uint64          `json:"joined_shards"` // the metadata shard first
}

// memberChangeTimeout bounds one membership request (each change is retried within it).
const memberChangeTimeout = 30 * time.Second

func (c *clusterNode) addMember(w http.ResponseWriter, r *http.Request) {
	var req JoinRequest
	body, p := edge.ReadBody(w, r, 1<<16)
	if p != nil {
		p.SetRetryAfter(w)
		respond.Error(w, p.Status, p.Type, p.Code, "", p.Message)
		return
	}
	if err := json.Unmarshal(body, &req); err != nil {
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "", "the body must be {\"node_id\": N, \"raft_addr\": \"HOST:PORT\"}: "+err.Error())
		return
	}
	// The joining node's file must validate, so its id, address and shards are checked
	// exactly as its own start will check them.
	f := membership.File{ClusterID: c.file.ClusterID, NodeID: req.NodeID, RaftAddr: req.RaftAddr, Peers: c.file.Peers,
		Shards: c.file.Shards, Replicas: c.file.Replicas, Join: true, Certs: membership.Certs{}}
	if err := f.Validate(); err != nil {
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_member", "", err.Error())
		return
	}
	if _, _, err := net.SplitHostPort(req.RaftAddr); err != nil {
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_member", "", err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), memberChangeTimeout)
	defer cancel()
	joined := []uint64{}
	views, errs := c.clusterShards(ctx)
	for _, s := range append([]uint64{membership.MetaShard}, c.file.AccountShards()...) {
		v, ok := views[s]
		if !ok {
			respond.Error(w, http.StatusServiceUnavailable, "server_error", "membership_change_failed", "",
				fmt.Sprintf("added to shards %v; no node that answered runs shard %d: %v", joined, s, errors.Join(errs...)))
			return
		}
		if err := c.onShard(ctx, v, memberOp{Op: "add_non_voting", Node: req.NodeID, Addr: req.RaftAddr}); err != nil {
			respond.Error(w, http.StatusServiceUnavailable, "server_error", "membership_change_failed", "",
				fmt.Sprintf("added to shards %v, then: %v", joined, err))
			return
		}
		joined = append(joined, s)
	}
	respond.JSON(w, http.StatusOK, JoinAnswer{ClusterID: c.file.ClusterID, Peers: c.file.Peers, Shards: c.file.Shards, Replicas: c.file.Replicas, Joined: joined})
}

// removeMember takes a node out of every shard it is a member of (as the nodes that answer
// run them: a dead node's shards run on others too). A node does not
// remove itself: ask another member, after draining it.
func (c *clusterNode) removeMember(w http.ResponseWriter, r *http.Request) {
	id, ok := memberID(w, r)
	if !ok {
		return
	}
	if id == c.file.NodeID {
		respond.Error(w, http.StatusConflict, "invalid_request_error", "remove_self", "", "a node is removed through another member (drain it first)")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), memberChangeTimeout)
	defer cancel()
	removed := []uint64{}
	views, _ := c.clusterShards(ctx) // a dead node does not answer; its shards run elsewhere too
	for _, sh := range slices.Sorted(maps.Keys(views)) {
		v := views[sh]
		if !slices.Contains(v.Voters, id) && !slices.Contains(v.NonVoters, id) {
			continue
		}
		if err := c.onShard(ctx, v, memberOp{Op: "remove", Node: id}); err != nil {
			respond.Error(w, http.StatusServiceUnavailable, "server_error", "membership_change_failed", "",
				fmt.Sprintf("removed from shards %v, then: %v", removed, err))
			return
		}
		removed = append(removed, sh)
	}
	// Its calls still in flight (a node removed without a drain, or dead) are released; a
	// remove sent again after this failed releases them then.
	for _, s := range c.file.AccountShards() {
		if err := c.owner.PublishAddr(ctx, s, accounts.NodeAddr{ID: id, Gone: true}); err != nil {
			respond.Error(w, http.StatusServiceUnavailable, "server_error", "membership_change_failed", "",
				fmt.Sprintf("removed from shards %v; the release of its calls in shard %d then failed (send the remove again): %v", removed, s, err))
			return
		}
	}
	if len(removed) == 0 {
		respond.Error(w, http.StatusNotFound, "invalid_request_error", "member_not_found", "", fmt.Sprintf("node %d is a member of no shard the nodes that answered run", id))
		return
	}
	respond.JSON(w, http.StatusOK, map[string]any{"node_id": id, "removed_from": removed})
}

// promoteMember makes a non-voting member a voter (AddReplica) in every shard where it does
// not vote, or in those of ?shards=1,2 only. Promoting a voter changes nothing, so a retry is
// safe. Promote a node once it has caught up (its own `cluster status` shows lag near 0),
// and after removing the node it replaces: a shard with an even number of voters tolerates
// no more failures than one with one fewer.
func (c *clusterNode) promoteMember(w http.ResponseWriter, r *http.Request) {
	id, ok := memberID(w, r)
	if !ok {
		return
	}
	only, err := shardList(r.URL.Query().Get("shards"))
	if err != nil {
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_shards", "", err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), memberChangeTimeout)
	defer cancel()
	promoted, member := []uint64{}, false
	views, errs := c.clusterShards(ctx)
	addrs, err := c.nodes(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	for _, sh := range slices.Sorted(maps.Keys(views)) {
		st := views[sh]
		if only != nil && !only[sh] {
			continue
		}
		if !st.MembersConfirmed {
			respond.Error(w, http.StatusServiceUnavailable, "server_error", "membership_change_failed", "",
				fmt.Sprintf("promoted in shards %v; shard %d has no leader to ask (retry shortly)", promoted, sh))
			return
		}
		if slices.Contains(st.Voters, id) {
			member = true
			continue
		}
		if !slices.Contains(st.NonVoters, id) {
			continue
		}
		member = true
		if err := c.onShard(ctx, st, memberOp{Op: "add_voter", Node: id, Addr: addrs[id]}); err != nil {
			respond.Error(w, http.StatusServiceUnavailable, "server_error", "membership_change_failed", "",
				fmt.Sprintf("promoted in shards %v, then: %v", promoted, err))
			return
		}
		promoted = append(promoted, sh)
	}
	if !member && len(errs) > 0 {
		respond.Error(w, http.StatusServiceUnavailable, "server_error", "cluster_incomplete", "", fmt.Sprintf("%v: %v", errIncomplete, errors.Join(errs...)))
		return
	}
	if !member {
		respond.Error(w, http.StatusNotFound, "invalid_request_error", "member_not_found", "", fmt.Sprintf("node %d is a member of no shard named", id))
		return
	}
	respond.JSON(w, http.StatusOK, map[string]any{"node_id": id, "promoted_in": promoted})
}

// shardList reads "1,2,5" (nil for "": every shard).
func shardList(s string) (map[uint64]bool, error) {
	if s == "" {
		return nil, nil
	}
	out := map[uint64]bool{}
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(part), 10, 64)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("shards is a comma-separated list of shard ids > 0, not %q", s)
		}
		out[n] = true
	}
	return out, nil
}

func memberID(w http.ResponseWriter, r *http.Request) (uint64, bool) {
	id, err := strconv.ParseUint(mux.Vars(r)["id"], 10, 64)
	if err != nil || id == 0 {
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_member", "", "the member id is a node id > 0")
		return 0, false
	}
	return id, true
}

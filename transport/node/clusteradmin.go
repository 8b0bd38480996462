package node

import (
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/transport/edge"
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

// rebalance spreads the account shards' leaderships evenly over the nodes that vote in them
// (membership.PlanLeaders), one leader transfer at a time: a shard's leader leads, forwards
// to and answers admissions for its accounts, so a node leading many shards does their work
// alone. Any node takes it (a follower's transfer request goes to the leader). A transfer
// that fails stops the rebalance; what moved before stays moved, and a rebalance sent
// again plans from there.
func (c *clusterNode) rebalance(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), memberChangeTimeout)
	defer cancel()
	var shards []membership.Led
	for _, st := range c.engine.Status(ctx) {
		if st.Shard != membership.MetaShard {
			shards = append(shards, membership.Led{Shard: st.Shard, Leader: st.Leader, Voters: slices.Sorted(maps.Keys(st.Voting))})
		}
	}
	moved := []membership.Move{}
	for _, m := range membership.PlanLeaders(shards) {
		if err := c.engine.TransferLeader(ctx, m.Shard, m.To); err != nil {
			failJSON(w, http.StatusServiceUnavailable, "server_error", "leader_transfer_failed",
				fmt.Sprintf("moved %v; then shard %d to node %d: %v (send the rebalance again)", moved, m.Shard, m.To, err))
			return
		}
		moved = append(moved, m)
	}
	writeJSONBody(w, http.StatusOK, map[string]any{"moved": moved})
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
			MembersConfirmed: st.MembersConfirmed, Applied: st.Applied, LastIndex: st.LastIndex, Lag: st.Unapplied(), Pending: st.Pending}
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
	writeJSONBody(w, http.StatusOK, c.statusView(r.Context()))
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
		failJSON(w, p.Status, p.Type, p.Code, p.Message)
		return
	}
	if err := json.Unmarshal(body, &req); err != nil {
		failJSON(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "the body must be {\"node_id\": N, \"raft_addr\": \"HOST:PORT\"}: "+err.Error())
		return
	}
	// The joining node's file must validate, so its id, address and shards are checked
	// exactly as its own start will check them.
	f := membership.File{ClusterID: c.file.ClusterID, NodeID: req.NodeID, RaftAddr: req.RaftAddr, Peers: c.file.Peers,
		Shards: c.file.Shards, Replicas: c.file.Replicas, Join: true, Certs: membership.Certs{}}
	if err := f.Validate(); err != nil {
		failJSON(w, http.StatusBadRequest, "invalid_request_error", "invalid_member", err.Error())
		return
	}
	if _, _, err := net.SplitHostPort(req.RaftAddr); err != nil {
		failJSON(w, http.StatusBadRequest, "invalid_request_error", "invalid_member", err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), memberChangeTimeout)
	defer cancel()
	joined := []uint64{}
	for _, s := range append([]uint64{membership.MetaShard}, c.file.AccountShards()...) {
		if err := c.engine.AddNonVoting(ctx, s, req.NodeID, req.RaftAddr); err != nil {
			failJSON(w, http.StatusServiceUnavailable, "server_error", "membership_change_failed",
				fmt.Sprintf("added to shards %v, then: %v", joined, err))
			return
		}
		joined = append(joined, s)
	}
	writeJSONBody(w, http.StatusOK, JoinAnswer{ClusterID: c.file.ClusterID, Peers: c.file.Peers, Shards: c.file.Shards, Replicas: c.file.Replicas, Joined: joined})
}

// removeMember takes a node out of every shard this node knows it in. A node does not
// remove itself: ask another member, after draining it.
func (c *clusterNode) removeMember(w http.ResponseWriter, r *http.Request) {
	id, ok := memberID(w, r)
	if !ok {
		return
	}
	if id == c.file.NodeID {
		failJSON(w, http.StatusConflict, "invalid_request_error", "remove_self", "a node is removed through another member (drain it first)")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), memberChangeTimeout)
	defer cancel()
	removed := []uint64{}
	for _, st := range c.engine.Status(ctx) {
		_, voting := st.Voting[id]
		_, nonVoting := st.NonVoting[id]
		if !voting && !nonVoting {
			continue
		}
		if err := c.engine.RemoveReplica(ctx, st.Shard, id); err != nil {
			failJSON(w, http.StatusServiceUnavailable, "server_error", "membership_change_failed",
				fmt.Sprintf("removed from shards %v, then: %v", removed, err))
			return
		}
		removed = append(removed, st.Shard)
	}
	// Its calls still in flight (a node removed without a drain, or dead) are released; a
	// remove sent again after this failed releases them then.
	for _, s := range c.file.AccountShards() {
		if err := c.owner.PublishAddr(ctx, s, accounts.NodeAddr{ID: id, Gone: true}); err != nil {
			failJSON(w, http.StatusServiceUnavailable, "server_error", "membership_change_failed",
				fmt.Sprintf("removed from shards %v; the release of its calls in shard %d then failed (send the remove again): %v", removed, s, err))
			return
		}
	}
	if len(removed) == 0 {
		failJSON(w, http.StatusNotFound, "invalid_request_error", "member_not_found", fmt.Sprintf("node %d is a member of no shard on this node", id))
		return
	}
	writeJSONBody(w, http.StatusOK, map[string]any{"node_id": id, "removed_from": removed})
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
		failJSON(w, http.StatusBadRequest, "invalid_request_error", "invalid_shards", err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), memberChangeTimeout)
	defer cancel()
	promoted, member := []uint64{}, false
	for _, st := range c.engine.Status(ctx) {
		if only != nil && !only[st.Shard] {
			continue
		}
		if !st.MembersConfirmed {
			failJSON(w, http.StatusServiceUnavailable, "server_error", "membership_change_failed",
				fmt.Sprintf("promoted in shards %v; shard %d has no leader to ask (retry shortly)", promoted, st.Shard))
			return
		}
		if _, voting := st.Voting[id]; voting {
			member = true
			continue
		}
		addr, nonVoting := st.NonVoting[id]
		if !nonVoting {
			continue
		}
		member = true
		if err := c.engine.AddReplica(ctx, st.Shard, id, addr); err != nil {
			failJSON(w, http.StatusServiceUnavailable, "server_error", "membership_change_failed",
				fmt.Sprintf("promoted in shards %v, then: %v", promoted, err))
			return
		}
		promoted = append(promoted, st.Shard)
	}
	if !member {
		failJSON(w, http.StatusNotFound, "invalid_request_error", "member_not_found", fmt.Sprintf("node %d is a member of no shard named on this node", id))
		return
	}
	writeJSONBody(w, http.StatusOK, map[string]any{"node_id": id, "promoted_in": promoted})
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
		failJSON(w, http.StatusBadRequest, "invalid_request_error", "invalid_member", "the member id is a node id > 0")
		return 0, false
	}
	return id, true
}

func writeJSONBody(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// failJSON answers an error in the admin API's envelope.
func failJSON(w http.ResponseWriter, status int, typ, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(chat.ErrorBodyFor(w.Header().Get("X-Request-Id"), msg, typ, code, ""))
}

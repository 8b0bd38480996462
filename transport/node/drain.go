package node

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/transport/respond"
)

// drainTimeout bounds moving every leadership away; drainLinger is how long a drained node
// keeps answering 503 "draining" (to probes and new calls) before it stops listening, so a
// load balancer sees it leave rather than meeting refused connections.
const (
	drainTimeout = 30 * time.Second
	drainLinger  = time.Second
)

// drain is POST /admin/cluster/members/{id}/drain, sent to node id itself: it hands every
// shard this node leads to another voter and waits until it leads none; then the node
// refuses new calls with 503 and Retry-After, and Drained fires so the process finishes the
// calls in flight and exits.
func (c *clusterNode) drain(w http.ResponseWriter, r *http.Request) {
	id, ok := memberID(w, r)
	if !ok {
		return
	}
	if id != c.file.NodeID {
		respond.Error(w, http.StatusConflict, "invalid_request_error", "drain_elsewhere", "",
			fmt.Sprintf("this is node %d: send the drain of node %d to that node's own admin URL", c.file.NodeID, id))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), drainTimeout)
	defer cancel()
	moved, err := c.moveLeadership(ctx)
	if err != nil {
		respond.Error(w, http.StatusServiceUnavailable, "server_error", "drain_failed", "", err.Error())
		return
	}
	if c.draining.CompareAndSwap(false, true) {
		supervise.Go("node.drain", func() {
			time.Sleep(drainLinger)
			close(c.drained)
		})
	}
	respond.JSON(w, http.StatusOK, map[string]any{"node_id": id, "draining": true, "moved": moved})
}

// movedShard is one leadership handed over by a drain.
type movedShard struct {
	Shard uint64 `json:"shard"`
	To    uint64 `json:"to"`
}

// moveLeadership transfers each shard this node leads to its lowest-numbered other voter
// and repeats until a pass finds none led here (an election can hand one back meanwhile).
func (c *clusterNode) moveLeadership(ctx context.Context) ([]movedShard, error) {
	moved := []movedShard{}
	for {
		led := 0
		for _, st := range c.engine.Status(ctx) {
			if st.Leader != c.file.NodeID {
				continue
			}
			led++
			var to uint64
			for _, v := range sortedIDs(st.Voting) {
				if v != c.file.NodeID {
					to = v
					break
				}
			}
			if to == 0 {
				return moved, fmt.Errorf("shard %d has no other voter to lead it", st.Shard)
			}
			if err := c.engine.TransferLeader(ctx, st.Shard, to); err != nil {
				return moved, err
			}
			moved = append(moved, movedShard{st.Shard, to})
		}
		if led == 0 {
			return moved, nil
		}
		if ctx.Err() != nil {
			return moved, ctx.Err()
		}
	}
}

// Drained is closed once a drain of this node has finished (never on a single node): the
// process then closes the node, letting calls in flight finish, and exits.
func (n *Node) Drained() <-chan struct{} {
	if n.cluster == nil {
		return nil
	}
	return n.cluster.drained
}

// refuseWhileDraining answers every call of the public port but the probes' with 503 and
// Retry-After once the node drains, so clients and load balancers move to another node;
// calls already running are not touched. The admin plane, on its own listener, serves on.
func (n *Node) refuseWhileDraining(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.cluster == nil || !n.cluster.draining.Load() || r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Retry-After", "1")
		respond.Error(w, http.StatusServiceUnavailable, "server_error", "node_draining", "", "this node is draining: send the call to another node of the cluster")
	})
}

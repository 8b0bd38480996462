package clustertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelgate/modelgate/transport/node"
)

// LeaderWatch polls every node's status while faults run and records, per shard, each
// (term, leader) any node reported. A node that does not answer (paused, busy) is skipped.
type LeaderWatch struct {
	stop chan struct{}
	done chan struct{}

	mu     sync.Mutex
	seen   map[uint64]map[uint64]map[uint64]bool // shard → term → leaders reported
	polls  int
	errors int
}

// WatchLeaders starts a LeaderWatch over the cluster's nodes, polling every interval.
func (c *Cluster) WatchLeaders(interval time.Duration) *LeaderWatch {
	w := &LeaderWatch{stop: make(chan struct{}), done: make(chan struct{}), seen: map[uint64]map[uint64]map[uint64]bool{}}
	client := &http.Client{Timeout: time.Second}
	nodes := slices.Clone(c.Nodes)
	var wg sync.WaitGroup
	for _, n := range nodes {
		// One poller per node, so a paused node's time-outs do not slow the others' polls.
		wg.Go(func() {
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for {
				w.poll(client, n)
				select {
				case <-w.stop:
					return
				case <-tick.C:
				}
			}
		})
	}
	go func() {
		wg.Wait()
		close(w.done)
	}()
	return w
}

func (w *LeaderWatch) poll(client *http.Client, n *Node) {
	req, _ := http.NewRequest(http.MethodGet, n.AdminURL()+"/admin/cluster/status", nil)
	req.Header.Set("Authorization", "Bearer "+AdminToken)
	var st node.StatusView
	resp, err := client.Do(req)
	if err == nil {
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls++
	if err != nil {
		w.errors++
		return
	}
	for _, s := range st.Shard {
		if s.Leader == 0 {
			continue
		}
		if w.seen[s.Shard] == nil {
			w.seen[s.Shard] = map[uint64]map[uint64]bool{}
		}
		if w.seen[s.Shard][s.Term] == nil {
			w.seen[s.Shard][s.Term] = map[uint64]bool{}
		}
		w.seen[s.Shard][s.Term][s.Leader] = true
	}
}

// Stop ends the polling and returns what it saw.
func (w *LeaderWatch) Stop() LeaderHistory {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	h := LeaderHistory{Polls: w.polls, Unanswered: w.errors, Terms: map[uint64]int{}}
	for shard, terms := range w.seen {
		h.Terms[shard] = len(terms)
		for term, leaders := range terms {
			if len(leaders) > 1 {
				h.TwoLeaders = append(h.TwoLeaders, fmt.Sprintf("shard %d term %d: leaders %v", shard, term, keys(leaders)))
			}
		}
	}
	slices.Sort(h.TwoLeaders)
	return h
}

// LeaderHistory is what a LeaderWatch saw.
type LeaderHistory struct {
	Polls, Unanswered int
	// Terms is how many terms with a leader each shard went through (1: no change).
	Terms map[uint64]int
	// TwoLeaders lists every shard and term two nodes reported different leaders for.
	TwoLeaders []string
}

// MaxTerms is the most terms any shard went through.
func (h LeaderHistory) MaxTerms() int {
	most := 0
	for _, n := range h.Terms {
		most = max(most, n)
	}
	return most
}

func keys(m map[uint64]bool) []uint64 {
	var out []uint64
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

package accounts

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence"
)

// Forward carries a shard's step (or read) to another node and returns that node's answer:
// a step's result as its Lead answered it, a read's encoded readAnswer. A *NotLeaderError
// says the node does not lead (or, for a read, hold) the shard; any other error means the
// outcome is unknown: the sender tries again with the same command, which applies once.
type Forward interface {
	Step(ctx context.Context, node, shard uint64, cmd []byte) ([]byte, error)
	Read(ctx context.Context, node, shard uint64, req []byte) ([]byte, error)
}

// The node's internal listener (mutual TLS) takes, for the account shards:
//
//	POST /internal/v1/steps           body: a batch of steps (stepbatch.go); 200: their answers, each as it is known
//	POST /internal/v1/reads/<shard>   body: a ShardRead; 200: a readAnswer; 421: no replica here
//	GET  /internal/v1/nodes           the internal addresses this node's replicas hold
//
// A 421 names the shard's leader in LeaderHeader when the node knows it.
const (
	StepsPath    = "/internal/v1/steps"
	ReadPath     = "/internal/v1/reads/"
	NodesPath    = "/internal/v1/nodes"
	LeaderHeader = "Modelgate-Shard-Leader"
)

// maxStepBody bounds a forwarded read and its answer: a usage page is at most
// persistence.MaxLogLimit entries.
const maxStepBody = 8 << 20

// ServeSteps is the internal listener's handler of StepsPath: each step of the batch goes
// to its shard's leader part, and its answer is written as soon as it is known.
func (o *Owner) ServeSteps(w http.ResponseWriter, r *http.Request) {
	serveSteps(w, r, o.StartLead, o.leaderHint)
}

// startStep begins one step: its answer now, or later through then (Owner.StartLead).
type startStep func(shard uint64, cmd []byte, then func(res []byte, err error)) (res []byte, now bool, err error)

// serveSteps answers a batch of steps, each begun by start in this goroutine (an admission
// from memory is answered without another goroutine's help); leaderOf names a shard's
// leader for a not-leader answer. Every step has AttemptWait from the batch's arrival, as a
// step forwarded alone had: one still unanswered then is answered as failed (its outcome
// unknown to the sender, which tries it again).
func serveSteps(w http.ResponseWriter, r *http.Request, start startStep, leaderOf func(uint64) uint64) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBatchBody))
	if err != nil {
		http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
		return
	}
	steps, err := decodeSteps(raw)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	flush := http.NewResponseController(w).Flush
	answers := make(chan batchAnswer, len(steps)) // room for every answer: a late one never blocks
	answered := make([]bool, len(steps))
	var buf []byte
	add := func(a batchAnswer) {
		buf = appendAnswer(buf, a)
		answered[a.index] = true
	}
	left := len(steps)
	for i, s := range steps {
		answer := func(res []byte, err error) batchAnswer {
			return answerOfStep(i, res, err, func() uint64 { return leaderOf(s.shard) })
		}
		var res []byte
		var now bool
		if supervise.Run("forwarded step", func() {
			res, now, err = start(s.shard, s.cmd, func(res []byte, err error) { answers <- answer(res, err) })
		}) {
			res, now, err = nil, true, supervise.ErrPanicked
		}
		if now {
			add(answer(res, err))
			left--
		}
	}
	timeout := time.NewTimer(AttemptWait)
	defer timeout.Stop()
	for {
		if _, err := w.Write(buf); err != nil {
			return // the sender has gone: its steps' outcomes are unknown to it, and it retries them
		}
		flush() // the first: the sender goes on to its next batch once the answers have begun
		if left == 0 {
			return
		}
		buf = buf[:0]
		select {
		case a := <-answers:
			add(a)
			left--
			for more := true; more && left > 0; { // the answers ready now, in one write
				select {
				case a := <-answers:
					add(a)
					left--
				default:
					more = false
				}
			}
		case <-timeout.C:
			for i := range steps {
				if !answered[i] {
					add(batchAnswer{index: i, kind: answerFailed, body: []byte("accounts: no answer within " + AttemptWait.String())})
				}
			}
			left = 0
		case <-r.Context().Done():
			return
		}
	}
}

// leaderHint is shard's leader as this node knows it, 0 when it does not (or it is this node).
func (o *Owner) leaderHint(shard uint64) uint64 {
	if o.holds(shard) {
		if l, ok := o.rep.Leader(shard); ok && l != o.self {
			return l
		}
	}
	return 0
}

// internalRequest reads an internal request's shard and body, answering 400 itself.
func internalRequest(w http.ResponseWriter, r *http.Request) (uint64, []byte, bool) {
	shard, err := strconv.ParseUint(r.PathValue("shard"), 10, 64)
	if err != nil {
		http.Error(w, "shard: not a number", http.StatusBadRequest)
		return 0, nil, false
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxStepBody))
	if err != nil {
		http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
		return 0, nil, false
	}
	return shard, raw, true
}

// misdirected answers 421, naming the shard's leader when this node knows it.
func (o *Owner) misdirected(w http.ResponseWriter, shard uint64, err error) {
	if l := o.leaderHint(shard); l != 0 {
		w.Header().Set(LeaderHeader, strconv.FormatUint(l, 10))
	}
	http.Error(w, err.Error(), http.StatusMisdirectedRequest)
}

// HTTPForward is Forward over the nodes' internal listeners: a node's address is the one it
// published in the account shards (Peers, read from this node's replicas, or asked of a node
// it knows when none of them has it), kept until a send to it fails.
type HTTPForward struct {
	Client *http.Client // mutual TLS with the cluster's certificates
	Store  *persistence.Store
	// Shards are the account shards (whose replicas here hold the addresses).
	Shards []uint64
	// Scheme is "https" when empty; "http" only where the measurement of a cluster without
	// TLS asks for it (bench).
	Scheme string

	mu       sync.Mutex
	addrs    map[uint64]string
	reloaded time.Time // when Nodes last read the replicas' addresses
	lanes    map[uint64]*lane

	batches, batched atomic.Uint64 // the batches of steps sent, and the steps they carried
}

// ForwardBatches are the batches of steps this node sent to other nodes and the steps they
// carried (the metrics' and the bench's).
func (f *HTTPForward) ForwardBatches() (batches, steps uint64) {
	return f.batches.Load(), f.batched.Load()
}

// Step implements Forward: the step goes to node in the next batch of steps for it.
func (f *HTTPForward) Step(ctx context.Context, node, shard uint64, cmd []byte) ([]byte, error) {
	s := &forwardedStep{batchStep: batchStep{shard: shard, cmd: cmd}, done: make(chan forwardReply, 1)}
	if l := f.lane(node); l.add(s) {
		l.send(true)
	}
	select {
	case r := <-s.done:
		return r.out, r.err
	case <-ctx.Done(): // the batch goes on; this step's outcome is unknown, and the caller retries it
		return nil, ctx.Err()
	}
}

func (f *HTTPForward) lane(node uint64) *lane {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.lanes[node]
	if !ok {
		if f.lanes == nil {
			f.lanes = map[uint64]*lane{}
		}
		l = &lane{f: f, node: node}
		f.lanes[node] = l
	}
	return l
}

// Read implements Forward.
func (f *HTTPForward) Read(ctx context.Context, node, shard uint64, req []byte) ([]byte, error) {
	return f.postRead(ctx, node, shard, req)
}

func (f *HTTPForward) url(addr, path string) string {
	scheme := f.Scheme
	if scheme == "" {
		scheme = "https"
	}
	return scheme + "://" + addr + path
}

func (f *HTTPForward) postRead(ctx context.Context, node, shard uint64, body []byte) ([]byte, error) {
	addr, err := f.Addr(ctx, node, shard)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url(addr, ReadPath+strconv.FormatUint(shard, 10)), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	resp, err := f.Client.Do(req)
	if err != nil {
		f.forget(node)
		return nil, fmt.Errorf("accounts: forward to node %d: %w", node, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxStepBody))
	switch {
	case err != nil:
		return nil, fmt.Errorf("accounts: forward to node %d: %w", node, err)
	case resp.StatusCode == http.StatusMisdirectedRequest:
		leader, _ := strconv.ParseUint(resp.Header.Get(LeaderHeader), 10, 64)
		return nil, &NotLeaderError{Leader: leader}
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("accounts: node %d answered %d: %s", node, resp.StatusCode, bytes.TrimSpace(out))
	}
	return out, nil
}

// Addr is node's internal address: cached, else read from shard's replica here, else from
// every account shard's, else asked of the nodes known.
func (f *HTTPForward) Addr(ctx context.Context, node, shard uint64) (string, error) {
	if a, ok := f.known(node); ok {
		return a, nil
	}
	if err := f.reload(append([]uint64{shard}, f.Shards...)); err != nil {
		return "", err
	}
	if a, ok := f.known(node); ok {
		return a, nil
	}
	f.mu.Lock()
	others := slices.Collect(maps.Values(f.addrs))
	f.mu.Unlock()
	for _, a := range others {
		if peers, err := f.askNodes(ctx, a); err == nil {
			f.learn(peers)
			if a, ok := f.known(node); ok {
				return a, nil
			}
		}
	}
	return "", fmt.Errorf("accounts: node %d has published no address that this node knows", node)
}

// reload learns the addresses published in shards, as this node's replicas have them.
func (f *HTTPForward) reload(shards []uint64) error {
	peers, err := PeersOf(f.Store, shards)
	if err != nil {
		return err
	}
	f.learn(peers)
	f.mu.Lock()
	f.reloaded = time.Now()
	f.mu.Unlock()
	return nil
}

// nodesReload is how often Nodes reads the addresses from the replicas again.
const nodesReload = time.Second

// Nodes are the nodes whose internal address this node knows (from its replicas, read
// again at most every nodesReload), in id order: where to look for a shard's leader when
// the shard's placed voters do not know it.
func (f *HTTPForward) Nodes() []uint64 {
	f.mu.Lock()
	stale := time.Since(f.reloaded) > nodesReload
	f.mu.Unlock()
	if stale {
		f.reload(f.Shards) // on a failed read, the addresses known so far
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.addrs))
}

func (f *HTTPForward) known(node uint64) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.addrs[node]
	return a, ok
}

func (f *HTTPForward) learn(peers []NodeAddr) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.addrs == nil {
		f.addrs = map[uint64]string{}
	}
	for _, p := range peers {
		if p.Addr != "" {
			f.addrs[p.ID] = p.Addr
		}
	}
}

// askNodes asks the node at addr which internal addresses its replicas hold.
func (f *HTTPForward) askNodes(ctx context.Context, addr string) ([]NodeAddr, error) {
	ctx, cancel := context.WithTimeout(ctx, AttemptWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url(addr, NodesPath), nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("accounts: %s answered %d", addr, resp.StatusCode)
	}
	var peers []NodeAddr
	err = msgpack.NewDecoder(io.LimitReader(resp.Body, maxStepBody)).Decode(&peers)
	return peers, err
}

func (f *HTTPForward) forget(node uint64) {
	f.mu.Lock()
	delete(f.addrs, node)
	f.mu.Unlock()
}

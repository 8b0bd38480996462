package accounts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

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

// The node's internal listener (mutual TLS) takes, for an account shard:
//
//	POST /internal/v1/steps/<shard>   body: the command; 200: the result; 421: not its leader
//	POST /internal/v1/reads/<shard>   body: a ShardRead; 200: a readAnswer; 421: no replica here
//	GET  /internal/v1/nodes           the internal addresses this node's replicas hold
//
// A 421 names the shard's leader in LeaderHeader when the node knows it.
const (
	StepPath     = "/internal/v1/steps/"
	ReadPath     = "/internal/v1/reads/"
	NodesPath    = "/internal/v1/nodes"
	LeaderHeader = "Modelgate-Shard-Leader"
)

// maxStepBody bounds a forwarded command or read, and a read's answer: a step with its
// request-log entry is far smaller, and a usage page is at most persistence.MaxLogLimit
// entries.
const maxStepBody = 8 << 20

// ServeStep is the internal listener's handler of StepPath+"{shard}".
func (o *Owner) ServeStep(w http.ResponseWriter, r *http.Request) {
	shard, raw, ok := internalRequest(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), AttemptWait)
	defer cancel()
	out, err := o.Lead(ctx, shard, raw)
	switch {
	case errors.Is(err, ErrNotLeader):
		o.misdirected(w, shard, err)
	case errors.Is(err, errMalformedStep):
		http.Error(w, err.Error(), http.StatusBadRequest)
	case err != nil:
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(out)
	}
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
	if o.holds(shard) {
		if l, ok := o.rep.Leader(shard); ok && l != o.self {
			w.Header().Set(LeaderHeader, strconv.FormatUint(l, 10))
		}
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
}

// Step implements Forward.
func (f *HTTPForward) Step(ctx context.Context, node, shard uint64, cmd []byte) ([]byte, error) {
	return f.post(ctx, node, shard, StepPath, cmd)
}

// Read implements Forward.
func (f *HTTPForward) Read(ctx context.Context, node, shard uint64, req []byte) ([]byte, error) {
	return f.post(ctx, node, shard, ReadPath, req)
}

func (f *HTTPForward) url(addr, path string) string {
	scheme := f.Scheme
	if scheme == "" {
		scheme = "https"
	}
	return scheme + "://" + addr + path
}

func (f *HTTPForward) post(ctx context.Context, node, shard uint64, path string, body []byte) ([]byte, error) {
	addr, err := f.Addr(ctx, node, shard)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url(addr, path+strconv.FormatUint(shard, 10)), bytes.NewReader(body))
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

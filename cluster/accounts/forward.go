package accounts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/modelgate/modelgate/persistence"
)

// Forward carries a quota step's command to the node leading its shard and returns the
// command's result as that node's Lead answered it. An error other than ErrNotLeader means
// the outcome is unknown: the sender tries again with the same command, which applies once.
type Forward interface {
	Step(ctx context.Context, node, shard uint64, cmd []byte) ([]byte, error)
}

// StepPath is where a node's internal listener (mutual TLS) takes forwarded steps:
//
//	POST /internal/v1/steps/<shard>   body: the command; 200: the result; 421: not its leader
const StepPath = "/internal/v1/steps/"

// maxStepBody bounds a forwarded command: a step with its request-log entry is far smaller.
const maxStepBody = 1 << 20

// ServeStep is the internal listener's handler of StepPath+"{shard}".
func (o *Owner) ServeStep(w http.ResponseWriter, r *http.Request) {
	shard, err := strconv.ParseUint(r.PathValue("shard"), 10, 64)
	if err != nil {
		http.Error(w, "shard: not a number", http.StatusBadRequest)
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxStepBody))
	if err != nil {
		http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), AttemptWait)
	defer cancel()
	out, err := o.Lead(ctx, shard, raw)
	switch {
	case errors.Is(err, ErrNotLeader):
		http.Error(w, err.Error(), http.StatusMisdirectedRequest)
	case errors.Is(err, errMalformedStep):
		http.Error(w, err.Error(), http.StatusBadRequest)
	case err != nil:
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(out)
	}
}

// HTTPForward is Forward over the nodes' internal listeners: a node's address is the one it
// published in the shard (Peers, read from this node's replica), kept until a send to it
// fails.
type HTTPForward struct {
	Client *http.Client // mutual TLS with the cluster's certificates
	Store  *persistence.Store
	// Scheme is "https" when empty; "http" only where the measurement of a cluster without
	// TLS asks for it (bench).
	Scheme string

	mu    sync.Mutex
	addrs map[uint64]string
}

// Step implements Forward.
func (f *HTTPForward) Step(ctx context.Context, node, shard uint64, cmd []byte) ([]byte, error) {
	addr, err := f.addr(node, shard)
	if err != nil {
		return nil, err
	}
	scheme := f.Scheme
	if scheme == "" {
		scheme = "https"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, scheme+"://"+addr+StepPath+strconv.FormatUint(shard, 10), bytes.NewReader(cmd))
	if err != nil {
		return nil, err
	}
	resp, err := f.Client.Do(req)
	if err != nil {
		f.forget(node)
		return nil, fmt.Errorf("accounts: forward to node %d: %w", node, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStepBody))
	switch {
	case err != nil:
		return nil, fmt.Errorf("accounts: forward to node %d: %w", node, err)
	case resp.StatusCode == http.StatusMisdirectedRequest:
		return nil, ErrNotLeader
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("accounts: node %d answered %d: %s", node, resp.StatusCode, bytes.TrimSpace(body))
	}
	return body, nil
}

func (f *HTTPForward) addr(node, shard uint64) (string, error) {
	f.mu.Lock()
	a, ok := f.addrs[node]
	f.mu.Unlock()
	if ok {
		return a, nil
	}
	peers, err := Peers(f.Store, shard)
	if err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.addrs == nil {
		f.addrs = map[uint64]string{}
	}
	for _, p := range peers {
		f.addrs[p.ID] = p.Addr
	}
	if a, ok := f.addrs[node]; ok {
		return a, nil
	}
	return "", fmt.Errorf("accounts: node %d has published no address in shard %d", node, shard)
}

func (f *HTTPForward) forget(node uint64) {
	f.mu.Lock()
	delete(f.addrs, node)
	f.mu.Unlock()
}

package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
)

// echoReplicator answers each batched command with "ok:"+cmd, after gate opens (nil: at
// once), or fails every proposal with err. It stands in for the engine: the batcher's job
// is only packing, and the engine's own tests are cluster/engine's.
type echoReplicator struct {
	gate    chan struct{}
	entered chan struct{} // a proposal reached the gate
	err     error
	panics  atomic.Int32 // so many proposals panic (the engine failing)
	mu      sync.Mutex
	got     []int // commands per proposal
}

func (r *echoReplicator) Propose(ctx context.Context, shard uint64, data []byte) ([]byte, error) {
	if r.gate != nil {
		r.entered <- struct{}{}
		select {
		case <-r.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.panics.Add(-1) >= 0 {
		panic("the engine fails")
	}
	cmds, err := DecodeBatch(data)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.got = append(r.got, len(cmds))
	r.mu.Unlock()
	out := make([][]byte, len(cmds))
	for i, c := range cmds {
		out[i] = append([]byte("ok:"), c...)
	}
	return EncodeResults(out)
}

func (r *echoReplicator) Read(context.Context, uint64, []byte) ([]byte, error) { return nil, nil }
func (r *echoReplicator) Leader(uint64) (uint64, bool)                         { return 1, true }
func (r *echoReplicator) OnLeaderChange(func(shard, leader uint64))            {}

func (r *echoReplicator) sizes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.got...)
}

// submitAll submits n commands "c0".."c<n-1>" at once and returns each one's result or error.
func submitAll(b *Batcher, n int) ([]string, []error) {
	res, errs := make([]string, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			out, err := b.Submit(ctx, fmt.Appendf(nil, "c%d", i))
			res[i], errs[i] = string(out), err
		}()
	}
	wg.Wait()
	return res, errs
}

func TestBatcherPacksWhileProposalsAreUnderWay(t *testing.T) {
	cases := []struct {
		name   string
		n, max int
		busy   bool  // a first command holds the only proposal slot while the n queue
		want   []int // commands per proposal
	}{
		{"a lone command on an idle shard goes at once", 1, 64, false, []int{1}},
		{"100 behind a busy slot: batches of 64 and 36", 100, 64, true, []int{1, 64, 36}},
		{"10 behind a busy slot, max 4: 4, 4, 2", 10, 4, true, []int{1, 4, 4, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := &echoReplicator{}
			b := NewBatcher(rep, 7, c.max, 1)
			defer b.Close()
			busy := make(chan error, 1)
			if c.busy {
				rep.gate, rep.entered = make(chan struct{}), make(chan struct{}, 8)
				go func() { _, err := b.Submit(context.Background(), []byte("busy")); busy <- err }()
				<-rep.entered
				go func() { testutil.WaitFor(t, "the batcher", func() bool { return queued(b) == c.n }); close(rep.gate) }()
			}
			res, errs := submitAll(b, c.n)
			for i := range c.n {
				if errs[i] != nil || res[i] != fmt.Sprintf("ok:c%d", i) {
					t.Fatalf("command %d: %q, %v", i, res[i], errs[i])
				}
			}
			if c.busy {
				if err := <-busy; err != nil {
					t.Fatal(err)
				}
			}
			if got := rep.sizes(); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("commands per proposal %v, want %v", got, c.want)
			}
		})
	}
}

func queued(b *Batcher) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

func TestBatcherFailsTheWholeBatchWithItsProposal(t *testing.T) {
	boom := errors.New("engine: timeout")
	b := NewBatcher(&echoReplicator{err: boom}, 1, 0, 0)
	defer b.Close()
	_, errs := submitAll(b, 20)
	for i, err := range errs {
		if !errors.Is(err, boom) {
			t.Fatalf("command %d: %v, want the proposal's error", i, err)
		}
	}
}

func TestBatcherSkipsCallersThatLeft(t *testing.T) {
	rep := &echoReplicator{gate: make(chan struct{}), entered: make(chan struct{}, 8)}
	b := NewBatcher(rep, 1, 64, 1)
	defer b.Close()
	first := make(chan error, 1)
	go func() { _, err := b.Submit(context.Background(), []byte("first")); first <- err }()
	<-rep.entered // the first is being proposed
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { _, err := b.Submit(ctx, []byte("gone")); gone <- err }()
	testutil.WaitFor(t, "the batcher", func() bool { return queued(b) == 1 })
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller that left: %v", err)
	}
	close(rep.gate)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	b.Close()
	if got := rep.sizes(); len(got) != 1 || got[0] != 1 {
		t.Fatalf("proposals %v: want only the first command's", got)
	}
	if _, err := b.Submit(context.Background(), []byte("late")); !errors.Is(err, ErrBatcherClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestDecodeResultsChecksTheCount(t *testing.T) {
	data, _ := EncodeResults([][]byte{[]byte("a")})
	if _, err := DecodeResults(data, 2); err == nil {
		t.Fatal("one result for two commands accepted")
	}
	if _, err := DecodeBatch([]byte{0xc1}); err == nil {
		t.Fatal("garbage accepted as a batch")
	}
}

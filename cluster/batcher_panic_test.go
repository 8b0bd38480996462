package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/modelgate/modelgate/internal/supervise"
)

// A proposal that panics answers each of its commands with supervise.ErrPanicked (never a
// wait until the caller's deadline) and gives its slot back: with one slot, the next batch
// is proposed and answered as usual.
func TestBatcherAnswersAProposalThatPanicked(t *testing.T) {
	rep := &echoReplicator{}
	rep.panics.Store(1)
	b := NewBatcher(rep, 3, 0, 1)
	defer b.Close()
	before := supervise.CountAt(whereBatch)
	if _, errs := submitAll(b, 1); !errors.Is(errs[0], supervise.ErrPanicked) {
		t.Fatalf("the command of the proposal that panicked: %v, want ErrPanicked", errs[0])
	}
	res, errs := submitAll(b, 3)
	for i := range 3 {
		if errs[i] != nil || res[i] != fmt.Sprintf("ok:c%d", i) {
			t.Fatalf("after the panic, command %d: %q, %v", i, res[i], errs[i])
		}
	}
	if n := supervise.CountAt(whereBatch); n != before+1 {
		t.Fatalf("%s panics %d, want %d", whereBatch, n, before+1)
	}
}

// answer gives a command its first result only: after a panic, fail does not replace a
// result already given.
func TestACommandKeepsItsFirstAnswer(t *testing.T) {
	p := &pending{ctx: context.Background(), done: make(chan batchResult, 1)}
	p.answer(batchResult{res: []byte("ok")})
	fail([]*pending{p}, whereBatch)
	if r := <-p.done; string(r.res) != "ok" || r.err != nil {
		t.Fatalf("answer %q, %v; want the first", r.res, r.err)
	}
}

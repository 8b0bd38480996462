//go:build faults

package cluster

import (
	"errors"
	"fmt"
	"testing"

	"github.com/modelgate/modelgate/internal/supervise"
)

// A panic in the batcher's loop after it took a batch from the queue: that batch's callers
// get supervise.ErrPanicked, the slot it held comes back, and the loop, started again, goes
// on proposing.
func TestFaultBatcherLoopResumesAfterAPanic(t *testing.T) {
	rep := &echoReplicator{}
	b := NewBatcher(rep, 5, 0, 1)
	defer b.Close()
	before := supervise.CountAt(whereBatcher)
	supervise.PanicAt(whereBatcher, 1)
	_, errs := submitAll(b, 1)
	if !errors.Is(errs[0], supervise.ErrPanicked) {
		t.Fatalf("the command of the interrupted turn: %v, want ErrPanicked", errs[0])
	}
	res, errs := submitAll(b, 4)
	for i := range 4 {
		if errs[i] != nil || res[i] != fmt.Sprintf("ok:c%d", i) {
			t.Fatalf("after the panic, command %d: %q, %v", i, res[i], errs[i])
		}
	}
	if n := supervise.CountAt(whereBatcher); n != before+1 {
		t.Fatalf("%s panics %d, want %d", whereBatcher, n, before+1)
	}
	if got := rep.sizes(); len(got) == 0 {
		t.Fatal("nothing proposed after the panic")
	}
}

package edge

import (
	"sync"
	"sync/atomic"
	"testing"
)

// The budget never holds more than its cap, whatever takes race for it, and a cap lowered by
// a reload refuses new takes until enough is given back.
func TestBudgetNeverPassesItsCap(t *testing.T) {
	var limit atomic.Int64
	limit.Store(1 << 20)
	b := NewBudget(limit.Load)
	var wg sync.WaitGroup
	var over atomic.Bool
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				n := int64(1+i%7) << 14
				if b.take(n) {
					if b.Held() > limit.Load() {
						over.Store(true)
					}
					b.give(n)
				}
			}
		}()
	}
	wg.Wait()
	if over.Load() || b.Held() != 0 {
		t.Fatalf("held past the cap: %v; held at the end %d, want 0", over.Load(), b.Held())
	}
	if !b.take(900 << 10) {
		t.Fatal("900 KiB of a 1 MiB cap refused")
	}
	limit.Store(512 << 10)
	if b.take(1) {
		t.Fatal("a take over a lowered cap succeeded")
	}
	b.give(900 << 10)
	if !b.take(512 << 10) {
		t.Fatal("the lowered cap's whole refused once free")
	}
}

// A body's buffers: small first, then 1 MiB ones, never more than wanted.
func TestChunkSizes(t *testing.T) {
	for _, c := range []struct {
		i    int
		want int64
		size int
	}{
		{0, 1 << 30, 16 << 10}, {1, 1 << 30, 64 << 10}, {2, 1 << 30, 256 << 10}, {3, 1 << 30, 1 << 20}, {9, 1 << 30, 1 << 20},
		{0, 1001, 1001}, {3, 5, 5},
	} {
		if got := chunkSize(c.i, c.want); got != c.size {
			t.Errorf("chunk %d wanting %d: %d, want %d", c.i, c.want, got, c.size)
		}
	}
}

package edge

import (
	"sync"
	"sync/atomic"
)

// Budget is the node's one count of request-body bytes in flight, against a cap read at each
// take (the catalog's, which a reload may change). A body takes its buffers from it as it
// grows, so what it counts is memory actually held, never an announced length.
type Budget struct {
	held  atomic.Int64
	limit func() int64
}

// NewBudget counts against limit.
func NewBudget(limit func() int64) *Budget { return &Budget{limit: limit} }

// Held is the bytes taken now.
func (b *Budget) Held() int64 { return b.held.Load() }

// take reserves n bytes, or reports false (taking nothing) when they would pass the cap.
func (b *Budget) take(n int64) bool {
	limit := b.limit()
	for {
		held := b.held.Load()
		if held+n > limit {
			return false
		}
		if b.held.CompareAndSwap(held, held+n) {
			return true
		}
	}
}

func (b *Budget) give(n int64) { b.held.Add(-n) }

// chunkSizes are the buffers a body grows by: small ones first, so the common small body
// costs little, then 1 MiB ones for the rest. A body is never one buffer grown by copying
// (the garbage of every copy would sit beside the cap until a GC), and buffers of a body
// given up half-read go back to a pool for the next, so an attack that is refused midway
// makes no garbage either.
var chunkSizes = [...]int{16 << 10, 64 << 10, 256 << 10, 1 << 20}

var chunkPools [len(chunkSizes)]sync.Pool

// chunkSize is the size of a body's i-th buffer when at most want more bytes are wanted.
func chunkSize(i int, want int64) int {
	size := chunkSizes[min(i, len(chunkSizes)-1)]
	if want < int64(size) {
		return int(want)
	}
	return size
}

// newChunk is a buffer of size bytes: a pooled one when size is one of chunkSizes.
func newChunk(size int) []byte {
	for i, s := range chunkSizes {
		if s == size {
			if b, ok := chunkPools[i].Get().(*[]byte); ok {
				return (*b)[:0]
			}
			break
		}
	}
	return make([]byte, 0, size)
}

// freeChunk hands a buffer no one holds back to its pool (buffers of other sizes go to the
// garbage collector).
func freeChunk(b []byte) {
	for i, s := range chunkSizes {
		if s == cap(b) {
			b = b[:0]
			chunkPools[i].Put(&b)
			return
		}
	}
}

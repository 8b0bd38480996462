package accounts

import (
	"hash/maphash"
)

// idFilter says whether a command id may be remembered in the shard's store, so that the
// id of a new command (nearly every one) is known to be new without a read of the store.
// It is Bloom filters over generations of log indexes: an answer of "maybe" is checked in
// the store as before, so the filter changes no result, only how often the store is read,
// and it may differ between replicas (its hash seed is this process's).
//
// A generation holds the ids added over a run of indexes, up to genIDs of them; one whose
// newest index has left the remembered window is dropped whole, as forget drops its ids.
type idFilter struct {
	seed maphash.Seed
	per  int      // ids a generation holds (genIDs; tests shorten it)
	gens []*idGen // oldest first
}

type idGen struct {
	last uint64   // newest index added
	n    int      // ids added
	bits []uint64 // genBits
}

// Sizing: 10 bits an id and 7 probes give about 1% false positives at genIDs ids.
const (
	genIDs    = 16_384
	genBits   = genIDs * 10
	genProbes = 7
)

func newIDFilter() *idFilter { return &idFilter{seed: maphash.MakeSeed(), per: genIDs} }

// probes are an id's bit positions (double hashing from one 64-bit hash).
func (f *idFilter) probes(id string, fn func(bit uint64) bool) bool {
	h := maphash.String(f.seed, id)
	a, b := h&0xffffffff, h>>32|1
	for i := range uint64(genProbes) {
		if !fn((a + i*b) % genBits) {
			return false
		}
	}
	return true
}

// add records id, applied at index (indexes come in order). A nil filter (a state machine
// not opened) knows nothing and records nothing.
func (f *idFilter) add(id string, index uint64) {
	if f == nil {
		return
	}
	var g *idGen
	if len(f.gens) > 0 {
		g = f.gens[len(f.gens)-1]
	}
	if g == nil || g.n >= f.per {
		g = &idGen{bits: make([]uint64, genBits/64)}
		f.gens = append(f.gens, g)
	}
	f.probes(id, func(bit uint64) bool { g.bits[bit/64] |= 1 << (bit % 64); return true })
	g.n++
	g.last = max(g.last, index)
}

// mayHave is false when id was certainly not added since the generations still kept.
func (f *idFilter) mayHave(id string) bool {
	if f == nil {
		return true
	}
	for _, g := range f.gens {
		if f.probes(id, func(bit uint64) bool { return g.bits[bit/64]&(1<<(bit%64)) != 0 }) {
			return true
		}
	}
	return false
}

// forget drops the generations whose every id was applied before index from: the store
// has forgotten (or is forgetting in this Update) all of them.
func (f *idFilter) forget(from uint64) {
	if f == nil {
		return
	}
	i := 0
	for i < len(f.gens) && f.gens[i].last < from {
		i++
	}
	f.gens = append(f.gens[:0], f.gens[i:]...)
}

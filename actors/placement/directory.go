package placement

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Directory maps an entity (an account, a video task) to its current incarnation: the
// actor that owns it now, as T (a locator id, or the actor itself when it runs on a
// mailbox). Passivation is a handshake through it that loses nothing: the actor first writes
// its state, then retires only if every message routed to it has been received (sent ==
// received under the shard lock) — a message on its way keeps it alive. After retiring, the
// entry is gone and the next message activates a new incarnation, which loads the state
// just written. (A clustered locator takes this job over.)
type Directory[T comparable] struct {
	spawn   func(entity string) T // a new incarnation
	deliver func(inc T, m any)
	shards  [64]dirShard[T]
}

type dirShard[T comparable] struct {
	mu sync.Mutex
	m  map[string]*incarnation[T]
}

type incarnation[T comparable] struct {
	v    T
	sent uint64
}

// NewDirectory routes to Hollywood actors of kind through loc. Incarnation ids are
// entity + "#" + a generation that never repeats within a process.
func NewDirectory(kind string, loc Locator) *Directory[string] {
	var gen atomic.Uint64
	gen.Store(uint64(time.Now().UnixNano()))
	return NewDirectoryOf(func(entity string) string { return entity + "#" + strconv.FormatUint(gen.Add(1), 36) },
		func(id string, m any) { loc.Send(kind, id, m) })
}

// NewDirectoryOf routes through deliver to the incarnations spawn makes, one per
// activation (under the entity's lock: spawn must be quick and must not route).
func NewDirectoryOf[T comparable](spawn func(entity string) T, deliver func(inc T, m any)) *Directory[T] {
	d := &Directory[T]{spawn: spawn, deliver: deliver}
	for i := range d.shards {
		d.shards[i].m = map[string]*incarnation[T]{}
	}
	return d
}

func (d *Directory[T]) shard(entity string) *dirShard[T] {
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(entity); i++ {
		h = (h ^ uint32(entity[i])) * 16777619
	}
	return &d.shards[h%uint32(len(d.shards))]
}

// Route sends m to the entity's current incarnation and reports whether it did. With
// activate false it reaches only an active incarnation; refuse, checked under the entity's
// lock (so it orders with Retire), can veto the send — a service that is closing says so.
func (d *Directory[T]) Route(entity string, m any, activate bool, refuse func() bool) bool {
	sh := d.shard(entity)
	sh.mu.Lock()
	if refuse != nil && refuse() {
		sh.mu.Unlock()
		return false
	}
	inc := sh.m[entity]
	if inc == nil {
		if !activate {
			sh.mu.Unlock()
			return false
		}
		inc = &incarnation[T]{v: d.spawn(entity)}
		sh.m[entity] = inc
	}
	inc.sent++
	v := inc.v
	sh.mu.Unlock()
	d.deliver(v, m)
	return true
}

// Retire removes the incarnation v if it has received everything routed to it.
func (d *Directory[T]) Retire(entity string, v T, received uint64) bool {
	sh := d.shard(entity)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	inc := sh.m[entity]
	if inc == nil || inc.v != v || inc.sent != received {
		return false
	}
	delete(sh.m, entity)
	return true
}

// Active reports whether the entity has an incarnation.
func (d *Directory[T]) Active(entity string) bool {
	sh := d.shard(entity)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.m[entity] != nil
}

// Entities lists the entities with an incarnation.
func (d *Directory[T]) Entities() []string {
	var out []string
	d.each(func(entity string, _ T) { out = append(out, entity) })
	return out
}

// Incarnations lists the current incarnations.
func (d *Directory[T]) Incarnations() []T {
	var out []T
	d.each(func(_ string, v T) { out = append(out, v) })
	return out
}

// Count is the number of incarnations.
func (d *Directory[T]) Count() int {
	n := 0
	for i := range d.shards {
		sh := &d.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}

// each calls fn for every incarnation, one shard at a time under its lock.
func (d *Directory[T]) each(fn func(entity string, v T)) {
	for i := range d.shards {
		sh := &d.shards[i]
		sh.mu.Lock()
		for e, inc := range sh.m {
			fn(e, inc.v)
		}
		sh.mu.Unlock()
	}
}

// Sent is how many messages were routed to the entity's current incarnation (0 when none).
func (d *Directory[T]) Sent(entity string) uint64 {
	sh := d.shard(entity)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if inc := sh.m[entity]; inc != nil {
		return inc.sent
	}
	return 0
}

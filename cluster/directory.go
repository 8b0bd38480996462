package cluster

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Directory maps an entity (an account, a video task) to its current incarnation: the
// locator id of the actor that owns it now. Passivation is a handshake through it that loses
// nothing: the actor first writes its state, then retires only if every message routed to it
// has been received (sent == received under the shard lock) — a message on its way keeps it
// alive. After retiring, the entry is gone and the next message activates a new incarnation
// under a new id, which loads the state just written. Incarnation ids are entity + "#" + a
// generation that never repeats within a process. (A clustered locator takes this job over.)
type Directory struct {
	kind   string
	loc    Locator
	gen    atomic.Uint64
	shards [64]dirShard
}

type dirShard struct {
	mu sync.Mutex
	m  map[string]*incarnation
}

type incarnation struct {
	id   string
	sent uint64
}

// NewDirectory routes to actors of kind through loc.
func NewDirectory(kind string, loc Locator) *Directory {
	d := &Directory{kind: kind, loc: loc}
	for i := range d.shards {
		d.shards[i].m = map[string]*incarnation{}
	}
	d.gen.Store(uint64(time.Now().UnixNano()))
	return d
}

func (d *Directory) shard(entity string) *dirShard {
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(entity); i++ {
		h = (h ^ uint32(entity[i])) * 16777619
	}
	return &d.shards[h%uint32(len(d.shards))]
}

// Route sends m to the entity's current incarnation and reports whether it did. With
// activate false it reaches only an active incarnation; refuse, checked under the entity's
// lock (so it orders with Retire), can veto the send — a service that is closing says so.
func (d *Directory) Route(entity string, m any, activate bool, refuse func() bool) bool {
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
		inc = &incarnation{id: entity + "#" + strconv.FormatUint(d.gen.Add(1), 36)}
		sh.m[entity] = inc
	}
	inc.sent++
	id := inc.id
	sh.mu.Unlock()
	d.loc.Send(d.kind, id, m)
	return true
}

// Retire removes the incarnation id if it has received everything routed to it.
func (d *Directory) Retire(entity, id string, received uint64) bool {
	sh := d.shard(entity)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	inc := sh.m[entity]
	if inc == nil || inc.id != id || inc.sent != received {
		return false
	}
	delete(sh.m, entity)
	return true
}

// Active reports whether the entity has an incarnation.
func (d *Directory) Active(entity string) bool {
	sh := d.shard(entity)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.m[entity] != nil
}

// Entities lists the entities with an incarnation.
func (d *Directory) Entities() []string {
	var out []string
	for i := range d.shards {
		sh := &d.shards[i]
		sh.mu.Lock()
		for e := range sh.m {
			out = append(out, e)
		}
		sh.mu.Unlock()
	}
	return out
}

// Count is the number of incarnations.
func (d *Directory) Count() int {
	n := 0
	for i := range d.shards {
		sh := &d.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}

// Sent is how many messages were routed to the entity's current incarnation (0 when none).
func (d *Directory) Sent(entity string) uint64 {
	sh := d.shard(entity)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if inc := sh.m[entity]; inc != nil {
		return inc.sent
	}
	return 0
}

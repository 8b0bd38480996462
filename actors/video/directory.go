package video

import (
	"strconv"
	"sync"
)

// directory maps a task to its current incarnation (the locator id of the actor that owns
// it now), with the passivation handshake of the quota actors: an actor retires only when
// it has received every message routed to it, so none is lost; the next message
// activates a new incarnation under a new id, which loads the stored task.
type directory struct {
	shards [32]dirShard
}

type dirShard struct {
	mu sync.Mutex
	m  map[string]*incarnation
}

type incarnation struct {
	id   string
	sent uint64
}

func (d *directory) init() {
	for i := range d.shards {
		d.shards[i].m = map[string]*incarnation{}
	}
}

func (d *directory) shard(task string) *dirShard {
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(task); i++ {
		h = (h ^ uint32(task[i])) * 16777619
	}
	return &d.shards[h%uint32(len(d.shards))]
}

// route delivers m to the task's current incarnation, activating one when needed.
func (d *directory) route(task string, s *Service, m routed) error {
	sh := d.shard(task)
	sh.mu.Lock()
	_, retiring := m.(*retireMsg)
	if s.closed.Load() && !retiring {
		sh.mu.Unlock()
		return ErrClosed
	}
	inc := sh.m[task]
	if inc == nil {
		if retiring {
			sh.mu.Unlock()
			return ErrClosed // already passivated
		}
		inc = &incarnation{id: task + "#" + strconv.FormatUint(s.gen.Add(1), 36)}
		sh.m[task] = inc
	}
	inc.sent++
	id := inc.id
	sh.mu.Unlock()
	s.loc.Send(Kind, id, m)
	return nil
}

// retire removes the incarnation if it has received everything routed to it.
func (d *directory) retire(task, id string, received uint64) bool {
	sh := d.shard(task)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	inc := sh.m[task]
	if inc == nil || inc.id != id || inc.sent != received {
		return false
	}
	delete(sh.m, task)
	return true
}

func (d *directory) active(task string) bool {
	sh := d.shard(task)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.m[task] != nil
}

func (d *directory) ids() []string {
	var out []string
	for i := range d.shards {
		sh := &d.shards[i]
		sh.mu.Lock()
		for t := range sh.m {
			out = append(out, t)
		}
		sh.mu.Unlock()
	}
	return out
}

func (d *directory) count() int {
	n := 0
	for i := range d.shards {
		sh := &d.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}

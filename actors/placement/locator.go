// Package placement finds the actor that owns an entity. Handlers talk to owners only
// through a Locator, so scaling to several nodes changes the locator, not the handlers.
package placement

import (
	"sync"

	"github.com/anthdm/hollywood/actor"

	"github.com/modelgate/modelgate/actors"
)

// Locator delivers a message to the owner of (kind, id), activating it when needed.
// Replies travel inside the message (a channel, or a request id once remote).
type Locator interface {
	Send(kind, id string, msg any)
	// Stop retires an owner gracefully: it handles what is queued, then stops.
	Stop(kind, id string)
}

// Local is the one-node locator: every owner is an actor of this engine.
type Local struct {
	engine *actor.Engine
	mu     sync.RWMutex
	kinds  map[string]kindSpec
	pids   map[string]*actor.PID
	// stopping: owners being stopped (Stop), each closed once its actor is gone.
	stopping map[string]chan struct{}
}

type kindSpec struct {
	producer func(id string) actor.Producer
	inbox    int
}

// NewLocal serves owners from e.
func NewLocal(e *actor.Engine) *Local {
	return &Local{engine: e, kinds: map[string]kindSpec{}, pids: map[string]*actor.PID{}, stopping: map[string]chan struct{}{}}
}

// Engine is the engine the owners run on.
func (l *Local) Engine() *actor.Engine { return l.engine }

// Register says how to make the owner of an id of this kind.
func (l *Local) Register(kind string, inbox int, producer func(id string) actor.Producer) {
	l.mu.Lock()
	l.kinds[kind] = kindSpec{producer: producer, inbox: inbox}
	l.mu.Unlock()
}

// Send implements Locator.
func (l *Local) Send(kind, id string, msg any) {
	l.engine.Send(l.pid(kind, id), msg)
}

// pid is the owner of (kind, id), spawned when there is none; while an old owner of the
// same id is being stopped, it waits for it to be gone first.
func (l *Local) pid(kind, id string) *actor.PID {
	key := kind + "/" + id
	for {
		l.mu.RLock()
		pid, ok := l.pids[key]
		l.mu.RUnlock()
		if ok {
			return pid
		}
		l.mu.Lock()
		if pid, ok := l.pids[key]; ok {
			l.mu.Unlock()
			return pid
		}
		if gone, ok := l.stopping[key]; ok {
			l.mu.Unlock()
			<-gone
			continue
		}
		spec, ok := l.kinds[kind]
		if !ok {
			l.mu.Unlock()
			panic("cluster: kind " + kind + " was never registered") // a wiring bug, caught by any test
		}
		pid = l.engine.Spawn(spec.producer(id), kind, actors.Options(id, spec.inbox)...)
		l.pids[key] = pid
		l.mu.Unlock()
		return pid
	}
}

// Stop implements Locator. A message for the same id sent meanwhile waits until the old
// owner is gone and then activates a fresh one, instead of racing a second actor with the
// same id into the engine (where it would never start and the message would be lost).
// Only that id waits: the lock is not held while the old owner finishes, since its last
// Receive may itself send to other owners (a task actor hands its queue to its next
// incarnation), and holding it then deadlocked the two.
func (l *Local) Stop(kind, id string) {
	key := kind + "/" + id
	l.mu.Lock()
	pid, ok := l.pids[key]
	if !ok {
		gone := l.stopping[key]
		l.mu.Unlock()
		if gone != nil {
			<-gone // another Stop of it is under way: return, as it will, once it is gone
		}
		return
	}
	delete(l.pids, key)
	gone := make(chan struct{})
	l.stopping[key] = gone
	l.mu.Unlock()
	<-l.engine.Poison(pid).Done()
	l.mu.Lock()
	delete(l.stopping, key)
	l.mu.Unlock()
	close(gone)
}

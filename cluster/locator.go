// Package cluster finds the actor that owns an entity. Handlers talk to owners only through
// a Locator, so scaling to several nodes changes the locator, not the handlers.
package cluster

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
}

type kindSpec struct {
	producer func(id string) actor.Producer
	inbox    int
}

// NewLocal serves owners from e.
func NewLocal(e *actor.Engine) *Local {
	return &Local{engine: e, kinds: map[string]kindSpec{}, pids: map[string]*actor.PID{}}
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

func (l *Local) pid(kind, id string) *actor.PID {
	key := kind + "/" + id
	l.mu.RLock()
	pid, ok := l.pids[key]
	l.mu.RUnlock()
	if ok {
		return pid
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if pid, ok := l.pids[key]; ok {
		return pid
	}
	spec, ok := l.kinds[kind]
	if !ok {
		panic("cluster: kind " + kind + " was never registered") // a wiring bug, caught by any test
	}
	pid = l.engine.Spawn(spec.producer(id), kind, actors.Options(id, spec.inbox)...)
	l.pids[key] = pid
	return pid
}

// Stop implements Locator. It holds the lock until the old owner is gone, so a message sent
// meanwhile waits and then activates a fresh owner, instead of racing a second actor with the
// same id into the engine (where it would never start and the message would be lost).
func (l *Local) Stop(kind, id string) {
	key := kind + "/" + id
	l.mu.Lock()
	defer l.mu.Unlock()
	if pid, ok := l.pids[key]; ok {
		delete(l.pids, key)
		<-l.engine.Poison(pid).Done()
	}
}

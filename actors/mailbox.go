package actors

import (
	"sync"

	"github.com/modelgate/modelgate/internal/supervise"
)

// Mailbox is the whole runtime of an actor of a kind there are very many of (an account's
// quota owner): its messages wait in a queue and are handled one at a time, in the order
// they were queued, by a run that exists only while messages wait. An idle mailbox is a
// mutex, a nil slice and a flag (40 bytes); an idle Hollywood actor holds a process, an
// inbox and its ring buffer, a context with its child map and a PID, about 800 bytes, and
// a locator entry to be found by. The entity's owner (placement.Directory) holds the handler,
// so nothing else needs to know the actor.
//
// A panic while handling a message is what Recover makes of it under Hollywood: logged with
// the stack and counted under actor.<kind>, the message answered with an error when it is a
// Failer, the state kept, the next message handled.
type Mailbox struct {
	mu      sync.Mutex
	queue   []any // waiting, oldest first; nil while idle
	running bool  // a run is handling the queue
}

// Handler handles a mailbox's messages.
type Handler interface {
	Receive(m any)
	// ActorName is kind/id, as a Hollywood PID names an actor: the panic log's actor.
	ActorName() string
}

// Send queues m for h and starts a run (a supervised goroutine) unless one is going.
func (b *Mailbox) Send(h Handler, m any) {
	b.mu.Lock()
	b.queue = append(b.queue, m)
	if b.running {
		b.mu.Unlock()
		return
	}
	b.running = true
	b.mu.Unlock()
	supervise.Go("actors.mailbox", func() { b.run(h) })
}

// Run hands m to h on the calling goroutine when no run is going, and starts one for what
// was queued meanwhile; else it queues m as Send does. For a sweep over many idle actors
// (an idle check), which would otherwise start a goroutine for each.
func (b *Mailbox) Run(h Handler, m any) {
	b.mu.Lock()
	if b.running {
		b.queue = append(b.queue, m)
		b.mu.Unlock()
		return
	}
	b.running = true
	b.mu.Unlock()
	deliver(h, m)
	b.mu.Lock()
	if len(b.queue) == 0 {
		b.running = false
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	supervise.Go("actors.mailbox", func() { b.run(h) })
}

// Idle reports whether no run is going and nothing waits. Once it has, everything the
// handler did before is visible to the caller (it happened before the run ended).
func (b *Mailbox) Idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.running && len(b.queue) == 0
}

// run handles the queue until it is empty, taking what waits a batch at a time.
func (b *Mailbox) run(h Handler) {
	for {
		b.mu.Lock()
		q := b.queue
		b.queue = nil
		if len(q) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		for i, m := range q {
			deliver(h, m)
			q[i] = nil
		}
	}
}

// deliver hands m to h, recovering a panic as Recover does.
func deliver(h Handler, m any) {
	defer func() {
		if v := recover(); v != nil {
			recovered(h.ActorName(), m, v)
		}
	}()
	h.Receive(m)
}

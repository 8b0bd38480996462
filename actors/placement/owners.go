package placement

import (
	"context"
	"sync/atomic"
)

// Owners is the runtime of passivating owners of one kind of entity (an account's quota, a
// video task), over a Directory: each entity's messages go to its one active owner,
// activated by its first message; an idle owner hands its entity back (Passivation); a
// closing runtime refuses new messages and retires every owner (RetireAll). The owners keep
// only their own work: what they hold, when they are idle, what they write before retiring.
type Owners[T comparable] struct {
	*Directory[T]
	closed atomic.Bool
}

// NewOwners is the runtime over d.
func NewOwners[T comparable](d *Directory[T]) *Owners[T] { return &Owners[T]{Directory: d} }

// Send routes m to the entity's owner, activating one, and reports whether it did: refused
// once the runtime is closing. A retire (retire true) is the exception both ways: it only
// reaches an active owner, and it is let through while closing (RetireAll sends it).
func (o *Owners[T]) Send(entity string, m any, retire bool) bool {
	return o.Route(entity, m, !retire, func() bool { return !retire && o.closed.Load() })
}

// Closing refuses every message from now on but the retires.
func (o *Owners[T]) Closing() { o.closed.Store(true) }

// Closed reports whether the runtime is closing.
func (o *Owners[T]) Closed() bool { return o.closed.Load() }

// RetireAll asks every active owner to retire (ask sends the owner its retire and returns
// where the answer comes, or nil when it could not be sent) and waits for every answer, or
// for ctx. It returns the first answer's error (errOf).
func RetireAll[T comparable, R any](ctx context.Context, o *Owners[T], ask func(entity string) <-chan R, errOf func(R) error) error {
	var waits []<-chan R
	for _, entity := range o.Entities() {
		if w := ask(entity); w != nil {
			waits = append(waits, w)
		}
	}
	var first error
	for _, w := range waits {
		select {
		case r := <-w:
			if err := errOf(r); err != nil && first == nil {
				first = err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return first
}

// Passivation is an owner's part of the handshake: the routed messages it received, the
// count at its last idle check, and whether it has retired. An owner counts each routed
// message (Arrived), asks at each idle check whether any came since the last (Quiet), and
// retires through Retire, which fails while a message is on its way to it.
type Passivation struct {
	received uint64
	// seen is received's low 32 bits at the last idle check: compared for equality only,
	// checks seconds apart, and 32 bits keep small owners in their size class.
	seen    uint32
	retired bool
}

// Arrived counts a routed message.
func (p *Passivation) Arrived() { p.received++ }

// Quiet reports whether no routed message arrived since the last check, and starts the next
// interval.
func (p *Passivation) Quiet() bool {
	quiet := uint32(p.received) == p.seen
	p.seen = uint32(p.received)
	return quiet
}

// Retired reports whether the owner has handed its entity back.
func (p *Passivation) Retired() bool { return p.retired }

// Retire hands entity back to the directory if self, its owner, has received every message
// routed to it; false (the owner carries on) when one is on its way.
func Retire[T comparable](o *Owners[T], p *Passivation, entity string, self T) bool {
	if !o.Directory.Retire(entity, self, p.received) {
		return false
	}
	p.retired = true
	return true
}

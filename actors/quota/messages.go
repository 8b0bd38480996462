package quota

import "github.com/modelgate/modelgate/persistence"

// Every request to an account actor carries its own reply channel (buffered, one slot):
// the actor answers exactly once and never blocks on a caller that gave up. A panic while
// handling one is answered through Fail (actors.Failer) by the recover middleware.

// result is one reply.
type result[T any] struct {
	v   T
	err error
}

// reply is the one-slot channel a request carries. It carries a pointer: a large value
// would be copied through the actor's frames.
type reply[T any] chan *result[T]

func newReply[T any]() reply[T] { return make(reply[T], 1) }

// send answers unless an answer is already there (a panic after the real reply).
func (r reply[T]) send(v T, err error) { r.put(&result[T]{v, err}) }

// put is send for a result built in place.
func (r reply[T]) put(res *result[T]) {
	select {
	case r <- res:
	default:
	}
}

// routed is a request that reached the actor through the directory; the actor counts them
// so that it passivates only when none is in flight (see directory.retire). Requests travel
// as pointers: the actor's frames stay small (Hollywood runs each burst of messages on a
// fresh goroutine, whose stack would otherwise be copied to grow on every wake-up).
type routed interface {
	Fail(err error)
}

// retireMsg asks the actor to finish its writes and passivate (Service.Close).
type retireMsg struct {
	reply reply[struct{}]
}

func (m *retireMsg) Fail(err error) { m.reply.send(struct{}{}, err) }

// Internal messages, sent by the actor to itself (not routed, not counted).
type (
	tick       struct{} // the idle timer fired
	flushMsg   struct{} // write what is pending (ledger.go)
	writtenMsg struct { // the store is done with the write in flight
		err     error
		waiters []func(error)            // to answer, after a failure
		grants  []persistence.GrantWrite // on disk now, after a success
	}
	retireAgain struct{ m *retireMsg } // a retire that found messages still in flight
)

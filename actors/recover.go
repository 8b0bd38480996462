// Package actors holds what every actor of the gateway shares: the recover middleware and
// the spawn options. Each kind of actor lives in its own subpackage.
package actors

import (
	"fmt"
	"log/slog"

	"github.com/anthdm/hollywood/actor"
)

// Failer is a message that carries its own reply channel; a panic while handling it is
// answered with an error instead of leaving the caller waiting.
type Failer interface {
	Fail(err error)
}

// Recover turns a panic in Receive into an error reply and keeps the actor and its state.
// Without it Hollywood drops the message, resets the actor, and on the fourth panic takes the
// whole process down.
func Recover(next actor.ReceiveFunc) actor.ReceiveFunc {
	return func(c *actor.Context) {
		defer func() {
			if v := recover(); v != nil {
				err := fmt.Errorf("actor %s: internal error: %v", c.PID().ID, v)
				slog.Error("actor panic recovered", "actor", c.PID().ID, "message_type", fmt.Sprintf("%T", c.Message()), "panic", fmt.Sprint(v))
				if f, ok := c.Message().(Failer); ok {
					f.Fail(err)
				}
			}
		}()
		next(c)
	}
}

// SmallInbox is the inbox size for per-entity actors: about 1 KB each instead of the
// default's 28 KB, which matters with an actor per account or route.
const SmallInbox = 64

// Options are the spawn options every actor of the gateway uses.
func Options(id string, inbox int) []actor.OptFunc {
	return []actor.OptFunc{
		actor.WithID(id),
		actor.WithInboxSize(inbox),
		actor.WithMiddleware(Recover),
		actor.WithMaxRestarts(1 << 30), // a panic is recovered above; restarts only follow engine faults
	}
}

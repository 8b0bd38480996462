// Package actors holds what every actor of the gateway shares: the recover middleware and
// the spawn options. Each kind of actor lives in its own subpackage.
package actors

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/anthdm/hollywood/actor"

	"github.com/modelgate/modelgate/internal/supervise"
)

// Failer is a message that carries its own reply channel; a panic while handling it is
// answered with an error instead of leaving the caller waiting.
type Failer interface {
	Fail(err error)
}

// Recover turns a panic in Receive into an error reply and keeps the actor and its state.
// Without it Hollywood drops the message, resets the actor, and on the fourth panic takes the
// whole process down. The panic is logged with its stack and counted as every recovered one
// is (supervise.Recovered), under actor.<kind>; the reply's error names the actor and the
// message, never the panic's value (it may hold content).
func Recover(next actor.ReceiveFunc) actor.ReceiveFunc {
	return func(c *actor.Context) {
		defer func() {
			if v := recover(); v != nil {
				recovered(c.PID().ID, c.Message(), v)
			}
		}()
		next(c)
	}
}

// recovered logs and counts a panic v of actor id (kind/id) while it handled msg, and
// answers msg with an error when it is a Failer.
func recovered(id string, msg, v any) {
	typ := fmt.Sprintf("%T", msg)
	supervise.Recovered(where(id), v, debug.Stack(), "actor", id, "message_type", typ)
	if f, ok := msg.(Failer); ok {
		f.Fail(fmt.Errorf("actor %s: %s: %w", id, typ, supervise.ErrPanicked))
	}
}

// where is the panic count's name of an actor: actor.<kind>, its PID without the entity's id
// (Hollywood's PID is kind/id), a bounded label.
func where(pid string) string {
	kind, _, _ := strings.Cut(pid, "/")
	return "actor." + kind
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

package video

import (
	"time"

	"github.com/modelgate/modelgate/codec/videos"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/assets"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// Requests reach an actor through the directory (routed, counted for the passivation
// handshake) as pointers; those with a caller carry a one-slot reply channel, answered
// exactly once, and answer through Fail (actors.Failer) after a panic.
type routed interface {
	Fail(err error)
}

// startMsg activates a task: a new one (Start, with the route its job was created on), an
// abandoned one whose release must be retried, or an open one (Resume). An actor that holds
// its task already just carries on.
type startMsg struct {
	rec   persistence.VideoTask
	route *catalog.Route // nil: look it up in the catalog
	fresh bool           // the job was just created: the first poll waits Config.PollStart
}

func (m *startMsg) Fail(error) {}

type getResult struct {
	task Task
	err  error
}

// getMsg reads the task for account. rec, when set, is the stored task the service just
// read (saves the actor a read when it activates).
type getMsg struct {
	account string
	rec     *persistence.VideoTask
	reply   chan getResult
}

func (m *getMsg) Fail(err error) { sendOnce(m.reply, getResult{err: err}) }

// withdrawMsg fails an open task whose creation the client was never told of (its call could
// not be recorded): whatever the upstream makes of it afterwards, nothing is billed and its
// reservations are released.
type withdrawMsg struct {
	code, msg string
}

func (m *withdrawMsg) Fail(error) {}

// retireMsg asks the actor to write what is unwritten and stop (Service.Close); quiet, to
// stop without writing (the task goes on elsewhere, in a cluster).
type retireMsg struct {
	reply chan error
	quiet bool
}

func (m *retireMsg) Fail(err error) { sendOnce(m.reply, err) }

// placeMsg asks the actor to stop, without writing, when its task no longer runs on this
// node (Service.Reassess).
type placeMsg struct{}

func (m *placeMsg) Fail(error) {}

func sendOnce[T any](c chan T, v T) {
	select {
	case c <- v:
	default:
	}
}

// Internal messages, sent by the actor's own timers and calls (not routed, not counted).
type (
	wake        struct{ gen uint64 } // a poll or retry timer fired
	idleTick    struct{}             // the passivation timer fired
	retireAgain struct{ m *retireMsg }
)

// Results of the calls an actor makes off its goroutine.
type (
	polledRes struct {
		job  videos.Job
		wait time.Duration
		err  error
	}
	downloadedRes struct {
		asset assets.Asset
		err   error
	}
	copiedRes struct {
		holders []uint64
		err     error
	}
	settledRes struct {
		charged int64
		err     error
	}
)

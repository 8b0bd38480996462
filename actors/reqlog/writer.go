// Package reqlog batches request log entries into Pebble from one actor, so a request never
// waits on a disk sync and many entries share one.
package reqlog

import (
	"log/slog"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/modelgate/modelgate/actors"
	"github.com/modelgate/modelgate/persistence"
)

// Kind is the actor kind.
const Kind = "reqlog"

// Appender is the part of the store the writer needs.
type Appender interface {
	AppendLog([]persistence.LogEntry) error
}

// Flush asks for everything received so far to be durable; Done is closed after.
type Flush struct{ Done chan error }

// Fail implements actors.Failer.
func (f Flush) Fail(err error) { f.Done <- err }

type tick struct{}

// Config sizes the batches.
type Config struct {
	MaxBatch int           // entries that trigger a write at once
	Interval time.Duration // longest an entry waits
	MaxQueue int           // entries kept while the store fails; each failed retry drops the oldest past it
}

// DefaultConfig writes every 100 ms or 256 entries.
func DefaultConfig() Config {
	return Config{MaxBatch: 256, Interval: 100 * time.Millisecond, MaxQueue: 100_000}
}

type writer struct {
	store   Appender
	cfg     Config
	pending []persistence.LogEntry
	repeat  actor.SendRepeater
	started bool
	failing bool // the last write failed: retry on ticks only, not on every new entry
}

// Start spawns the writer.
func Start(e *actor.Engine, store Appender, cfg Config) *actor.PID {
	return e.Spawn(func() actor.Receiver { return &writer{store: store, cfg: cfg} }, Kind, actors.Options("main", 4096)...)
}

func (w *writer) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		if !w.started {
			w.repeat = c.SendRepeat(c.PID(), tick{}, w.cfg.Interval)
			w.started = true
		}
	case persistence.LogEntry:
		w.pending = append(w.pending, m)
		// While the store fails, a full batch waits for the next tick: retrying the whole
		// queue on every new entry would burn CPU and flood the log during an outage.
		if len(w.pending) >= w.cfg.MaxBatch && !w.failing {
			w.write()
		}
	case tick:
		w.write()
	case Flush:
		m.Done <- w.write()
	case actor.Stopped:
		if w.started {
			w.repeat.Stop()
		}
		w.write()
	}
}

func (w *writer) write() error {
	if len(w.pending) == 0 {
		return nil
	}
	err := w.store.AppendLog(w.pending)
	// One line when writes start failing and one when they succeed again, not one per
	// retry: a full disk lasts as long as it lasts, and the store says so itself.
	switch {
	case err != nil && !w.failing:
		slog.Error("request log write failed; entries are kept and retried until it succeeds", "entries", len(w.pending), "err", err)
	case err == nil && w.failing:
		slog.Info("request log written again", "entries", len(w.pending))
	}
	w.failing = err != nil
	if err != nil {
		if over := len(w.pending) - w.cfg.MaxQueue; over > 0 {
			slog.Error("request log queue full; dropping oldest entries", "dropped", over)
			w.pending = append(w.pending[:0], w.pending[over:]...)
		}
		return err
	}
	w.pending = w.pending[:0]
	return nil
}

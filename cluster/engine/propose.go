package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lni/dragonboat/v4"
	"github.com/modelgate/modelgate/internal/supervise"
)

// attemptTimeout bounds one try of a proposal, read or membership change. A try that times
// out (a leader just died, an election is on) is retried until the caller's context ends,
// so a slow shard costs the caller its own deadline, never an early failure.
const attemptTimeout = 400 * time.Millisecond

// Backoff between tries that failed at once (no leader yet, busy): short enough to catch
// a 200–400 ms election, long enough not to spin.
const (
	firstBackoff = 5 * time.Millisecond
	maxBackoff   = 50 * time.Millisecond
)

// errLeaderChanged ends a try when its shard's leader changed while it waited: a proposal or
// read forwarded to the old leader is lost with it, and waiting out the try would only add
// to the stall (measured: the 2 s stalls of the kill suite were calls sent at a leader's
// kill, each try waiting its full 400 ms). The next try goes to the new leader at once.
var errLeaderChanged = errors.New("the shard's leader changed")

// transient reports whether a failed try may succeed if tried again. A closed node or shard
// (ErrClosed, ErrShardClosed), an unknown shard, a rejected request and a cancelled caller
// will not.
func transient(err error) bool {
	return errors.Is(err, errLeaderChanged) ||
		errors.Is(err, dragonboat.ErrShardNotReady) || // no leader; dropped
		errors.Is(err, dragonboat.ErrShardNotInitialized) || // replica still loading
		errors.Is(err, dragonboat.ErrTimeout) ||
		errors.Is(err, dragonboat.ErrSystemBusy) ||
		errors.Is(err, dragonboat.ErrAborted) ||
		// the caller's deadline is under one tick away: the next wait ends with it
		errors.Is(err, dragonboat.ErrTimeoutTooSmall)
}

// retry runs try with a fresh per-attempt deadline until it succeeds, fails for good, or
// ctx ends. what names the operation in the error.
func retry(ctx context.Context, what string, try func(ctx context.Context) error) error {
	backoff := firstBackoff
	for {
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		err := try(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w (last try: %v)", what, ctx.Err(), err)
		}
		if !transient(err) {
			return fmt.Errorf("%s: %w", what, err)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last try: %v)", what, ctx.Err(), err)
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// untilLeaderChange runs try with ctx also cancelled at shard's next leader change, which it
// then reports as errLeaderChanged.
func (n *Node) untilLeaderChange(ctx context.Context, shard uint64, try func(ctx context.Context) error) error {
	changed := n.events.watch(shard)
	ctx, cancel := context.WithCancel(ctx)
	supervise.Go("engine.leader-watch", func() {
		select {
		case <-changed:
			cancel()
		case <-ctx.Done():
		}
	})
	err := try(ctx)
	cancel()
	if err != nil {
		select {
		case <-changed:
			return fmt.Errorf("%w (%v)", errLeaderChanged, err)
		default:
		}
	}
	return err
}

// Propose implements cluster.Replicator with dragonboat's no-op session: commands carry their
// own idempotency, so a retry after a timed-out try (which may yet commit) is safe.
func (n *Node) Propose(ctx context.Context, shard uint64, cmd []byte) ([]byte, error) {
	if n.isClosed() {
		return nil, errClosed
	}
	began := time.Now()
	if leader, ok := n.Leader(shard); ok && leader != n.cfg.NodeID {
		n.stats.forwarded.Add(1)
	}
	session := n.nh.GetNoOPSession(shard)
	var out []byte
	err := retry(ctx, fmt.Sprintf("propose to shard %d", shard), func(ctx context.Context) error {
		return n.untilLeaderChange(ctx, shard, func(ctx context.Context) error {
			res, err := n.nh.SyncPropose(ctx, session, cmd)
			out = res.Data
			return err
		})
	})
	n.stats.done(opPropose, began, err)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Read implements cluster.Replicator with a ReadIndex read: the leader confirms its commit
// index with a quorum, this replica applies up to it, then its state machine answers.
func (n *Node) Read(ctx context.Context, shard uint64, query []byte) ([]byte, error) {
	if n.isClosed() {
		return nil, errClosed
	}
	began := time.Now()
	var out []byte
	err := retry(ctx, fmt.Sprintf("read shard %d", shard), func(ctx context.Context) error {
		return n.untilLeaderChange(ctx, shard, func(ctx context.Context) error {
			v, err := n.nh.SyncRead(ctx, shard, query)
			if err != nil {
				return err
			}
			out, _ = v.([]byte)
			return nil
		})
	})
	n.stats.done(opRead, began, err)
	if err != nil {
		return nil, err
	}
	return out, nil
}

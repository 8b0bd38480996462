package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/lni/dragonboat/v4"
)

// CaughtUp returns once this replica of shard has applied every entry the shard had
// committed when it was called (a ReadIndex with no query): what a restarted node waits
// for before it says it is ready.
func (n *Node) CaughtUp(ctx context.Context, shard uint64) error {
	if n.isClosed() {
		return errClosed
	}
	began := time.Now()
	err := retry(ctx, fmt.Sprintf("catch up on shard %d", shard), func(ctx context.Context) error {
		return n.untilLeaderChange(ctx, shard, func(ctx context.Context) error {
			return n.readIndex(ctx, shard)
		})
	})
	n.stats.done(opRead, began, err)
	return err
}

// readIndex is one ReadIndex try, ended by ctx's deadline.
func (n *Node) readIndex(ctx context.Context, shard uint64) error {
	d, ok := ctx.Deadline()
	if !ok {
		return fmt.Errorf("read index of shard %d: no deadline", shard)
	}
	rs, err := n.nh.ReadIndex(shard, time.Until(d))
	if err != nil {
		return err
	}
	defer rs.Release()
	select {
	case r := <-rs.ResultC():
		switch {
		case r.Completed():
			return nil
		case r.Timeout():
			return dragonboat.ErrTimeout
		case r.Terminated():
			return dragonboat.ErrShardClosed
		case r.Dropped():
			return dragonboat.ErrShardNotReady
		default:
			return dragonboat.ErrAborted
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

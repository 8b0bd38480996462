package video

import (
	"context"
	"errors"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// The quota steps of a finished task (see the package comment). Each is idempotent, so a
// task repeats them all until it has written Settled.

// holdKey names a task's credit hold, and its charge (quota.ChargeKeyPrefix + holdKey).
func holdKey(task string) string { return "video/" + task }

// release gives back what a failed task reserved: its daily seconds and its credit hold.
func release(ctx context.Context, q Quota, r *persistence.VideoTask) error {
	if r.MediaAccount != "" {
		res := quota.MediaReservation{Account: r.MediaAccount, Kind: r.MediaKind, ID: r.MediaID}
		if err := q.ReleaseVideoSeconds(ctx, res); err != nil && !errors.Is(err, quota.ErrUnknownReservation) {
			return err
		}
	}
	if r.Held > 0 {
		return q.ReleaseHold(ctx, r.Account, holdKey(r.ID))
	}
	return nil
}

// bill commits a completed task's output seconds to the day's count and charges them at
// its price from its hold (the hold's rest is released; a task within the plan holds
// nothing and is charged nothing), with entry, the request log entry. It returns the charge.
func bill(ctx context.Context, q Quota, r *persistence.VideoTask, plan *catalog.Plan, entry *persistence.LogEntry) (int64, error) {
	made := outputSeconds(r)
	if r.MediaAccount != "" {
		res := quota.MediaReservation{Account: r.MediaAccount, Kind: r.MediaKind, ID: r.MediaID}
		if err := q.CommitVideoSeconds(ctx, res, made); err != nil && !errors.Is(err, quota.ErrUnknownReservation) {
			return 0, err
		}
	}
	s, err := q.SettleHold(ctx, r.Account, plan, holdKey(r.ID), money.Amount(r.Price).Times(made), entry)
	return int64(s.Charged), err
}

// outputSeconds is what a completed task is billed for: the seconds the upstream made, or
// the requested seconds when it did not say (tasks of earlier versions too).
func outputSeconds(r *persistence.VideoTask) int64 {
	if r.OutputSeconds > 0 {
		return r.OutputSeconds
	}
	return r.Seconds
}

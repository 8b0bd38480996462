package persistence

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// In a cluster the video tasks of an account live in its account shard (cluster/accounts):
// the shard's Update writes them where the single node writes them (task/, task-open/), in
// its batch, and its snapshots carry them.

// GetTask is Store.GetTask as the batch sees it.
func (b *ShardBatch) GetTask(id string) (VideoTask, error) {
	if err := validateTaskID(id); err != nil {
		return VideoTask{}, fmt.Errorf("persistence: get task: %w", err)
	}
	return getTaskIn(b.b, id)
}

// PutTask adds the task and its task-open index entry to the batch, checked as
// Store.PutTask checks it.
func (b *ShardBatch) PutTask(t *VideoTask) error {
	if err := validateTask(t); err != nil {
		return fmt.Errorf("persistence: put task: %w", err)
	}
	return putTask(b.b, t)
}

// CheckTask reports what in t the store would refuse to write.
func CheckTask(t *VideoTask) error { return validateTask(t) }

// ScanTask calls fn for the task's pairs (its record and its task-open entry), in key order;
// an unknown task has none.
func (v *ShardView) ScanTask(id string, fn func(k, v []byte) error) error {
	if err := validateTaskID(id); err != nil {
		return err
	}
	for _, k := range [][]byte{dbKey(nsTask, id), dbKey(nsTaskOpen, id)} {
		val, closer, err := v.snap.Get(k)
		if err != nil {
			if err = mapNotFoundOK(err); err != nil {
				return err
			}
			continue
		}
		err = fn(k, val)
		closer.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func deleteTask(b *pebble.Batch, id string) error {
	if err := validateTaskID(id); err != nil {
		return err
	}
	if err := b.Delete(dbKey(nsTask, id), nil); err != nil {
		return err
	}
	return b.Delete(dbKey(nsTaskOpen, id), nil)
}

func inTaskSpace(k []byte) bool {
	return bytes.HasPrefix(k, []byte(nsTask)) || bytes.HasPrefix(k, []byte(nsTaskOpen))
}

package accounts

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/persistence"
)

// Video tasks in a cluster (docs/cluster.md, "Video tasks in a cluster") live in their
// account's shard: a task's record is written by the shard's Update, in its batch, where the
// single node writes it (task/<id>, task-open/<id>), and the shard lists its tasks under
// acctshard/<shard>/task/<id> so that its snapshots carry them.
//
// A change is applied only onto the revision it was made from (VideoTask.Rev): the actor of
// a deposed leader, whose proposal reached the new leader anyway (the engine forwards a
// follower's proposals), finds the task moved on and is refused, so two actors never both
// write a task. A change applied already (a retry after an unknown outcome) is answered as
// it was: the same command id within RememberedEntries, and, beyond, a put whose result is
// the stored record.

// TaskOp is what a TaskChange does.
type TaskOp uint8

const (
	// TaskCreate stores a new task (revision 1); an id taken is TaskExists.
	TaskCreate TaskOp = iota + 1
	// TaskPut writes a task's next state onto the revision in its Rev.
	TaskPut
)

// TaskChange is one write of a video task, proposed by the node that makes it.
type TaskChange struct {
	Op   TaskOp                `msgpack:"op"`
	Task persistence.VideoTask `msgpack:"task"` // Rev: the revision it was made from (create: 0)
}

// Why a task change was refused (TaskResult.Fail).
const (
	TaskExists   = "exists"    // create: the id is taken
	TaskNotFound = "not_found" // put: no such task in the shard
	TaskStale    = "stale"     // put: the task has moved on since the change's revision
	TaskInvalid  = "invalid"   // not a task the store keeps, or not a forward move
)

// TaskResult is the answer to a TaskChange: the task's new revision, or why not.
type TaskResult struct {
	Rev  uint64 `msgpack:"rev"`
	Fail string `msgpack:"fail,omitempty"`
}

// Encode is the result as Update returns it.
func (r *TaskResult) Encode() ([]byte, error) { return msgpack.Marshal(r) }

// Decode reads an encoded TaskResult.
func (r *TaskResult) Decode(b []byte) error { return msgpack.Unmarshal(b, r) }

// TaskLookup answers a Query for a task on one replica.
type TaskLookup struct {
	Found bool                  `msgpack:"found"`
	Task  persistence.VideoTask `msgpack:"task"`
}

func (m *StateMachine) taskKey(id string) []byte { return m.key("task/", id) }

// task applies one change of account's task.
func (u *update) task(account string, ch *TaskChange) (TaskResult, error) {
	next := ch.Task
	if next.Account != account || persistence.CheckTask(&next) != nil || (ch.Op != TaskCreate && ch.Op != TaskPut) {
		return TaskResult{Fail: TaskInvalid}, nil
	}
	cur, err := u.b.GetTask(next.ID)
	found := err == nil
	if err != nil && !errors.Is(err, persistence.ErrNotFound) {
		return TaskResult{}, err
	}
	switch {
	case ch.Op == TaskCreate && found:
		return TaskResult{Fail: TaskExists}, nil
	case ch.Op == TaskCreate:
		next.Rev = 0
	case !found:
		return TaskResult{Fail: TaskNotFound}, nil
	case cur.Account != next.Account:
		return TaskResult{Fail: TaskInvalid}, nil
	case cur.Rev != next.Rev:
		if cur.Rev == next.Rev+1 && sameTask(cur, next) { // this very change, applied before
			return TaskResult{Rev: cur.Rev}, nil
		}
		return TaskResult{Fail: TaskStale}, nil
	case cur.Terminal() && cur.Status != next.Status:
		return TaskResult{Fail: TaskInvalid}, nil // an ended task stays ended
	}
	next.Rev++
	if err := u.b.PutTask(&next); err != nil {
		return TaskResult{}, err
	}
	if err := u.b.SetRaw(u.m.taskKey(next.ID), nil); err != nil {
		return TaskResult{}, err
	}
	if err := u.holders(&next); err != nil {
		return TaskResult{}, err
	}
	u.tasks = append(u.tasks, next)
	return TaskResult{Rev: next.Rev}, nil
}

// sameTask reports whether stored is change applied (change's revision plus one).
func sameTask(stored, change persistence.VideoTask) bool {
	change.Rev = stored.Rev
	a, errA := msgpack.Marshal(&stored)
	b, errB := msgpack.Marshal(&change)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// lookupTask answers a task Query from this replica's store.
func (m *StateMachine) lookupTask(id string) ([]byte, error) {
	t, err := m.store.GetTask(id)
	if errors.Is(err, persistence.ErrNotFound) || errors.Is(err, persistence.ErrInvalid) {
		return msgpack.Marshal(&TaskLookup{})
	}
	if err != nil {
		return nil, fmt.Errorf("accounts: shard %d: read task %s: %w", m.shard, id, err)
	}
	return msgpack.Marshal(&TaskLookup{Found: true, Task: t})
}

// SetTaskHook makes the state machine call f with every task it wrote, in log order, once
// the Update that wrote it is committed to the store (a leader's video service starts the
// task's actor from it). f must not block. Set it before the shard starts.
func (m *StateMachine) SetTaskHook(f func(persistence.VideoTask)) { m.onTask = f }

package accounts

import (
	"context"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/persistence"
)

// Tasks is a cluster node's video task store (video.Tasks, video.FreshTasks): a write is a
// TaskChange proposed to the account's shard through the Owner's batcher (retried under the
// same command id, as a quota step is), and returns once this node's replica has applied it,
// so the node reads its own writes; other reads are this node's replica, or, where a client
// must see every write made anywhere, a linearizable read of the shard.
type Tasks struct {
	o     *Owner
	store *persistence.Store
	reads *Reads
}

// NewTasks writes through the shards of r's Owner and reads through r: this node's
// replicas, or a holder's for a shard with no replica here.
func NewTasks(r *Reads) *Tasks { return &Tasks{o: r.o, store: r.store, reads: r} }

// CreateTask proposes a new task; an id taken is persistence.ErrConflict. t.Rev becomes 1.
func (t *Tasks) CreateTask(v *persistence.VideoTask) error { return t.change(TaskCreate, v) }

// PutTask proposes v's next state onto revision v.Rev, and sets v.Rev to the new one. A task
// that moved on since (another node's actor wrote it) is persistence.ErrConflict.
func (t *Tasks) PutTask(v *persistence.VideoTask) error { return t.change(TaskPut, v) }

func (t *Tasks) change(op TaskOp, v *persistence.VideoTask) error {
	ctx := context.Background() // bounded by TotalWait
	shard := t.o.Shard(v.Account)
	raw, err := (&Command{ID: NewCommandID(), Account: v.Account, Task: &TaskChange{Op: op, Task: *v}}).Encode()
	if err != nil {
		return fmt.Errorf("accounts: encode task %s: %w", v.ID, err)
	}
	out, err := t.o.submitRaw(ctx, shard, raw, TotalWait)
	if err != nil {
		return fmt.Errorf("accounts: task %s: %w", v.ID, err)
	}
	var r TaskResult
	if err := r.Decode(out); err != nil {
		return fmt.Errorf("accounts: task %s: a result that does not decode: %w", v.ID, err)
	}
	switch r.Fail {
	case "":
	case TaskExists, TaskStale:
		return fmt.Errorf("accounts: task %s: %w: %s", v.ID, persistence.ErrConflict, r.Fail)
	case TaskNotFound:
		return fmt.Errorf("accounts: task %s: %w", v.ID, persistence.ErrNotFound)
	default:
		return fmt.Errorf("accounts: task %s: %w: refused by shard %d (%s)", v.ID, persistence.ErrInvalid, shard, r.Fail)
	}
	v.Rev = r.Rev
	// Applied on the leader, perhaps not here yet: catch up, so this node reads what it
	// wrote (Start reads the task Create just wrote). Should the read fail, the write
	// stands; the replica catches up on its own.
	_ = t.Sync(ctx, shard)
	return nil
}

// GetTask reads this node's replicas, then those of the shards not held here.
func (t *Tasks) GetTask(id string) (persistence.VideoTask, error) { return t.reads.GetTask(id) }

// ListOpenTasks lists the open tasks of every shard this node holds a replica of.
func (t *Tasks) ListOpenTasks() ([]persistence.VideoTask, error) { return t.store.ListOpenTasks() }

// FreshTask reads account's task id after every change committed before the call (a
// linearizable read of the account's shard). An unknown id is persistence.ErrNotFound.
func (t *Tasks) FreshTask(ctx context.Context, account, id string) (persistence.VideoTask, error) {
	shard := t.o.Shard(account)
	q, err := (&Query{Account: account, Task: id}).Encode()
	if err != nil {
		return persistence.VideoTask{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, TotalWait)
	defer cancel()
	out, err := t.o.read(ctx, shard, q)
	if err != nil {
		return persistence.VideoTask{}, fmt.Errorf("accounts: read task %s from shard %d: %w", id, shard, err)
	}
	var l TaskLookup
	if err := msgpack.Unmarshal(out, &l); err != nil {
		return persistence.VideoTask{}, fmt.Errorf("accounts: task %s: a lookup that does not decode: %w", id, err)
	}
	if !l.Found {
		return persistence.VideoTask{}, fmt.Errorf("accounts: task %s: %w", id, persistence.ErrNotFound)
	}
	return l.Task, nil
}

// Sync returns once this node's replica of shard has applied every change committed before
// the call (a new leader catches up before it resumes the shard's tasks).
func (t *Tasks) Sync(ctx context.Context, shard uint64) error {
	if !t.o.holds(shard) {
		return nil // nothing here to catch up
	}
	q, err := (&Query{Sync: true}).Encode()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, TotalWait)
	defer cancel()
	_, err = t.o.rep.Read(ctx, shard, q)
	return err
}

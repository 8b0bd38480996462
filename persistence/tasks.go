package persistence

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// Video task namespaces: task/<id> holds a VideoTask; task-open/<id> (empty value) lists the
// tasks that still have work to do (not terminal, or terminal with the quota step not yet
// done), so a starting node finds them without reading every task ever made.
const (
	nsTask     = "task/"
	nsTaskOpen = "task-open/"
)

// Video task states. A task only moves forward: queued → in_progress → completed | failed
// (queued may go straight to completed or failed).
const (
	TaskQueued     = "queued"
	TaskInProgress = "in_progress"
	TaskCompleted  = "completed"
	TaskFailed     = "failed"
)

// VideoTask is the durable record of one asynchronous video task, written only by the
// task's actor (actors/video). Times are unix nanoseconds UTC; money is pico-USD.
type VideoTask struct {
	ID         string `msgpack:"id"`
	Account    string `msgpack:"acct"`
	KeyID      string `msgpack:"key"`
	Model      string `msgpack:"model"` // catalog model id
	Route      string `msgpack:"route"` // catalog route id the upstream job lives on
	Seconds    int64  `msgpack:"sec"`   // clip length asked for (and billed)
	Size       string `msgpack:"size"`
	UpstreamID string `msgpack:"up,omitempty"` // the upstream job id once created
	Attempts   int    `msgpack:"att"`          // upstream create attempts made
	// OutputSeconds is the clip length the upstream made (completed only; at most Seconds).
	OutputSeconds int64 `msgpack:"osec,omitempty"`

	Status       string `msgpack:"st"`
	Progress     int    `msgpack:"pr"`
	ErrorCode    string `msgpack:"ecode,omitempty"` // failed only
	ErrorMessage string `msgpack:"emsg,omitempty"`
	AssetID      string `msgpack:"asset,omitempty"` // completed only: persistence/assets id
	AssetPath    string `msgpack:"apath,omitempty"` // its public path, /assets/vid/<id>.mp4
	// AssetHolders are the cluster nodes holding the asset's file (completed, in a
	// cluster: the leader that stored it and one more); a single node leaves it empty.
	AssetHolders []uint64 `msgpack:"holders,omitempty"`

	Created  int64 `msgpack:"c"`
	Updated  int64 `msgpack:"u"`
	Finished int64 `msgpack:"f,omitempty"` // when it became completed or failed
	Deadline int64 `msgpack:"dl"`          // after this an unfinished task fails

	// Billing. MediaAccount/MediaKind/MediaID is the quota reservation of Seconds video
	// seconds (committed on completed, released on failed); Price is the model's USD price
	// per output second; Plan and Overdraft are the account's plan at creation (the charge
	// stops at its overdraft floor). Held is what the task holds from the credits (Price ×
	// Seconds beyond the plan, under the key "video/<id>"; 0 within the plan). Settled says
	// the quota step of a terminal task is done (exactly once: the step is idempotent and
	// this flag ends it); Charged is what it took.
	MediaAccount string `msgpack:"macct,omitempty"`
	MediaKind    string `msgpack:"mkind,omitempty"`
	MediaID      uint64 `msgpack:"mid,omitempty"`
	Price        int64  `msgpack:"price"`
	Plan         string `msgpack:"plan,omitempty"`
	Overdraft    int64  `msgpack:"od,omitempty"`
	Held         int64  `msgpack:"held,omitempty"`
	Settled      bool   `msgpack:"settled"`
	Charged      int64  `msgpack:"charged"`

	// Rev counts the writes of a task replicated in a cluster's account shard, which
	// applies a write only onto the revision it was made from (cluster/accounts); a single
	// node leaves it 0.
	Rev uint64 `msgpack:"rev,omitempty"`
}

// Terminal reports whether the task reached completed or failed.
func (t *VideoTask) Terminal() bool { return t.Status == TaskCompleted || t.Status == TaskFailed }

// Open reports whether the task still has work to do (it is in the task-open index).
func (t *VideoTask) Open() bool { return !t.Terminal() || !t.Settled }

// CreateTask durably stores a new task; an existing id is ErrConflict.
func (s *Store) CreateTask(t *VideoTask) error {
	if err := validateTask(t); err != nil {
		return fmt.Errorf("persistence: create task: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ok, err := s.has(dbKey(nsTask, t.ID)); err != nil {
		return fmt.Errorf("persistence: create task %s: %w", t.ID, err)
	} else if ok {
		return fmt.Errorf("persistence: create task %s: %w: id exists", t.ID, ErrConflict)
	}
	return s.writeTask(t)
}

// PutTask durably stores a task's new state and keeps the task-open index in step, in one
// synced batch.
func (s *Store) PutTask(t *VideoTask) error {
	if err := validateTask(t); err != nil {
		return fmt.Errorf("persistence: put task: %w", err)
	}
	return s.writeTask(t)
}

func (s *Store) writeTask(t *VideoTask) error {
	b := s.db.NewBatch()
	if err := putTask(b, t); err != nil {
		b.Close()
		return fmt.Errorf("persistence: write task %s: %w", t.ID, err)
	}
	if err := s.commit(b); err != nil {
		return fmt.Errorf("persistence: write task %s: %w", t.ID, err)
	}
	return nil
}

// putTask adds the task and its task-open index entry to b.
func putTask(b *pebble.Batch, t *VideoTask) error {
	if err := putMsgpack(b, dbKey(nsTask, t.ID), t); err != nil {
		return err
	}
	if t.Open() {
		return b.Set(dbKey(nsTaskOpen, t.ID), nil, nil)
	}
	return b.Delete(dbKey(nsTaskOpen, t.ID), nil)
}

// GetTask returns a task; an unknown id is ErrNotFound.
func (s *Store) GetTask(id string) (VideoTask, error) {
	var t VideoTask
	if err := validateTaskID(id); err != nil {
		return t, fmt.Errorf("persistence: get task: %w", err)
	}
	return getTaskIn(s.db, id)
}

func getTaskIn(r pebble.Reader, id string) (VideoTask, error) {
	var t VideoTask
	if err := getMsgpackIn(r, dbKey(nsTask, id), &t); err != nil {
		if errors.Is(err, ErrNotFound) {
			return t, notFound("task", id)
		}
		return t, fmt.Errorf("persistence: get task %s: %w", id, err)
	}
	return t, nil
}

// ListOpenTasks returns every task in the task-open index, by id.
func (s *Store) ListOpenTasks() ([]VideoTask, error) {
	var ids []string
	err := s.scanPrefix([]byte(nsTaskOpen), func(k, _ []byte) (bool, error) {
		ids = append(ids, string(k[len(nsTaskOpen):]))
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("persistence: list open tasks: %w", err)
	}
	out := make([]VideoTask, 0, len(ids))
	for _, id := range ids {
		var t VideoTask
		if err := s.getMsgpack(dbKey(nsTask, id), &t); err != nil {
			return nil, fmt.Errorf("persistence: open task %s: %w", id, err)
		}
		out = append(out, t)
	}
	return out, nil
}

func validateTaskID(id string) error {
	if id == "" || len(id) > maxLogIDLen || !printableASCII(id) || strings.IndexByte(id, '/') >= 0 {
		return fmt.Errorf("%w: task id %q must be 1-%d printable ASCII bytes without '/'", ErrInvalid, id, maxLogIDLen)
	}
	return nil
}

func validateTask(t *VideoTask) error {
	if err := validateTaskID(t.ID); err != nil {
		return err
	}
	if err := validateLogAccount(t.Account); err != nil {
		return err
	}
	switch {
	case t.Status != TaskQueued && t.Status != TaskInProgress && t.Status != TaskCompleted && t.Status != TaskFailed:
		return fmt.Errorf("%w: task %s: status %q", ErrInvalid, t.ID, t.Status)
	case t.Progress < 0 || t.Progress > 100:
		return fmt.Errorf("%w: task %s: progress %d outside 0-100", ErrInvalid, t.ID, t.Progress)
	case t.Seconds <= 0:
		return fmt.Errorf("%w: task %s: seconds %d must be positive", ErrInvalid, t.ID, t.Seconds)
	case t.OutputSeconds < 0 || t.OutputSeconds > t.Seconds:
		return fmt.Errorf("%w: task %s: output seconds %d outside 0-%d", ErrInvalid, t.ID, t.OutputSeconds, t.Seconds)
	case t.Price < 0 || t.Charged < 0 || t.Overdraft < 0 || t.Held < 0:
		return fmt.Errorf("%w: task %s: negative money", ErrInvalid, t.ID)
	case t.Status == TaskCompleted && (t.Progress != 100 || t.AssetPath == ""):
		return fmt.Errorf("%w: task %s: completed needs progress 100 and an asset", ErrInvalid, t.ID)
	case t.Status == TaskFailed && t.ErrorCode == "":
		return fmt.Errorf("%w: task %s: failed needs an error code", ErrInvalid, t.ID)
	case t.Settled && !t.Terminal():
		return fmt.Errorf("%w: task %s: settled before it finished", ErrInvalid, t.ID)
	}
	return nil
}

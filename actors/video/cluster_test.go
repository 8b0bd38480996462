package video

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/assets"
)

// switchPlacement runs every task here or nowhere.
type switchPlacement struct{ here atomic.Bool }

func (p *switchPlacement) Here(string) bool { return p.here.Load() }

// recordingCopies "copies" a video to node 2 and notes which assets it was asked for.
type recordingCopies struct {
	mu  sync.Mutex
	ids []string
}

func (c *recordingCopies) Copy(_ context.Context, _ string, a assets.Asset) ([]uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids = append(c.ids, a.ID)
	return []uint64{1, 2}, nil
}

func (e *env) polls() int {
	e.api.mu.Lock()
	defer e.api.mu.Unlock()
	return len(e.api.polls)
}

// On a node that does not lead the task's shard, Start writes the job and starts nothing,
// and a Get answers from the record without activating an actor; the leader adopts the task
// from its record and runs it to completion, copying the video before completing, with the
// holders in the completed record.
func TestATaskRunsOnlyWhereThePlacementSaysAndIsAdoptedFromItsRecord(t *testing.T) {
	where, copies := &switchPlacement{}, &recordingCopies{}
	e := newEnv(t, envOpts{realClock: true, placement: where, copies: copies,
		cfg: Config{PollStart: 20 * time.Millisecond, PollMax: 50 * time.Millisecond}})
	task := e.create("acct", 2, `{"duration":"100ms"}`)
	time.Sleep(300 * time.Millisecond) // the job is done upstream by now; nobody follows it here
	got, err := e.svc.Get(context.Background(), "acct", task.ID)
	if err != nil || got.Status != StatusQueued || e.svc.Active() != 0 || e.polls() != 0 {
		t.Fatalf("elsewhere: %+v, %v; %d actors, %d polls; want queued, no actor, no poll", got, err, e.svc.Active(), e.polls())
	}
	if _, err := e.svc.Get(context.Background(), "other", task.ID); !isNotFound(err) {
		t.Errorf("another account's Get elsewhere: %v, want not found", err)
	}
	where.here.Store(true)
	rec, err := e.store.GetTask(task.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.svc.Adopt(rec)
	done := e.wait("acct", task.ID, nil)
	stored, _ := e.store.GetTask(task.ID)
	if done.Status != StatusCompleted || !slices.Equal(stored.AssetHolders, []uint64{1, 2}) || len(copies.ids) != 1 || copies.ids[0] != stored.AssetID {
		t.Errorf("adopted: %+v, holders %v, copies of %v (asset %s); want completed, holders [1 2], one copy of its asset", done, stored.AssetHolders, copies.ids, stored.AssetID)
	}
}

// A node that loses the leadership stops the task's actor without writing: the record
// stays as it was, and nothing polls the job any more.
func TestLosingThePlacementStopsTheActorWithoutWriting(t *testing.T) {
	where := &switchPlacement{}
	where.here.Store(true)
	e := newEnv(t, envOpts{realClock: true, placement: where, copies: &recordingCopies{},
		cfg: Config{PollStart: 20 * time.Millisecond, PollMax: 20 * time.Millisecond}})
	task := e.create("acct", 2, `{"duration":"1h"}`)
	e.wait("acct", task.ID, func(t Task) bool { return t.Status == StatusInProgress })
	where.here.Store(false)
	e.svc.Reassess()
	deadline := time.Now().Add(5 * time.Second)
	for e.svc.Active() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the actor still runs after the leadership moved away")
		}
		time.Sleep(5 * time.Millisecond)
	}
	writes, polls := e.tasks.of(task.ID), e.polls()
	time.Sleep(200 * time.Millisecond)
	if w := e.tasks.of(task.ID); !slices.Equal(w, writes) || e.polls() != polls {
		t.Errorf("after stepping down: writes %q → %q, polls %d → %d; want none", writes, w, polls, e.polls())
	}
}

// refusingTasks refuses the next write once armed, as a shard refuses a stale one.
type refusingTasks struct {
	Tasks
	armed atomic.Bool
}

func (r *refusingTasks) PutTask(t *persistence.VideoTask) error {
	if r.armed.CompareAndSwap(true, false) {
		return fmt.Errorf("task %s: %w: stale", t.ID, persistence.ErrConflict)
	}
	return r.Tasks.PutTask(t)
}

// An actor whose write is refused (another node's actor wrote the task) stops, and the task
// is taken up again from its record by a new actor, which finishes it once.
func TestAnActorWhoseWriteIsRefusedStopsAndTheTaskGoesOnFromItsRecord(t *testing.T) {
	where, refusing := &switchPlacement{}, &refusingTasks{}
	where.here.Store(true)
	e := newEnv(t, envOpts{realClock: true, placement: where, copies: &recordingCopies{},
		wrapTasks: func(ts Tasks) Tasks { refusing.Tasks = ts; return refusing },
		cfg:       Config{PollStart: 20 * time.Millisecond, PollMax: 20 * time.Millisecond}})
	task := e.create("acct", 2, `{"duration":"300ms"}`)
	refusing.armed.Store(true) // the actor's first write (in progress) is refused
	done := e.wait("acct", task.ID, nil)
	writes := e.tasks.of(task.ID)
	if done.Status != StatusCompleted || refusing.armed.Load() || writes[len(writes)-2] != "completed 100" || writes[len(writes)-1] != "completed 100 settled" {
		t.Errorf("task %+v, writes %q: want completed and settled once after the refused write", done, writes)
	}
	if c := e.quotas.counts(); c.commits != 1 || c.settles != 1 {
		t.Errorf("quota calls %+v: want one commit and one settle", c)
	}
}

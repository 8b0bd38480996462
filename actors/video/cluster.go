package video

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence"
)

// In a cluster (Deps.Placement set) a task's record lives in its account's shard and its
// actor runs only on that shard's leader (docs/cluster.md "Video tasks in a cluster"):
//
//   - the node that took POST /videos writes the task and its job through the shard and
//     starts no actor unless it leads the shard; the leader's shard replica hands every task
//     it applies to Adopt, which starts the actor;
//   - a node that gains a shard's leadership resumes its open tasks (Resume, filtered by
//     Placement), and one that loses it stops their actors without writing (Reassess);
//   - every write of an actor is a proposal onto the revision it read; one that fails (the
//     task moved on, or the shard did not answer) ends the actor, and the task is taken up
//     again from the shard's record wherever it runs then (recheck).

// creationGrace is how long a task without an upstream job may be in creation on another
// node before a leader resuming it takes it for abandoned (its creator died) and fails it.
// A creation fails over between routes while its client waits, each try bounded by the
// route's time-outs (defaults 10 s to connect, 120 s to the first byte).
const creationGrace = 10 * time.Minute

// recheckAfterFailedWrite is how long a task whose write failed waits before it is taken up
// again from the shard's record (the shard may be electing a leader).
const recheckAfterFailedWrite = time.Second

// runsHere reports whether account's tasks run on this node.
func (s *Service) runsHere(account string) bool {
	return s.deps.Placement == nil || s.deps.Placement.Here(account)
}

// readTask reads account's task: after every write committed anywhere (FreshTasks), or
// from the store.
func (s *Service) readTask(ctx context.Context, account, id string) (persistence.VideoTask, error) {
	if f, ok := s.deps.Tasks.(FreshTasks); ok {
		return f.FreshTask(ctx, account, id)
	}
	return s.deps.Tasks.GetTask(id)
}

// activatedByGet reports whether a Get of a task whose actor is not running starts it. In a
// cluster it does only where the task runs (the shard's leader), and not while the task is
// being created on another node: the answer is then the record itself.
func (s *Service) activatedByGet(rec *persistence.VideoTask) bool {
	if s.deps.Placement == nil {
		return true
	}
	return s.deps.Placement.Here(rec.Account) && (rec.UpstreamID != "" || rec.Terminal())
}

// adoptable reports whether an open task's actor should run here now. A task still without
// a job is left to its creator until creationGrace has passed, and looked at again then.
func (s *Service) adoptable(rec *persistence.VideoTask) bool {
	if s.deps.Placement == nil {
		return true
	}
	if !s.deps.Placement.Here(rec.Account) {
		return false
	}
	if rec.UpstreamID == "" && !rec.Terminal() {
		if wait := time.Duration(rec.Created + int64(creationGrace) - s.clock.Now().UnixNano()); wait > 0 {
			s.recheckLater(rec.Account, rec.ID, wait)
			return false
		}
	}
	return true
}

// Adopt starts the actor of a task the shard's replica on this node just wrote, when this
// node runs it: how a task created or changed on another node reaches its leader. It never
// blocks (the replica calls it as it applies).
func (s *Service) Adopt(rec persistence.VideoTask) {
	if s.dir.Closed() || !rec.Open() || s.deps.Placement == nil || !s.deps.Placement.Here(rec.Account) {
		return
	}
	if rec.UpstreamID == "" && !rec.Terminal() {
		return // in creation: its Start or Abandon comes next
	}
	s.route(rec.ID, &startMsg{rec: rec})
}

// Reassess stops, without writing, the actors of tasks this node no longer runs (it lost
// their shard's leadership); call it on every leadership change.
func (s *Service) Reassess() {
	for _, id := range s.dir.Entities() {
		s.dir.Route(id, &placeMsg{}, false, s.dir.Closed)
	}
}

// recheckLater takes the task up again after d, from the shard's record, if it runs here.
func (s *Service) recheckLater(account, id string, d time.Duration) {
	s.clock.AfterFunc(d, func() { supervise.Run("video.recheck", func() { s.recheck(account, id) }) })
}

func (s *Service) recheck(account, id string) {
	if s.dir.Closed() || !s.runsHere(account) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rec, err := s.readTask(ctx, account, id)
	if err != nil {
		s.log.Warn("video task not read; looking again shortly", "task", id, "err", err)
		s.recheckLater(account, id, recheckAfterFailedWrite)
		return
	}
	if rec.Open() && s.adoptable(&rec) {
		s.route(id, &startMsg{rec: rec})
	}
}

// withdrawElsewhere fails a task whose actor runs on another node by writing the failed
// state through the shard; that actor's next write then fails, and the leader settles the
// task from the record.
func (s *Service) withdrawElsewhere(ctx context.Context, rec persistence.VideoTask, code, msg string) error {
	for range 3 {
		if rec.Terminal() {
			return nil
		}
		now := s.clock.Now().UnixNano()
		rec.Status, rec.ErrorCode, rec.ErrorMessage, rec.Finished, rec.Updated = StatusFailed, code, clip(msg, 1000), now, now
		err := s.deps.Tasks.PutTask(&rec)
		if !errors.Is(err, persistence.ErrConflict) {
			return err
		}
		if rec, err = s.readTask(ctx, rec.Account, rec.ID); err != nil {
			return err
		}
	}
	return fmt.Errorf("video: task %s kept changing while it was withdrawn", rec.ID)
}

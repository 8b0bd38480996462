package video

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/codec/videos"
	"github.com/modelgate/modelgate/internal/randid"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// How a task begins: Create, then Start or Abandon, all while the client waits. Before
// Start no actor runs for the task (its id is not known outside the handler yet), so these
// write the record themselves; from Start on, the actor is its only writer.

// CreateRequest is one accepted POST /videos, after the handler validated it, admitted the
// call and reserved the seconds.
type CreateRequest struct {
	Account string
	KeyID   string
	Model   *catalog.Model // a video model
	Seconds int            // requested clip length: what is reserved; the output seconds are billed
	Size    string         // e.g. "720P"
	// MediaReservation holds Seconds of the account's daily video seconds
	// (quota.ReserveVideoSeconds). Create takes it over: the task commits (completed) or
	// releases (failed) it, and Create releases it when it stores no task.
	MediaReservation quota.MediaReservation
	// Price is the USD price per output second: the model's pricing.completion.
	Price money.Amount
	// Plan is the account's plan: the charge goes down to its overdraft floor at most. Its
	// name is kept with the task; at billing the catalog's plan of that name applies (or
	// this plan's overdraft when the catalog has it no more).
	Plan *catalog.Plan
	// Paid says the call was admitted beyond the plan (quota.Decision.Paid): Price × Seconds
	// is held from the credits until the task ends. Call is that admission; the estimate it
	// holds becomes the task's hold.
	Paid bool
	Call quota.Reservation
}

// CreditRefusal is Create's error when a task beyond the plan cannot hold its price: the
// quota's refusal, for the client's 402. Nothing stays reserved.
type CreditRefusal struct{ Decision quota.Decision }

func (e *CreditRefusal) Error() string {
	return "video: the credits do not cover the video's price (" + string(e.Decision.Refused) + ")"
}

// CodeNoCredits is the error code of a task whose price the credits could not hold (its
// client got a 402; nobody polls it).
const CodeNoCredits = "insufficient_credits"

// Create stores a new task, queued with progress 0 and no upstream job, and when it is paid
// holds its price from the credits; both are durable when it returns. A hold the credits
// refuse is a *CreditRefusal, with the task ended and everything released. The handler
// then creates the upstream job and calls Start, or Abandon when no route took it.
func (s *Service) Create(ctx context.Context, r CreateRequest) (Task, error) {
	if s.dir.Closed() {
		s.releaseSeconds(ctx, r.Account, r.MediaReservation)
		return Task{}, ErrClosed
	}
	if err := checkCreate(&r); err != nil {
		s.releaseSeconds(ctx, r.Account, r.MediaReservation)
		return Task{}, err
	}
	now := s.clock.Now()
	rec := &persistence.VideoTask{
		ID: "video_" + randid.Base62(24), Account: r.Account, KeyID: r.KeyID, Model: r.Model.ID,
		Seconds: int64(r.Seconds), Size: r.Size, Status: persistence.TaskQueued,
		Created: now.UnixNano(), Updated: now.UnixNano(), Deadline: now.Add(s.cfg.MaxAge).UnixNano(),
		MediaAccount: r.MediaReservation.Account, MediaKind: r.MediaReservation.Kind, MediaID: r.MediaReservation.ID,
		Price: int64(r.Price),
	}
	if r.Plan != nil {
		rec.Plan, rec.Overdraft = r.Plan.Name, int64(r.Plan.Overdraft)
	}
	if r.Paid {
		rec.Held = int64(r.Price.Times(int64(r.Seconds)))
	}
	// The record comes first: a hold made before it could outlive a crash with nothing to
	// release it; this way the next start finds the task and releases by its key.
	if err := s.deps.Tasks.CreateTask(rec); err != nil {
		s.releaseSeconds(ctx, r.Account, r.MediaReservation)
		return Task{}, err
	}
	if rec.Held > 0 {
		d, err := s.deps.Quota.HoldCredits(ctx, quota.HoldRequest{Account: r.Account, Call: r.Call, Plan: r.Plan,
			Key: holdKey(rec.ID), Amount: money.Amount(rec.Held)})
		if err == nil && !d.Admitted {
			err = &CreditRefusal{Decision: d}
		}
		if err != nil {
			s.abandon(context.WithoutCancel(ctx), rec, CodeNoCredits, "the account's credits do not cover the video's price")
			return Task{}, err
		}
	}
	return view(rec), nil
}

func checkCreate(r *CreateRequest) error {
	switch {
	case r.Account == "":
		return fmt.Errorf("%w: no account", ErrInvalid)
	case r.Model == nil || r.Model.Kind != catalog.KindVideo:
		return fmt.Errorf("%w: the model must be a video model", ErrInvalid)
	case r.Seconds <= 0:
		return fmt.Errorf("%w: seconds %d must be positive", ErrInvalid, r.Seconds)
	case r.Price < 0:
		return fmt.Errorf("%w: negative price %s", ErrInvalid, r.Price)
	case r.Paid && r.Plan == nil:
		return fmt.Errorf("%w: a paid task needs the account's plan", ErrInvalid)
	case r.MediaReservation.Account != "" && (r.MediaReservation.Account != r.Account || r.MediaReservation.Kind != persistence.MediaVideo):
		return fmt.Errorf("%w: the media reservation must be the account's video seconds", ErrInvalid)
	}
	return nil
}

// Start records the upstream job a created task runs as (created on route after attempts
// tries) and hands the task to its actor, which polls it from Config.PollStart on. The
// task is durable with its job when Start returns.
func (s *Service) Start(ctx context.Context, id string, route *catalog.Route, job videos.Job, attempts int) (Task, error) {
	rec, err := s.unstarted(id)
	if err != nil {
		return Task{}, err
	}
	if route == nil || job.ID == "" {
		return Task{}, fmt.Errorf("%w: task %s: a job needs its route and id", ErrInvalid, id)
	}
	rec.Route, rec.UpstreamID, rec.Attempts, rec.Updated = route.ID, job.ID, attempts, s.clock.Now().UnixNano()
	if jobState(job.Status) == StatusInProgress {
		rec.Status, rec.Progress = StatusInProgress, min(max(job.Progress, 1), 99)
	}
	if err := s.deps.Tasks.PutTask(&rec); err != nil {
		return Task{}, err
	}
	if !s.runsHere(rec.Account) {
		return view(&rec), nil // the shard's leader takes it up from the applied write (Adopt)
	}
	if err := s.route(id, &startMsg{rec: rec, route: route, fresh: true}); err != nil {
		s.log.Warn("video task stored but not started (closing); it resumes at the next start", "task", id)
	}
	return view(&rec), nil
}

// Abandon ends a created task whose upstream job was never made (every route refused or
// failed it): it fails with code and msg, and its seconds and credits are released before
// Abandon returns. Should a release fail, the task's actor finishes it.
func (s *Service) Abandon(ctx context.Context, id, code, msg string) error {
	rec, err := s.unstarted(id)
	if err != nil {
		return err
	}
	s.abandon(ctx, &rec, code, msg)
	return nil
}

// Withdraw fails a started task whose call could not be recorded: the client was told the
// creation failed, so the task must not run on and bill. Its seconds and credits are
// released by its actor (asynchronously; retried until they are).
func (s *Service) Withdraw(ctx context.Context, id, code, msg string) error {
	if s.deps.Placement != nil {
		if rec, err := s.deps.Tasks.GetTask(id); err == nil && !s.runsHere(rec.Account) {
			return s.withdrawElsewhere(ctx, rec, code, msg)
		}
	}
	return s.route(id, &withdrawMsg{code: code, msg: msg})
}

// unstarted reads a task that Create stored and nothing started or ended yet.
func (s *Service) unstarted(id string) (persistence.VideoTask, error) {
	rec, err := s.deps.Tasks.GetTask(id)
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		return rec, fmt.Errorf("%w: %s", ErrNotFound, id)
	case err != nil:
		return rec, err
	case rec.UpstreamID != "" || rec.Terminal():
		return rec, fmt.Errorf("%w: task %s has started or ended already", ErrInvalid, id)
	}
	return rec, nil
}

func (s *Service) abandon(ctx context.Context, rec *persistence.VideoTask, code, msg string) {
	now := s.clock.Now().UnixNano()
	rec.Status, rec.ErrorCode, rec.ErrorMessage, rec.Finished, rec.Updated = StatusFailed, code, clip(msg, 1000), now, now
	if err := s.deps.Tasks.PutTask(rec); err != nil {
		// Still open as stored: the next start fails it (no job) and releases everything.
		s.log.Error("abandoned video task not written; it is released at the next start", "task", rec.ID, "err", err)
		return
	}
	if err := release(ctx, s.deps.Quota, rec); err == nil {
		rec.Settled = true
		if err = s.deps.Tasks.PutTask(rec); err == nil {
			return
		}
	}
	rec.Settled = false
	if !s.runsHere(rec.Account) {
		return // the shard's leader settles it from the failed record (Adopt)
	}
	if err := s.route(rec.ID, &startMsg{rec: *rec}); err != nil { // the actor retries the release
		s.log.Warn("abandoned video task not released (closing); it is released at the next start", "task", rec.ID)
	}
}

// releaseSeconds gives back the account's daily seconds that no stored task took over.
func (s *Service) releaseSeconds(ctx context.Context, account string, r quota.MediaReservation) {
	if r.Account == "" || r.Account != account || r.Kind != persistence.MediaVideo {
		return
	}
	if err := s.deps.Quota.ReleaseVideoSeconds(context.WithoutCancel(ctx), r); err != nil && !errors.Is(err, quota.ErrUnknownReservation) {
		s.log.Error("video seconds not released", "account", r.Account, "err", err)
	}
}

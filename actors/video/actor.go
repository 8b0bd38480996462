package video

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/modelgate/modelgate/actors/placement"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/codec/videos"
	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/assets"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// taskActor is the only writer of one started task, for one incarnation. It never blocks
// on the network: upstream, asset and quota calls run on a goroutine of their own (one at a
// time) and come back as a result message, so a Get is always answered at once.
type taskActor struct {
	svc  *Service
	id   string // locator id of this incarnation: task#gen
	task string

	loaded bool
	rec    persistence.VideoTask // as last written
	dirty  bool                  // rec.Attempts changed since the last write
	route  *catalog.Route        // the route Create was given (the catalog's is preferred)

	busy         bool          // a call is in flight
	upstreamDone bool          // the upstream job completed; the video is not stored yet
	made         int           // the seconds the completed job says it made (0: it did not say)
	late         bool          // past the deadline, the last look at the upstream is under way
	pending      *assets.Asset // stored video whose completed transition is not written yet
	holders      []uint64      // nodes holding pending, once copied (a cluster)
	withdrawn    *withdrawMsg  // the task fails as soon as the call in flight returns
	delay        time.Duration // the next back-off step (0: Config.PollStart)
	timer        Timer
	timerGen     uint64

	engine  *actor.Engine
	pid     *actor.PID
	ctx     context.Context // cancelled when the actor retires
	cancel  context.CancelFunc
	life    placement.Passivation // the passivation handshake's count; retired once passivated
	idle    *time.Timer
	handoff []routed // received while retiring: for the next incarnation
}

func newTaskActor(s *Service, id string) *taskActor {
	task, _, _ := strings.Cut(id, "#")
	return &taskActor{svc: s, id: id, task: task}
}

func (a *taskActor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		a.engine, a.pid = c.Engine(), c.PID()
		a.ctx, a.cancel = context.WithCancel(context.Background())
		a.armIdle()
	case actor.Stopped:
		a.stopTimers()
		a.cancel()
	case wake:
		if m.gen == a.timerGen && a.timer != nil && a.ctx.Err() == nil {
			a.timer = nil
			a.advance()
		}
	case idleTick:
		a.onIdle()
	case retireAgain:
		a.retire(m.m)
	case *polledRes, *downloadedRes, *copiedRes, *settledRes, *panicRes:
		a.busy = false
		if a.life.Retired() {
			return
		}
		defer a.ensureProgress() // also after a panic below
		if w := a.withdrawn; w != nil && a.rec.Open() {
			a.withdrawn = nil
			a.fail(w.code, w.msg) // what the call found no longer matters
			return
		}
		a.onResult(m)
	case routed:
		a.handle(m)
	}
}

func (a *taskActor) onResult(m any) {
	switch m := m.(type) {
	case *polledRes:
		a.onPolled(m)
	case *downloadedRes:
		a.onDownloaded(m)
	case *copiedRes:
		a.onCopied(m)
	case *settledRes:
		a.onSettled(m)
	case *panicRes:
		a.svc.log.Error("video task call panicked; retrying", "task", a.task)
		a.retryLater(0)
	}
}

// handle serves a request that came through the directory.
func (a *taskActor) handle(m routed) {
	if a.life.Retired() { // cannot happen under the directory handshake; re-route rather than lose it
		if r, ok := m.(*retireMsg); ok {
			sendOnce(r.reply, nil)
			return
		}
		if err := a.svc.route(a.task, m); err != nil {
			m.Fail(err)
		}
		return
	}
	a.life.Arrived()
	if r, ok := m.(*retireMsg); ok {
		a.retire(r)
		return
	}
	if _, ok := m.(*placeMsg); ok {
		if a.loaded && !a.svc.runsHere(a.rec.Account) {
			a.stepDown()
		}
		return
	}
	if a.ctx.Err() != nil { // retiring: the next incarnation serves it
		a.handoff = append(a.handoff, m)
		return
	}
	if !a.loaded {
		if err := a.load(m); err != nil {
			m.Fail(err)
			return
		}
	}
	switch m := m.(type) {
	case *getMsg:
		if m.account != a.rec.Account {
			sendOnce(m.reply, getResult{err: fmt.Errorf("%w: %s", ErrNotFound, a.task)})
		} else {
			sendOnce(m.reply, getResult{task: view(&a.rec)})
		}
	case *withdrawMsg:
		a.withdraw(m)
	case *startMsg:
		if a.route == nil {
			a.route = m.route
		}
		if m.rec.Rev > a.rec.Rev { // written elsewhere (a cluster): start over from that record
			a.handoff = append(a.handoff, &startMsg{rec: m.rec, route: a.route})
			a.stepDown()
			return
		}
		if m.fresh && !a.busy && a.timer == nil {
			a.schedule(a.nextDelay(0)) // the create answer was the first look at the job
		}
	}
	a.ensureProgress()
}

// load adopts the task from the activating message, or reads it.
func (a *taskActor) load(m routed) error {
	var rec persistence.VideoTask
	switch m := m.(type) {
	case *startMsg:
		rec, a.route = m.rec, m.route
	case *getMsg:
		if m.rec == nil {
			r, err := a.svc.deps.Tasks.GetTask(a.task)
			if errors.Is(err, persistence.ErrNotFound) {
				return fmt.Errorf("%w: %s", ErrNotFound, a.task)
			} else if err != nil {
				return err
			}
			m.rec = &r
		}
		rec = *m.rec
	}
	if rec.ID != a.task {
		return fmt.Errorf("%w: task %s activated with record %q", ErrInvalid, a.task, rec.ID)
	}
	a.rec, a.loaded = rec, true
	return nil
}

// ensureProgress starts the next step of an open task that has neither a call in flight
// nor a timer: after activation, and as a safety net after every result.
func (a *taskActor) ensureProgress() {
	if !a.loaded || a.life.Retired() || a.busy || a.timer != nil || !a.rec.Open() || a.ctx.Err() != nil {
		return
	}
	a.advance()
}

// advance takes the next step the task's state calls for.
func (a *taskActor) advance() {
	if a.busy || a.life.Retired() || !a.loaded {
		return
	}
	r := &a.rec
	if r.Terminal() {
		if !r.Settled {
			a.settle()
		}
		return
	}
	if a.pending != nil {
		a.complete(*a.pending)
		return
	}
	if r.UpstreamID == "" {
		// Jobs are created while the client waits (Service.Start): a task without one was
		// stored by a node that stopped meanwhile. The prompt was never stored, so the job
		// cannot be made now; the task fails, costing nothing.
		a.fail(CodeUpstreamJobLost, "the gateway restarted before the video job reached the provider; nothing was charged, please create the video again")
		return
	}
	if a.now().UnixNano() >= r.Deadline {
		// Past the deadline the job gets one last look (after a node was down for long, it
		// may have finished), and a finished one one last download.
		if a.late {
			a.fail(CodeTimeout, fmt.Sprintf("the video was not ready within %s", a.svc.cfg.MaxAge))
			return
		}
		a.late = true
	}
	route := a.currentRoute()
	if route == nil {
		a.fail(CodeRouteUnavailable, fmt.Sprintf("route %q of model %s is no longer in the catalog", r.Route, r.Model))
		return
	}
	if to := a.timeouts(route); a.upstreamDone {
		a.download(route, to)
	} else {
		a.poll(route, to)
	}
}

func (a *taskActor) poll(route *catalog.Route, to catalog.Timeouts) {
	up, id := a.svc.deps.Upstream, a.rec.UpstreamID
	a.spawn(func(ctx context.Context) any {
		job, wait, err := up.PollVideo(ctx, route, to, id)
		return &polledRes{job: job, wait: wait, err: err}
	})
}

func (a *taskActor) onPolled(m *polledRes) {
	if m.err != nil {
		if a.ctx.Err() != nil {
			return
		}
		var ue UpstreamError
		if errors.As(m.err, &ue) && (ue.HTTPStatus() == 404 || ue.HTTPStatus() == 410) {
			a.fail(CodeUpstreamJobLost, fmt.Sprintf("the upstream no longer knows video job %s (HTTP %d)", a.rec.UpstreamID, ue.HTTPStatus()))
			return
		}
		if ue == nil || !ue.RateLimited() {
			a.svc.log.Warn("video job poll failed; retrying", "task", a.task, "err", m.err)
		}
		a.retryLater(m.wait)
		return
	}
	next := a.rec
	a.applyJob(&next, m.job, m.wait, false)
}

// applyJob moves the task as far as the upstream job went (never backwards), writes it
// when it changed, and schedules what comes next.
func (a *taskActor) applyJob(next *persistence.VideoTask, job videos.Job, wait time.Duration, changed bool) {
	switch jobState(job.Status) {
	case StatusFailed:
		code, msg := job.Error.Code, job.Error.Message
		if code == "" {
			code = CodeFailed
		}
		if msg == "" {
			msg = "the upstream could not generate the video"
		}
		a.failWith(next, code, msg)
		return
	case StatusCompleted:
		a.upstreamDone, a.late, a.made = true, false, job.Seconds
	case StatusInProgress:
		if next.Status == StatusQueued {
			next.Status, changed = StatusInProgress, true
		}
		if p := min(max(job.Progress, 1), 99); p > next.Progress {
			next.Progress, changed = p, true
		}
	}
	if changed && !a.commit(next) {
		return
	}
	if a.upstreamDone {
		a.delay = 0
		a.advance()
		return
	}
	a.schedule(a.nextDelay(wait))
}

func (a *taskActor) download(route *catalog.Route, to catalog.Timeouts) {
	up, store, acct, id := a.svc.deps.Upstream, a.svc.deps.Assets, a.rec.Account, a.rec.UpstreamID
	a.spawn(func(ctx context.Context) any {
		body, ct, err := up.DownloadVideo(ctx, route, to, id)
		if err != nil {
			return &downloadedRes{err: err}
		}
		defer body.Close()
		typ, file, err := sniffVideo(body, ct)
		if err != nil {
			return &downloadedRes{err: err}
		}
		asset, err := store.Put(assets.KindVideo, acct, typ, file)
		return &downloadedRes{asset: asset, err: err}
	})
}

func (a *taskActor) onDownloaded(m *downloadedRes) {
	if m.err != nil {
		if a.ctx.Err() != nil {
			return
		}
		if errors.Is(m.err, assets.ErrTooLarge) {
			a.fail(CodeTooLarge, fmt.Sprintf("the finished video is too large to store (%v)", m.err))
			return
		}
		if errors.Is(m.err, errNotVideo) {
			a.fail(CodeFailed, m.err.Error())
			return
		}
		a.svc.log.Warn("video download failed; retrying", "task", a.task, "err", m.err)
		a.retryLater(retryAfter(m.err))
		return
	}
	a.pending, a.holders = &m.asset, nil
	a.complete(m.asset)
}

// complete writes the completed transition for a stored video, then settles. In a cluster
// the video is first copied to a second node, and the task lists both.
func (a *taskActor) complete(asset assets.Asset) {
	if c, acct := a.svc.deps.Copies, a.rec.Account; c != nil && a.holders == nil {
		a.spawn(func(ctx context.Context) any {
			holders, err := c.Copy(ctx, acct, asset)
			return &copiedRes{holders: holders, err: err}
		})
		return
	}
	next := a.rec
	next.Status, next.Progress, next.AssetID, next.AssetPath = StatusCompleted, 100, asset.ID, asset.Path
	next.AssetHolders = a.holders
	next.Finished = a.now().UnixNano()
	if m := int64(a.made); m > 0 && m < next.Seconds { // never more than was reserved
		next.OutputSeconds = m
	} else {
		next.OutputSeconds = next.Seconds
	}
	if !a.commit(&next) {
		return
	}
	a.pending, a.holders, a.upstreamDone, a.delay = nil, nil, false, 0
	a.advance()
}

func (a *taskActor) onCopied(m *copiedRes) {
	if m.err != nil || len(m.holders) == 0 {
		if a.ctx.Err() != nil {
			return
		}
		a.svc.log.Warn("finished video not copied to a second node; retrying", "task", a.task, "err", m.err)
		a.retryLater(0)
		return
	}
	if a.pending == nil { // withdrawn meanwhile
		return
	}
	a.holders = m.holders
	a.complete(*a.pending)
}

// withdraw fails the open task now, or when the call in flight returns.
func (a *taskActor) withdraw(m *withdrawMsg) {
	if !a.rec.Open() {
		return
	}
	if a.busy {
		a.withdrawn = m
		return
	}
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
	a.fail(m.code, m.msg)
}

func (a *taskActor) fail(code, msg string) {
	next := a.rec
	a.failWith(&next, code, msg)
}

// failWith writes the failed transition, then settles (releases the seconds).
func (a *taskActor) failWith(next *persistence.VideoTask, code, msg string) {
	next.Status, next.ErrorCode, next.ErrorMessage = StatusFailed, code, clip(msg, 1000)
	next.Finished = a.now().UnixNano()
	if !a.commit(next) {
		return
	}
	a.pending, a.upstreamDone, a.delay = nil, false, 0
	a.advance()
}

// settle ends the quota side of a finished task (billing.go): bill it (completed) or
// release what it reserved (failed). Every step is idempotent; Settled ends it.
func (a *taskActor) settle() {
	r, q := a.rec, a.svc.deps.Quota
	if r.Status == StatusFailed {
		a.spawn(func(ctx context.Context) any { return &settledRes{err: release(ctx, q, &r)} })
		return
	}
	plan := a.plan()
	entry := &persistence.LogEntry{
		RequestID: r.ID, Time: r.Created, AccountID: r.Account, KeyID: r.KeyID, Model: r.Model, Route: r.Route,
		Status: 200, LatencyMs: max(0, (r.Finished-r.Created)/int64(time.Millisecond)),
		ListCost: int64(money.Amount(r.Price).Times(outputSeconds(&r))), ClientFormat: "videos", Attempts: r.Attempts,
	}
	// A route's own pricing is per token: a video costs the operator its model's price.
	entry.UpstreamCost = entry.ListCost
	if route := a.currentRoute(); route != nil {
		entry.UpstreamFormat = route.Format
	}
	a.spawn(func(ctx context.Context) any {
		charged, err := bill(ctx, q, &r, plan, entry)
		return &settledRes{charged: charged, err: err}
	})
}

func (a *taskActor) onSettled(m *settledRes) {
	if m.err != nil {
		if a.ctx.Err() != nil {
			return
		}
		a.svc.log.Error("video task billing failed; retrying", "task", a.task, "status", a.rec.Status, "err", m.err)
		a.retryLater(0)
		return
	}
	next := a.rec
	next.Settled, next.Charged = true, m.charged
	if a.commit(&next) {
		a.delay = 0
	}
}

// commit writes next (synced) and only then makes it the task's state.
func (a *taskActor) commit(next *persistence.VideoTask) bool {
	next.Updated = a.now().UnixNano()
	if err := a.svc.deps.Tasks.PutTask(next); err != nil {
		if a.svc.deps.Placement != nil {
			// The task moved on (another node's actor wrote it) or its shard did not
			// answer: this actor ends, and the task is taken up again from the shard's
			// record wherever it runs by then.
			a.svc.log.Warn("video task write not committed; the task goes on from its record", "task", a.task, "err", err)
			a.stepDown()
			a.svc.recheckLater(a.rec.Account, a.task, recheckAfterFailedWrite)
			return false
		}
		a.svc.log.Error("video task write failed; retrying", "task", a.task, "err", err)
		a.retryLater(0)
		return false
	}
	a.rec, a.dirty = *next, false
	return true
}

// spawn runs one call off the actor; its result comes back as a message.
func (a *taskActor) spawn(call func(context.Context) any) {
	a.busy = true
	eng, pid, ctx, work := a.engine, a.pid, a.ctx, &a.svc.work
	work.add()
	supervise.Go(whereCall, func() {
		defer work.done()
		var res any = &panicRes{} // a call that panics (logged, counted): the actor retries
		supervise.Run(whereCall, func() { res = call(ctx) })
		eng.Send(pid, res)
	})
}

// whereCall names a task's calls to supervise.
const whereCall = "video.call"

// panicRes answers a call that panicked.
type panicRes struct{}

// nextDelay is the next back-off wait: the current step (at least wait, the upstream's
// Retry-After), and the step grows by PollFactor up to PollMax.
func (a *taskActor) nextDelay(wait time.Duration) time.Duration {
	cfg := &a.svc.cfg
	d := a.delay
	if d == 0 {
		d = cfg.PollStart
	}
	a.delay = min(time.Duration(float64(d)*cfg.PollFactor), cfg.PollMax)
	return max(d, wait)
}

func (a *taskActor) retryLater(wait time.Duration) { a.schedule(a.nextDelay(wait)) }

// schedule wakes the actor after d (by the task's deadline at the latest, so a task
// fails on time).
func (a *taskActor) schedule(d time.Duration) {
	if !a.rec.Terminal() {
		if left := time.Duration(a.rec.Deadline - a.now().UnixNano()); d > left {
			d = max(left, 0)
		}
	}
	if a.timer != nil {
		a.timer.Stop()
	}
	a.timerGen++
	gen, eng, pid := a.timerGen, a.engine, a.pid
	a.timer = a.svc.clock.AfterFunc(d, func() { eng.Send(pid, wake{gen}) })
}

func (a *taskActor) stopTimers() {
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
	if a.idle != nil {
		a.idle.Stop()
	}
}

func (a *taskActor) armIdle() {
	eng, pid := a.engine, a.pid
	a.idle = time.AfterFunc(a.svc.cfg.IdleTimeout, func() { eng.Send(pid, idleTick{}) })
}

// onIdle passivates a finished, settled task nobody asked about since the last tick. Its
// state is written already; a message on its way keeps it alive (directory.retire).
func (a *taskActor) onIdle() {
	if a.life.Retired() {
		return
	}
	if a.life.Quiet() && !a.busy && (!a.loaded || !a.rec.Open()) && placement.Retire(a.svc.dir, &a.life, a.task, a.id) {
		a.stopTimers()
		a.svc.stopLater(a.id)
		return
	}
	a.armIdle()
}

// retire is Service.Close's stop: cancel the call in flight, write what is unwritten, and
// wait for messages still on their way.
func (a *taskActor) retire(m *retireMsg) {
	if a.life.Retired() {
		sendOnce(m.reply, nil)
		return
	}
	a.cancel()
	var err error
	if a.loaded && a.dirty && !m.quiet {
		if err = a.svc.deps.Tasks.PutTask(&a.rec); err == nil {
			a.dirty = false
		}
	}
	if !placement.Retire(a.svc.dir, &a.life, a.task, a.id) {
		a.engine.Send(a.pid, retireAgain{m})
		return
	}
	a.stopTimers()
	a.svc.stopLater(a.id)
	sendOnce(m.reply, err)
	for _, h := range a.handoff {
		if err := a.svc.route(a.task, h); err != nil {
			h.Fail(err)
		}
	}
	a.handoff = nil
}

// stepDown ends this incarnation without writing (a cluster: the task goes on from the
// shard's record, here or on another node).
func (a *taskActor) stepDown() {
	if a.ctx.Err() == nil {
		a.retire(&retireMsg{reply: make(chan error, 1), quiet: true})
	}
}

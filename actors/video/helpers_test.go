package video

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/modelgate/modelgate/actors/placement"
	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/codec/videos"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/assets"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/upstream"
)

// t0 is a Wednesday noon; virtual time starts here.
var t0 = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

// virtualClock runs time only through timers: AfterFunc(d, f) moves the clock d forward
// and runs f at once, so a task's whole life takes milliseconds, deterministically, as
// long as one task runs at a time. It records every wait asked for.
type virtualClock struct {
	mu     sync.Mutex
	now    time.Time
	delays []time.Duration
}

func (c *virtualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *virtualClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.delays = append(c.delays, d)
	c.mu.Unlock()
	go f()
	return firedTimer{}
}

func (c *virtualClock) add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func (c *virtualClock) waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.delays...)
}

type firedTimer struct{}

func (firedTimer) Stop() bool { return false }

// recordingTasks is the task store, noting every write as "status progress[ settled]"
// (unless quiet) and reporting settled tasks on settled (when set).
type recordingTasks struct {
	*persistence.Store
	quiet   bool
	settled chan string
	mu      sync.Mutex
	writes  map[string][]string
}

func (r *recordingTasks) note(t *persistence.VideoTask) {
	if t.Settled && r.settled != nil {
		r.settled <- t.ID
	}
	if r.quiet {
		return
	}
	s := fmt.Sprintf("%s %d", t.Status, t.Progress)
	if t.Settled {
		s += " settled"
	}
	r.mu.Lock()
	r.writes[t.ID] = append(r.writes[t.ID], s)
	r.mu.Unlock()
}

func (r *recordingTasks) CreateTask(t *persistence.VideoTask) error {
	err := r.Store.CreateTask(t)
	if err == nil {
		r.note(t)
	}
	return err
}

func (r *recordingTasks) PutTask(t *persistence.VideoTask) error {
	err := r.Store.PutTask(t)
	if err == nil {
		r.note(t)
	}
	return err
}

func (r *recordingTasks) of(id string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.writes[id]...)
}

// countingQuota is the real quota service, counting calls; holdAfterSettle makes the next
// SettleHold, once applied and durable, wait for its caller to give up (a crash between the
// charge and the task's Settled write).
type countingQuota struct {
	q               *quota.Service
	mu              sync.Mutex
	n               quotaCalls
	holdAfterSettle bool
	held            chan struct{}
}

// quotaCalls counts the calls a task made: daily seconds committed and released, credit
// holds made, settled and released.
type quotaCalls struct{ commits, releases, holds, settles, holdReleases int }

func (c *countingQuota) count(f func(*quotaCalls)) {
	c.mu.Lock()
	f(&c.n)
	c.mu.Unlock()
}

func (c *countingQuota) CommitVideoSeconds(ctx context.Context, r quota.MediaReservation, n int64) error {
	c.count(func(n *quotaCalls) { n.commits++ })
	return c.q.CommitVideoSeconds(ctx, r, n)
}

func (c *countingQuota) ReleaseVideoSeconds(ctx context.Context, r quota.MediaReservation) error {
	c.count(func(n *quotaCalls) { n.releases++ })
	return c.q.ReleaseVideoSeconds(ctx, r)
}

func (c *countingQuota) HoldCredits(ctx context.Context, r quota.HoldRequest) (quota.Decision, error) {
	c.count(func(n *quotaCalls) { n.holds++ })
	return c.q.HoldCredits(ctx, r)
}

func (c *countingQuota) ReleaseHold(ctx context.Context, account, key string) error {
	c.count(func(n *quotaCalls) { n.holdReleases++ })
	return c.q.ReleaseHold(ctx, account, key)
}

func (c *countingQuota) SettleHold(ctx context.Context, account string, p *catalog.Plan, key string, amount money.Amount, log *persistence.LogEntry) (quota.Settlement, error) {
	s, err := c.q.SettleHold(ctx, account, p, key, amount, log)
	c.mu.Lock()
	c.n.settles++
	hold := c.holdAfterSettle && err == nil
	c.holdAfterSettle = false
	c.mu.Unlock()
	if hold {
		c.held <- struct{}{}
		<-ctx.Done()
		return quota.Settlement{}, ctx.Err()
	}
	return s, err
}

func (c *countingQuota) counts() quotaCalls {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

type envOpts struct {
	cfg           Config
	realClock     bool
	maxVideoBytes int64
	// topUp is USD credited to every account the test uses; with it, tasks are created
	// beyond the plan (paid, their price held from the credits). "" = none, within the plan.
	topUp string
	// placement and copies make the service a cluster node's (cluster_test.go).
	placement Placement
	copies    Copies
	wrapTasks func(Tasks) Tasks // the store as the service sees it
}

// env is one node: store, assets, quota and video services on an engine, and a fake
// upstream; restart closes everything but the upstream and the clock, and reopens.
type env struct {
	t      testing.TB
	o      envOpts
	dir    string
	clk    *virtualClock
	api    *fakeAPI
	srv    *httptest.Server
	holder *catalog.Holder
	model  *catalog.Model
	route  *catalog.Route
	plan   *catalog.Plan
	tasks  *recordingTasks
	quotas *countingQuota

	store  *persistence.Store
	assets *assets.Store
	quota  *quota.Service
	svc    *Service
}

const testCredEnv = "MG_VIDEO_TEST_KEY"

func newEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	e := &env{t: t, o: o, dir: t.TempDir(), clk: &virtualClock{now: t0}}
	now := e.clk.Now
	if o.realClock {
		now = time.Now
	}
	e.api = newFakeAPI(now)
	e.srv = httptest.NewServer(e.api)
	t.Setenv(testCredEnv, "sk-upstream")
	cat := e.catalog("vr1")
	e.holder = catalog.NewHolder(cat)
	e.model, _ = cat.Lookup("vid-1")
	e.route = e.model.Routes[0]
	e.plan, _ = cat.Plan("pro")
	e.tasks = &recordingTasks{writes: map[string][]string{}}
	e.quotas = &countingQuota{held: make(chan struct{}, 1)}
	e.start()
	t.Cleanup(func() {
		e.stop()
		e.srv.Close()
	})
	return e
}

// catalog is the test catalog: model vid-1 (USD 0.1 per output second) on route routeID to
// the fake upstream, plan pro (100 video seconds a day, USD 0.2 overdraft).
func (e *env) catalog(routeID string) *catalog.Catalog {
	doc := fmt.Sprintf(`
models:
  - id: vid-1
    kind: video
    pricing: {prompt: "0", completion: "0.1"}
    routes: [{id: %s, format: chat, base_url: '%s/v1', credential_env: %s}]
plans:
  - {name: pro, video_daily_seconds: 100, overdraft_usd: "0.2"}
`, routeID, e.srv.URL, testCredEnv)
	cat, err := catalog.Parse("test.yaml", []byte(doc))
	if err != nil {
		e.t.Fatal(err)
	}
	return cat
}

func (e *env) start() {
	st, err := persistence.Open(filepath.Join(e.dir, "pebble"))
	if err != nil {
		e.t.Fatal(err)
	}
	as, err := assets.New(st, e.dir, assets.Config{MaxVideoBytes: e.o.maxVideoBytes, Now: e.now})
	if err != nil {
		e.t.Fatal(err)
	}
	eng, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		e.t.Fatal(err)
	}
	loc := placement.NewLocal(eng)
	e.store, e.assets = st, as
	e.quota = quota.NewService(st, quota.Config{Now: e.now, IdleTimeout: time.Hour})
	e.quotas.q = e.quota
	e.tasks.Store = st
	var tasks Tasks = e.tasks
	if e.o.wrapTasks != nil {
		tasks = e.o.wrapTasks(tasks)
	}
	deps := Deps{Tasks: tasks, Assets: as, Upstream: upstream.New(), Quota: e.quotas, Catalog: e.holder,
		Placement: e.o.placement, Copies: e.o.copies}
	if !e.o.realClock {
		deps.Clock = e.clk
	}
	e.svc = NewService(loc, deps, e.o.cfg)
}

func (e *env) now() time.Time {
	if e.o.realClock {
		return time.Now()
	}
	return e.clk.Now()
}

func (e *env) stop() {
	if e.svc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.svc.Close(ctx); err != nil {
		e.t.Errorf("video close: %v", err)
	}
	if err := e.quota.Close(ctx); err != nil {
		e.t.Errorf("quota close: %v", err)
	}
	e.store.Close()
	e.svc = nil
}

// restart closes the services and the store, reopens them on the same data and resumes.
func (e *env) restart() {
	e.t.Helper()
	e.stop()
	e.start()
	if err := e.svc.Resume(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// create does what the POST /videos handler does: reserve the seconds, create the task
// (paid when the env tops accounts up), create the upstream job, start the task.
func (e *env) create(account string, seconds int, spec string) Task {
	e.t.Helper()
	task, err := e.begin(account, seconds, spec, e.o.topUp != "")
	if err != nil {
		e.t.Fatal(err)
	}
	return task
}

func (e *env) begin(account string, seconds int, spec string, paid bool) (Task, error) {
	task, err := e.createTask(account, seconds, paid)
	if err != nil {
		return task, err
	}
	return e.start1(task.ID, spec)
}

// start1 creates the upstream job of a created task on the env's route and starts the task.
func (e *env) start1(id, spec string) (Task, error) {
	ctx := context.Background()
	resp, err := upstream.New().Do(ctx, upstream.CreateVideoRequest(e.route, catalog.Timeouts{Connect: time.Second, FirstByte: 5 * time.Second}, fakeBody(spec), id))
	if err != nil {
		return Task{}, err
	}
	job, err := upstream.ReadJob(resp)
	if err != nil {
		return Task{}, err
	}
	return e.svc.Start(ctx, id, e.route, job, 1)
}

func (e *env) startJob(id, spec string) Task {
	e.t.Helper()
	task, err := e.start1(id, spec)
	if err != nil {
		e.t.Fatal(err)
	}
	return task
}

func upstreamJob(id string) videos.Job { return videos.Job{ID: id, Status: videos.JobQueued} }

// createTask reserves the seconds and creates the task (no upstream job yet).
func (e *env) createTask(account string, seconds int, paid bool) (Task, error) {
	ctx := context.Background()
	if e.o.topUp != "" {
		if _, _, err := e.quota.AddCredits(ctx, account, usd(e.t, e.o.topUp), "topup"); err != nil {
			return Task{}, err
		}
	}
	d, err := e.quota.ReserveVideoSeconds(ctx, account, e.plan, int64(seconds))
	if err != nil || !d.Admitted {
		return Task{}, fmt.Errorf("reserve: %+v, %v", d, err)
	}
	return e.svc.Create(ctx, CreateRequest{
		Account: account, KeyID: "key_1", Model: e.model, Seconds: seconds, Size: "720P",
		MediaReservation: d.Reservation, Price: e.model.Pricing.Completion, Plan: e.plan, Paid: paid,
	})
}

// wait polls Get until the task is finished and settled (or cond holds).
func (e *env) wait(account, id string, cond func(Task) bool) Task {
	e.t.Helper()
	if cond == nil {
		cond = func(t Task) bool { return t.Settled }
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		task, err := e.svc.Get(context.Background(), account, id)
		if err != nil {
			e.t.Fatal(err)
		}
		if cond(task) {
			return task
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task %s stuck: %+v, writes %v", id, task, e.tasks.of(id))
		}
		time.Sleep(time.Millisecond)
	}
}

func (e *env) state(account string) quota.QuotaState {
	e.t.Helper()
	st, err := e.quota.State(context.Background(), account, e.plan)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

func (e *env) logs(account string) []persistence.LogEntry {
	e.t.Helper()
	l, err := e.store.ListLog(account, time.Time{}, time.Time{}, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

func usd(t testing.TB, s string) money.Amount {
	a, err := money.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func seconds(ds ...float64) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = time.Duration(d * float64(time.Second))
	}
	return out
}

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

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

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/codec/money"
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

// recordingTasks is the task store, noting every write as "status progress[ +body][ settled]"
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
	if len(t.Body) > 0 {
		s += " +body"
	}
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

// countingQuota is the real quota service, counting calls; holdAfterCharge makes the next
// Charge, once applied and durable, wait for its caller to give up (a crash between the
// charge and the task's Settled write).
type countingQuota struct {
	q                         *quota.Service
	mu                        sync.Mutex
	commits, releases, charge int
	holdAfterCharge           bool
	held                      chan struct{}
}

func (c *countingQuota) CommitVideoSeconds(ctx context.Context, r quota.MediaReservation, n int64) error {
	c.mu.Lock()
	c.commits++
	c.mu.Unlock()
	return c.q.CommitVideoSeconds(ctx, r, n)
}

func (c *countingQuota) ReleaseVideoSeconds(ctx context.Context, r quota.MediaReservation) error {
	c.mu.Lock()
	c.releases++
	c.mu.Unlock()
	return c.q.ReleaseVideoSeconds(ctx, r)
}

func (c *countingQuota) Charge(ctx context.Context, account string, p *catalog.Plan, amount money.Amount, key string, log *persistence.LogEntry) (quota.Settlement, error) {
	s, err := c.q.Charge(ctx, account, p, amount, key, log)
	c.mu.Lock()
	c.charge++
	hold := c.holdAfterCharge && err == nil
	c.holdAfterCharge = false
	c.mu.Unlock()
	if hold {
		c.held <- struct{}{}
		<-ctx.Done()
		return quota.Settlement{}, ctx.Err()
	}
	return s, err
}

func (c *countingQuota) counts() (commits, releases, charges int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commits, c.releases, c.charge
}

type envOpts struct {
	cfg           Config
	realClock     bool
	maxVideoBytes int64
	topUp         string // USD credited to every account the test uses ("" = none)
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
	loc := cluster.NewLocal(eng)
	e.store, e.assets = st, as
	e.quota = quota.NewService(loc, st, quota.Config{Now: e.now, IdleTimeout: time.Hour})
	e.quotas.q = e.quota
	e.tasks.Store = st
	deps := Deps{Tasks: e.tasks, Assets: as, Upstream: upstream.New(), Quota: e.quotas, Catalog: e.holder}
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

// create does what the POST /videos handler does: reserve the seconds, then create.
func (e *env) create(account string, seconds int, spec string) Task {
	e.t.Helper()
	if e.o.topUp != "" {
		if _, _, err := e.quota.AddCredits(context.Background(), account, usd(e.t, e.o.topUp), "topup"); err != nil {
			e.t.Fatal(err)
		}
	}
	d, err := e.quota.ReserveVideoSeconds(context.Background(), account, e.plan, int64(seconds))
	if err != nil || !d.Admitted {
		e.t.Fatalf("reserve: %+v, %v", d, err)
	}
	task, err := e.svc.Create(context.Background(), CreateRequest{
		Account: account, KeyID: "key_1", Model: e.model, Route: e.route, Seconds: seconds, Size: "720P",
		Body: fakeBody(spec), MediaReservation: d.Reservation, Price: e.model.Pricing.Completion, Plan: e.plan,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return task
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

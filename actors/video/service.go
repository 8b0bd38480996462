// Package video runs asynchronous video tasks, one actor per task: the actor follows the
// upstream job (poll with back-off, download), owns the task's state transitions, copies
// the finished video into the gateway's asset store, bills on completion and resumes after
// a restart.
//
// A task begins in three steps, all before the client's answer (create.go): Create stores
// it and reserves what it may cost; the handler creates the upstream job, failing over
// between routes; Start records the job and hands the task to its actor — or Abandon ends
// a task whose job no route would take, releasing everything, so a refused video is an
// error at creation, never a task that fails later.
//
// Durability: a task is written (synced) before Create returns, and every transition is
// written (synced) before Get can see it, so a restart loses nothing a client saw. A task
// that was not finished and settled is in the store's open index; Resume, at node start,
// activates each, and it carries on where its record says: it polls a job that was
// recorded, settles one that finished, and fails one whose job was never recorded (the
// node stopped during creation; the prompt is never stored, so the job cannot be made).
//
// Billing, exactly once: a video counts like any call at creation (the handler's
// admission). Within the plan it costs no credits; beyond it, Create holds the model's
// price per output second (for video models the catalog's pricing.completion) times the
// requested seconds from the credits (quota.HoldCredits, key "video/<task id>"), durably.
// On completed, the output seconds are committed to the day's video seconds
// (quota.CommitVideoSeconds) and charged from the hold (quota.SettleHold: at most the
// hold, the rest released, with the request log entry in the same synced batch); on
// failed, the seconds and the hold are released. Every step is idempotent (an already
// ended reservation is quota.ErrUnknownReservation, taken as done; a settled hold key
// charges nothing again), and the task records Settled once all are done, so a crash
// anywhere in between repeats them harmlessly at the next start.
package video

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/modelgate/modelgate/actors/placement"
	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/codec/videos"
	"github.com/modelgate/modelgate/internal/randid"
	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/assets"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// Kind is the actor kind for the locator.
const Kind = "video"

// Errors. Returned errors wrap one of these.
var (
	ErrNotFound = errors.New("video: task not found")
	ErrInvalid  = errors.New("video: invalid request")
	ErrClosed   = errors.New("video: service closed")
)

// Tasks is the durable task store (*persistence.Store).
type Tasks interface {
	CreateTask(*persistence.VideoTask) error
	PutTask(*persistence.VideoTask) error
	GetTask(id string) (persistence.VideoTask, error)
	ListOpenTasks() ([]persistence.VideoTask, error)
}

// Placement says where tasks' actors run. In a cluster a task's actor runs only on the
// current leader of its account's shard (docs/cluster.md "Video tasks in a cluster"); nil
// means here (a single node).
type Placement interface {
	Here(account string) bool
}

// FreshTasks is a Tasks whose own reads may lag writes made on other nodes (a cluster's):
// FreshTask reads account's task after every write committed anywhere before the call.
type FreshTasks interface {
	FreshTask(ctx context.Context, account, id string) (persistence.VideoTask, error)
}

// Copies, in a cluster, copies a stored video to one more node before its task is
// completed, and says which nodes hold it then (the task lists them).
type Copies interface {
	Copy(ctx context.Context, account string, a assets.Asset) (holders []uint64, err error)
}

// Assets is where finished videos go (*assets.Store).
type Assets interface {
	Put(kind, account, contentType string, r io.Reader) (assets.Asset, error)
}

// Upstream is how a task reaches its upstream job; transport/upstream's *Client implements
// it and transport/node wires it in. The job is created by the handler, which fails over
// between routes (Service.Start); a task only follows it.
type Upstream interface {
	// PollVideo reads the job; wait is the upstream's Retry-After, 0 when it gave none.
	PollVideo(ctx context.Context, route *catalog.Route, t catalog.Timeouts, id string) (job videos.Job, wait time.Duration, err error)
	// DownloadVideo opens the finished job's video and says its content type.
	DownloadVideo(ctx context.Context, route *catalog.Route, t catalog.Timeouts, id string) (io.ReadCloser, string, error)
}

// UpstreamError is what a task reads of a failed Upstream call, through errors.As; the
// upstream client's errors are UpstreamErrors. Any other error is taken as transient.
type UpstreamError interface {
	error
	HTTPStatus() int          // the upstream's status; 0 when it never answered
	RateLimited() bool        // a 429, which a task waits out without a warning
	RetryHint() time.Duration // the upstream's Retry-After; 0 when it gave none
}

// Quota is the part of the quota service a task reserves and bills through (*quota.Service).
type Quota interface {
	CommitVideoSeconds(ctx context.Context, r quota.MediaReservation, seconds int64) error
	ReleaseVideoSeconds(ctx context.Context, r quota.MediaReservation) error
	HoldCredits(ctx context.Context, r quota.HoldRequest) (quota.Decision, error)
	SettleHold(ctx context.Context, account string, plan *catalog.Plan, key string, amount money.Amount, log *persistence.LogEntry) (quota.Settlement, error)
	ReleaseHold(ctx context.Context, account, key string) error
}

// Clock tells the time and runs the poll and retry timers. Tests inject a virtual one.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface{ Stop() bool }

type realClock struct{}

func (realClock) Now() time.Time                            { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Deps are what the service works with.
type Deps struct {
	Tasks    Tasks
	Assets   Assets
	Upstream Upstream
	Quota    Quota
	// Catalog finds a task's route (by id) and the plan it is billed under (by name), as
	// they are now: a reloaded catalog applies to running tasks.
	Catalog *catalog.Holder
	Clock   Clock        // default: the wall clock
	Logger  *slog.Logger // default: slog.Default()
	// Placement, in a cluster, runs a task's actor only where it says (cluster.go).
	Placement Placement
	// Copies, in a cluster, puts a finished video on a second node before completion.
	Copies Copies
}

// Config tunes the service. Zero values take the defaults.
type Config struct {
	// Polling and retrying: the first wait is PollStart, each next one PollFactor times the
	// last, at most PollMax, and never less than the upstream's Retry-After. Defaults 1 s,
	// 1.5, 15 s. The sequence starts over when the task moves to its next step (poll,
	// download, settle).
	PollStart  time.Duration
	PollFactor float64
	PollMax    time.Duration
	// MaxAge is how long a task may take from creation to a stored video; past it the task
	// fails with CodeTimeout. Default 2 h.
	MaxAge time.Duration
	// IdleTimeout passivates the actor of a finished, settled task that nobody asked about
	// for this long (up to twice as long; wall clock). Its state is already written; the
	// next Get loads it again. Default 5 min.
	IdleTimeout time.Duration
	Inbox       int // actor inbox slots (it grows when needed); default 16
}

// Service is the client API of the video task actors.
type Service struct {
	loc   placement.Locator
	deps  Deps
	cfg   Config
	clock Clock
	log   *slog.Logger
	dir   *placement.Owners[string]

	work  counter // upstream, asset and quota calls in flight
	stops counter // actors being stopped
}

// NewService registers the task actor kind with the locator.
func NewService(l *placement.Local, deps Deps, cfg Config) *Service {
	if cfg.PollStart <= 0 {
		cfg.PollStart = time.Second
	}
	if cfg.PollFactor < 1 {
		cfg.PollFactor = 1.5
	}
	if cfg.PollMax <= 0 {
		cfg.PollMax = 15 * time.Second
	}
	cfg.PollMax = max(cfg.PollMax, cfg.PollStart)
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = 2 * time.Hour
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 5 * time.Minute
	}
	if cfg.Inbox <= 0 {
		cfg.Inbox = 16
	}
	s := &Service{loc: l, deps: deps, cfg: cfg, clock: deps.Clock, log: deps.Logger}
	if s.clock == nil {
		s.clock = realClock{}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.work.init()
	s.stops.init()
	s.dir = placement.NewOwners(placement.NewDirectory(Kind, l))
	l.Register(Kind, cfg.Inbox, func(id string) actor.Producer {
		return func() actor.Receiver { return newTaskActor(s, id) }
	})
	return s
}

// Get returns account's task id as its actor holds it (activating it from the store when
// it was passivated); it never calls the upstream. Another account's task, or an unknown
// id, is ErrNotFound.
func (s *Service) Get(ctx context.Context, account, id string) (Task, error) {
	if !validTaskID(id) {
		return Task{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if s.dir.Closed() {
		return Task{}, ErrClosed
	}
	m := &getMsg{account: account, reply: make(chan getResult, 1)}
	if !s.dir.Active(id) {
		// Not running: check the store first, so an unknown id or another account's task
		// costs one read and activates nothing.
		rec, err := s.readTask(ctx, account, id)
		if errors.Is(err, persistence.ErrNotFound) {
			return Task{}, fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		if err != nil {
			return Task{}, err
		}
		if rec.Account != account {
			return Task{}, fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		if !s.activatedByGet(&rec) {
			return view(&rec), nil
		}
		m.rec = &rec
	}
	if err := s.route(id, m); err != nil {
		return Task{}, err
	}
	select {
	case r := <-m.reply:
		return r.task, r.err
	case <-ctx.Done():
		return Task{}, ctx.Err()
	}
}

// Resume activates every unfinished or unsettled task (node start): each carries on from
// its record.
func (s *Service) Resume(ctx context.Context) error {
	open, err := s.deps.Tasks.ListOpenTasks()
	if err != nil {
		return err
	}
	for i := range open {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !s.adoptable(&open[i]) {
			continue
		}
		if err := s.route(open[i].ID, &startMsg{rec: open[i]}); err != nil {
			return err
		}
	}
	if len(open) > 0 {
		s.log.Info("video tasks resumed", "tasks", len(open))
	}
	return nil
}

// Close stops every task actor: calls in flight are cancelled (a cancelled step is
// repeated after the next start) and what was not written yet is written. It returns when
// no actor runs and no call is in flight, or when ctx ends. Close before the quota service
// and the stores.
func (s *Service) Close(ctx context.Context) error {
	s.dir.Closing()
	first := placement.RetireAll(ctx, s.dir, func(id string) <-chan error {
		m := &retireMsg{reply: make(chan error, 1)}
		if s.route(id, m) != nil {
			return nil
		}
		return m.reply
	}, func(err error) error { return err })
	if err := s.work.wait(ctx); err != nil {
		return err
	}
	if err := s.stops.wait(ctx); err != nil {
		return err
	}
	return first
}

// Active counts task actors running now (tests, metrics).
func (s *Service) Active() int { return s.dir.Count() }

// route sends m to the task's owner: refused once the service is closing, except the
// retire handshake, which only reaches an active owner.
func (s *Service) route(task string, m routed) error {
	_, retiring := m.(*retireMsg)
	if !s.dir.Send(task, m, retiring) {
		return ErrClosed
	}
	return nil
}

// stopLater retires an incarnation's actor once it has returned from Receive.
func (s *Service) stopLater(id string) {
	s.stops.add()
	supervise.Go("video.stop-actor", func() {
		defer s.stops.done() // after a panic too: Close waits for it
		s.loc.Stop(Kind, id)
	})
}

// counter counts goroutines Close waits for (a WaitGroup may not grow during Wait).
type counter struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed while n == 0
}

func (c *counter) init() {
	c.zero = make(chan struct{})
	close(c.zero)
}

func (c *counter) add() {
	c.mu.Lock()
	if c.n == 0 {
		c.zero = make(chan struct{})
	}
	c.n++
	c.mu.Unlock()
}

func (c *counter) done() {
	c.mu.Lock()
	if c.n--; c.n == 0 {
		close(c.zero)
	}
	c.mu.Unlock()
}

func (c *counter) wait(ctx context.Context) error {
	c.mu.Lock()
	z := c.zero
	c.mu.Unlock()
	select {
	case <-z:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// validTaskID accepts "video_" + 24 base62.
func validTaskID(id string) bool {
	return len(id) == 30 && id[:6] == "video_" && randid.Is(id[6:])
}

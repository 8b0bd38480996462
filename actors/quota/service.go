// Package quota owns every account's limits and money in one actor per account: the
// sliding 60 s burst, the window allowance on its fixed schedule, the weekly cap, the abuse
// throttle, the credit balance and spend, the daily image and video counters, and the
// account's request log. Admission is one step in the owner (check every limit and reserve,
// or refuse); the answer of every call settles there. The decisions are the pure quota
// step's (package step): the actor stamps each request with its clock and persists what the
// step changed.
//
// Durability: every settle, logged refusal, top-up, charge and image/video operation is on
// disk before it is acknowledged, its log entry in the same batch as its counters and money.
// The store group-commits the writes of all accounts (persistence.SubmitQuota), so many share
// one fsync; the gateway answers a call's last byte only after its settle is acknowledged.
// The burst windows are rebuilt from the request log (each counted call's entry is its slot),
// the throttle's state is written per key. Admissions are in memory only: a crash loses the
// in-flight reservations, and those calls, never answered, count nothing and cost nothing.
package quota

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/actors/placement"
	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// Kind is the actor kind for the locator.
const Kind = "quota"

// Errors. Returned errors wrap one of these.
var (
	ErrClosed              = errors.New("quota: service closed")
	ErrInvalid             = errors.New("quota: invalid request")
	ErrUnknownReservation  = errors.New("quota: unknown, settled or expired reservation")
	ErrIdempotencyConflict = errors.New("quota: idempotency key already used with another amount")
	// ErrUnavailable: the account's owner (its shard, in a cluster) did not answer in time;
	// the step may or may not have applied. The API answers 503 with Retry-After.
	ErrUnavailable = errors.New("quota: the account's owner is unavailable")
)

// Limit names what refused a call.
type Limit string

const (
	LimitBurst    Limit = Limit(step.LimitBurst)    // 429: the sliding 60 s burst limit
	LimitThrottle Limit = Limit(step.LimitThrottle) // 429: the key's abuse throttle
	LimitWindow   Limit = Limit(step.LimitWindow)   // 402: window allowance used up, no credit available (balance + overdraft - holds <= 0)
	LimitWeekly   Limit = Limit(step.LimitWeekly)   // 402: weekly cap used up, no credit available
	LimitCredits  Limit = Limit(step.LimitCredits)  // 402: allowance used up; the balance is below this call's estimated cost
	LimitImages   Limit = Limit(step.LimitImages)   // 429 until 00:00 UTC
	LimitVideo    Limit = Limit(step.LimitVideo)    // 429 until 00:00 UTC
	// The calling key's own limits (AdmitRequest.KeyLimits).
	LimitKeyExpired Limit = Limit(step.LimitKeyExpired) // 401: the key expired (ResetsAt: when)
	LimitKeyRPM     Limit = Limit(step.LimitKeyRPM)     // 429: the key's own rpm
	LimitKeyBudget  Limit = Limit(step.LimitKeyBudget)  // 402: the key's budget is spent until ResetsAt (zero: a total budget)
)

// Status is the HTTP status of a refusal by this limit (0 for none).
func (l Limit) Status() int {
	switch l {
	case "":
		return 0
	case LimitWindow, LimitWeekly, LimitCredits, LimitKeyBudget:
		return 402
	case LimitKeyExpired:
		return 401
	}
	return 429
}

// Units converts a model's quota_multiplier into the thousandths of a call it counts:
// round(multiplier·1000), so 1.5 counts 1500.
func Units(multiplier float64) int64 { return int64(math.Round(multiplier * 1000)) }

// AdmitRequest is one call asking to start.
type AdmitRequest struct {
	Account string
	KeyID   string // the calling key; the burst is per key when the plan says so, the throttle always is
	Plan    *catalog.Plan
	// Units is what the call counts, in thousandths of a call (Units(model.QuotaMultiplier));
	// 0 means one plain call (1000).
	Units int64
	// EstimatedCost is the most the call can cost at the model's rates (for example with
	// max_tokens of output). A call beyond the plan's allowance is admitted only when the
	// credits (plus the plan's overdraft, minus what other in-flight paid calls hold) cover
	// it, and that much is held until it settles. 0: any positive available credit admits.
	EstimatedCost money.Amount
	// At is when the call arrived: its slot in the sliding windows, and the time of its log
	// entry (whose time the burst windows are rebuilt from). Zero: now.
	At time.Time
	// KeyLimits are the calling key's own limits, as read with the key (zero: none).
	KeyLimits persistence.KeyLimits
	// TTL is how long the reservation lasts when the call is never settled (its node died):
	// the longest the call may run, and a little. Zero: Config.ReservationTTL.
	TTL time.Duration
}

// Decision is the answer to an admission.
type Decision struct {
	Admitted    bool
	Reservation Reservation // settle it exactly once (Settle); zero when refused
	Paid        bool        // beyond the plan's allowance: settled from credits
	Refused     Limit       // empty when admitted
	// RetryAfter is exact: for burst and throttle, until the call holding the limiting slot
	// leaves the sliding 60 s window; for window, weekly and credits, until ResetsAt.
	RetryAfter time.Duration
	ResetsAt   time.Time // window, weekly, credits: when the exhausted allowance returns
	MaxRPM     int64     // the per-minute cap in force for this key (0 = none)
	Burst      Budget    // for X-RateLimit-*: the cap in force (throttle when throttled), after this call
}

// Budget is a sliding 60 s budget: Limit calls, Remaining of them free now, and Reset,
// when the oldest call in the window leaves it (now when the window is empty). Limit 0
// means no per-minute cap.
type Budget struct {
	Limit, Remaining int64
	Reset            time.Time
}

// Reservation identifies an admitted call until it settles.
type Reservation struct {
	Account string
	ID      uint64
}

// Outcome is how an admitted call ended.
type Outcome struct {
	// Counts is false for upstream failures (502, 529, time-outs): the reservation is
	// released, nothing counts, nothing is charged. Successful calls and client errors count.
	Counts bool
	// Cost is the call's actual cost at the model's rates (codec.Usage.Cost). It is charged
	// only when the call was admitted beyond the plan (Decision.Paid), and never past the
	// plan's overdraft floor.
	Cost money.Amount
	// Log, when set, is written in the same batch as the settlement, with AccountID filled
	// in, Cost replaced by the amount actually charged (so the request log and the balance
	// always agree), and Counted and AllowanceUnits saying what the call counted. A counted
	// call's entry is the durable record of its burst slot: its Time must be the call's At.
	Log *persistence.LogEntry
	// Media, when set, ends a daily media reservation in the same write: N produced (commit)
	// or, N 0, released.
	Media *MediaUse
	// Units, when above 0 and below what the admission reserved, is what the call counts in
	// the plan instead: a call admitted for the dearest of several models (a fallback list)
	// counts the one that served.
	Units int64
}

// MediaUse ends a media reservation with the call that made it.
type MediaUse struct {
	Reservation MediaReservation
	N           int64
}

// Unadmitted is a call answered without an admission, logged by Record: a client error found
// before admission (Counts: it counts Units as a call does, never refused and never paid), or
// a refusal (a 401 on a revoked key, a 403, a 402 or 429 of the quota: logged only).
type Unadmitted struct {
	Account string
	KeyID   string
	Plan    *catalog.Plan // the account's plan: needed when Counts
	Units   int64         // thousandths of a call, when Counts; 0 means one plain call (1000)
	Counts  bool
	// Log is the call's entry (required). Its Time is the call's arrival, and a counted call's
	// slot in the burst windows.
	Log *persistence.LogEntry
	// KeyLimits are the key's own limits: a counted call takes a slot in its rpm window.
	KeyLimits persistence.KeyLimits
}

// Settlement is what a settle did.
type Settlement struct {
	Counted bool         // the call used allowance (in-plan) or was paid
	Paid    bool         // it was beyond the plan
	Charged money.Amount // taken from credits
	Balance money.Amount // after it
}

// MediaDecision answers an image or video operation.
type MediaDecision struct {
	Admitted    bool
	Reservation MediaReservation
	Refused     Limit         // LimitImages or LimitVideo
	RetryAfter  time.Duration // until the next 00:00 UTC
	ResetsAt    time.Time
	Daily       Daily // the counter after the operation
}

// MediaReservation identifies reserved images or video seconds until commit or release.
// It survives restarts (it is stored), so a video task can commit after resuming.
type MediaReservation struct {
	Account string
	Kind    string // persistence.MediaImages or persistence.MediaVideo
	ID      uint64
}

// Store is the part of persistence the actors use.
type Store interface {
	LoadQuota(account string) (persistence.QuotaRecord, bool, error)
	LoadKeyQuotas(account string) (map[string]persistence.KeyQuota, error)
	CountedSince(account string, since int64) ([]persistence.CountedCall, error)
	CreditGrantFor(account, key string) (persistence.CreditGrant, bool, error)
	// SubmitQuota writes w with the next group commit and calls done once it is durable or
	// failed, in submission order; done must not block.
	SubmitQuota(w persistence.QuotaWrite, done func(error))
	// ExpectWrite tells the group commit a write is on its way (+1, a call admitted) or
	// settling now (-1), so that a commit under load waits for it a little.
	ExpectWrite(delta int)
}

// Config tunes the service. Zero values take the defaults.
type Config struct {
	Now            func() time.Time // business clock (limits, resets); default time.Now
	IdleTimeout    time.Duration    // an account actor idle this long (up to twice) passivates; default 5m
	ReservationTTL time.Duration    // an admitted call never settled is released after this; default 1h
	// Node and Incarnation mark every admission of a cluster node (step.Call.Node): once the
	// node announces a new incarnation, the calls of the old one are released. 0: a single
	// node, whose calls live in its memory and end with it.
	Node, Incarnation uint64
}

// Service is the client API of the quota actors. Handlers never hold an actor: every call
// goes through the directory to the account's current owner.
type Service struct {
	owner    Owner
	store    Store
	cfg      Config
	dir      *placement.Owners[*accountActor]
	closed   atomic.Bool
	stop     chan struct{} // ends the idle sweep (Close)
	stopOnce sync.Once
	swept    <-chan struct{}

	// hookRetire (tests) runs in the passivating actor after its final write, before the
	// directory handshake (retired false) and after a successful one (retired true).
	hookRetire func(account string, retired bool)
}

// NewService runs every account's steps in an actor of its own on this node, activated by
// its first message and passivated when idle (passivate.go).
func NewService(st Store, cfg Config) *Service {
	cfg = cfg.withDefaults()
	s := &Service{store: st, cfg: cfg, stop: make(chan struct{})}
	s.owner = localOwner{s}
	s.dir = placement.NewOwners(placement.NewDirectoryOf(func(acct string) *accountActor { return newAccountActor(s, acct) },
		(*accountActor).send))
	s.swept = supervise.Loop("quota.idle-sweep", s.stop, func() { s.sweep(s.stop) })
	return s
}

// NewServiceOver is the service over another owner of the accounts' steps, such as a
// cluster's account shards (cluster/accounts.Owner): no account actor runs on this node.
// cfg.Now stamps the commands; cfg.ReservationTTL is what an admission reserves for.
func NewServiceOver(o Owner, cfg Config) *Service {
	return &Service{owner: o, cfg: cfg.withDefaults()}
}

func (cfg Config) withDefaults() Config {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 5 * time.Minute
	}
	if cfg.ReservationTTL <= 0 {
		cfg.ReservationTTL = time.Hour
	}
	return cfg
}

// Admit checks every limit and reserves, or refuses, in one step of the account's owner.
func (s *Service) Admit(ctx context.Context, r AdmitRequest) (Decision, error) {
	if err := checkAccount(r.Account); err != nil {
		return Decision{}, err
	}
	switch {
	case r.Plan == nil:
		return Decision{}, fmt.Errorf("%w: admit for %s: no plan", ErrInvalid, r.Account)
	case r.Units < 0:
		return Decision{}, fmt.Errorf("%w: admit for %s: units %d is negative", ErrInvalid, r.Account, r.Units)
	case r.EstimatedCost < 0:
		return Decision{}, fmt.Errorf("%w: admit for %s: estimated cost %s is negative", ErrInvalid, r.Account, r.EstimatedCost)
	}
	if r.Units == 0 {
		r.Units = 1000
	}
	if err := ctx.Err(); err != nil { // a caller gone already asks for nothing
		return Decision{}, err
	}
	ttl := s.cfg.ReservationTTL
	if r.TTL > 0 {
		ttl = r.TTL
	}
	c := &step.Command{Kind: step.Admit, Now: s.stamp(), Plan: step.PlanOf(r.Plan), Key: r.KeyID, Units: r.Units,
		Amount: r.EstimatedCost, TTL: int64(ttl), Node: s.cfg.Node, Inc: s.cfg.Incarnation}
	if !r.At.IsZero() {
		c.At = r.At.UnixNano()
	}
	if !r.KeyLimits.IsZero() {
		c.KeyLimits = &r.KeyLimits
	}
	res, err := s.do(ctx, r.Account, c)
	if err != nil {
		return Decision{}, err
	}
	var d Decision
	decide(&d, r.Account, &res)
	if d.Admitted {
		s.expectWrite(1)
	}
	return d, nil
}

// Settle ends an admitted call. It returns once the settlement and its log entry are
// durable, in one batch. An error means they are not: the account went back to what is on
// disk (the call counts nothing and costs nothing), or the wait was abandoned. A cancelled
// ctx abandons only the wait, never the settlement: settle with a context that outlives the
// client's request.
func (s *Service) Settle(ctx context.Context, r Reservation, o Outcome) (Settlement, error) {
	s.expectWrite(-1)
	if err := checkAccount(r.Account); err != nil {
		return Settlement{}, err
	}
	if o.Cost < 0 {
		return Settlement{}, fmt.Errorf("%w: settle for %s: cost %s is negative", ErrInvalid, r.Account, o.Cost)
	}
	if o.Log != nil {
		e, err := logEntry("settle", r.Account, o.Log)
		if err != nil {
			return Settlement{}, err
		}
		o.Log = e
	}
	if o.Media != nil && (o.Media.Reservation.Account != r.Account || o.Media.N < 0) {
		return Settlement{}, fmt.Errorf("%w: settle for %s: media reservation %+v", ErrInvalid, r.Account, *o.Media)
	}
	if o.Units < 0 {
		return Settlement{}, fmt.Errorf("%w: settle for %s: units %d is negative", ErrInvalid, r.Account, o.Units)
	}
	c := &step.Command{Kind: step.Settle, Now: s.stamp(), ID: r.ID, Counts: o.Counts, Amount: o.Cost, Log: o.Log, Units: o.Units}
	if u := o.Media; u != nil {
		c.Media, c.MediaID, c.N = u.Reservation.Kind, u.Reservation.ID, u.N
	}
	res, err := s.do(ctx, r.Account, c)
	return settlement(&res), err
}

// Record logs a call answered without an admission, and counts it when it is a client
// error (Unadmitted). It returns once the entry and the counts are durable.
func (s *Service) Record(ctx context.Context, u Unadmitted) error {
	if err := checkAccount(u.Account); err != nil {
		return err
	}
	switch {
	case u.Log == nil:
		return fmt.Errorf("%w: record for %s: no log entry", ErrInvalid, u.Account)
	case u.Units < 0:
		return fmt.Errorf("%w: record for %s: units %d is negative", ErrInvalid, u.Account, u.Units)
	case u.Counts && u.Plan == nil:
		return fmt.Errorf("%w: record for %s: a counted call needs the plan", ErrInvalid, u.Account)
	}
	if u.Units == 0 {
		u.Units = 1000
	}
	e, err := logEntry("record", u.Account, u.Log)
	if err != nil {
		return err
	}
	c := &step.Command{Kind: step.Record, Now: s.stamp(), Key: u.KeyID, Units: u.Units, Log: e}
	if u.Counts {
		c.Counts, c.Plan = true, step.PlanOf(u.Plan)
		if !u.KeyLimits.IsZero() {
			c.KeyLimits = &u.KeyLimits
		}
	}
	_, err = s.do(ctx, u.Account, c)
	return err
}

// logEntry is a copy of e for account's log, checked before it joins a batch: the actor
// fills in its cost and what it counted.
func logEntry(op, account string, e *persistence.LogEntry) (*persistence.LogEntry, error) {
	c := *e
	if c.AccountID == "" {
		c.AccountID = account
	}
	c.Cost, c.Counted, c.AllowanceUnits, c.Seq = 0, false, 0, 0
	if c.AccountID != account {
		return nil, fmt.Errorf("%w: %s for %s: log entry of account %q", ErrInvalid, op, account, c.AccountID)
	}
	if err := persistence.ValidateLogEntry(&c); err != nil {
		return nil, fmt.Errorf("%w: %s for %s: log entry: %v", ErrInvalid, op, account, err)
	}
	return &c, nil
}

// AddCredits adds amount to the balance once per idempotency key: the same key again adds
// nothing (added false) and returns the current balance; the same key with another amount
// is ErrIdempotencyConflict. The new balance is durable before it returns.
func (s *Service) AddCredits(ctx context.Context, account string, amount money.Amount, idempotencyKey string) (balance money.Amount, added bool, err error) {
	if err := checkAccount(account); err != nil {
		return 0, false, err
	}
	if amount <= 0 {
		return 0, false, fmt.Errorf("%w: credits for %s: amount %s must be positive", ErrInvalid, account, amount)
	}
	if idempotencyKey == "" {
		return 0, false, fmt.Errorf("%w: credits for %s: an idempotency key is required", ErrInvalid, account)
	}
	r, err := s.do(ctx, account, &step.Command{Kind: step.AddCredits, Now: s.stamp(), Key: idempotencyKey, Amount: amount})
	return r.Balance, r.Added && err == nil, err
}

// ReverseCredits takes amount back once per idempotency key: a refund or a dispute of a
// purchase. The balance may go below zero (paid calls are then refused with 402 until it is
// topped up). The same key again takes nothing (reversed false) and returns the current
// balance; the same key with another amount is ErrIdempotencyConflict. The new balance is
// durable before it returns.
func (s *Service) ReverseCredits(ctx context.Context, account string, amount money.Amount, idempotencyKey string) (balance money.Amount, reversed bool, err error) {
	if err := checkAccount(account); err != nil {
		return 0, false, err
	}
	if amount <= 0 {
		return 0, false, fmt.Errorf("%w: reversal for %s: amount %s must be positive", ErrInvalid, account, amount)
	}
	if idempotencyKey == "" {
		return 0, false, fmt.Errorf("%w: reversal for %s: an idempotency key is required", ErrInvalid, account)
	}
	r, err := s.do(ctx, account, &step.Command{Kind: step.Reverse, Now: s.stamp(), Key: idempotencyKey, Amount: amount})
	return r.Balance, r.Added && err == nil, err
}

// ReserveImages reserves n of today's images (plan.ImageDailyLimit), or refuses with
// LimitImages and RetryAfter until 00:00 UTC. Durable before it returns.
func (s *Service) ReserveImages(ctx context.Context, account string, plan *catalog.Plan, n int64) (MediaDecision, error) {
	return s.reserveMedia(ctx, account, persistence.MediaImages, plan, n)
}

// ReserveVideoSeconds reserves seconds of today's video output (plan.VideoDailySeconds).
func (s *Service) ReserveVideoSeconds(ctx context.Context, account string, plan *catalog.Plan, seconds int64) (MediaDecision, error) {
	return s.reserveMedia(ctx, account, persistence.MediaVideo, plan, seconds)
}

// CommitImages ends an image reservation: n images were produced and count today (a
// reservation made on an earlier day counts nothing: that day's counter is gone).
func (s *Service) CommitImages(ctx context.Context, r MediaReservation, n int64) error {
	return s.endMedia(ctx, r, persistence.MediaImages, step.MediaCommit, n)
}

// CommitVideoSeconds ends a video reservation with the seconds actually produced.
func (s *Service) CommitVideoSeconds(ctx context.Context, r MediaReservation, seconds int64) error {
	return s.endMedia(ctx, r, persistence.MediaVideo, step.MediaCommit, seconds)
}

// ReleaseImages gives an image reservation back: nothing counts.
func (s *Service) ReleaseImages(ctx context.Context, r MediaReservation) error {
	return s.endMedia(ctx, r, persistence.MediaImages, step.MediaRelease, 0)
}

// ReleaseVideoSeconds gives a video reservation back: nothing counts.
func (s *Service) ReleaseVideoSeconds(ctx context.Context, r MediaReservation) error {
	return s.endMedia(ctx, r, persistence.MediaVideo, step.MediaRelease, 0)
}

func (s *Service) reserveMedia(ctx context.Context, account, kind string, plan *catalog.Plan, n int64) (MediaDecision, error) {
	if err := checkAccount(account); err != nil {
		return MediaDecision{}, err
	}
	if plan == nil || n <= 0 {
		return MediaDecision{}, fmt.Errorf("%w: %s reservation for %s needs a plan and a positive amount", ErrInvalid, kind, account)
	}
	c := &step.Command{Kind: step.MediaReserve, Now: s.stamp(), Plan: step.PlanOf(plan), Media: kind, N: n}
	if kind == persistence.MediaImages {
		c.TTL = int64(s.cfg.ReservationTTL) // an image call never outlives it
	}
	r, err := s.do(ctx, account, c)
	switch {
	case err != nil:
		return MediaDecision{}, err
	case !r.Admitted:
		return MediaDecision{Refused: Limit(r.Refused), ResetsAt: unixSec(r.ResetsAt), RetryAfter: time.Duration(r.RetryAfter), Daily: daily(r.Daily)}, nil
	}
	return MediaDecision{Admitted: true, Reservation: MediaReservation{Account: account, Kind: kind, ID: r.ID}, Daily: daily(r.Daily)}, nil
}

func (s *Service) endMedia(ctx context.Context, r MediaReservation, kind string, op step.Kind, n int64) error {
	if err := checkAccount(r.Account); err != nil {
		return err
	}
	if r.Kind != kind || n < 0 {
		return fmt.Errorf("%w: %s operation on a %q reservation with amount %d", ErrInvalid, kind, r.Kind, n)
	}
	_, err := s.do(ctx, r.Account, &step.Command{Kind: op, Now: s.stamp(), Media: kind, ID: r.ID, N: n})
	return err
}

// Close lets every active account finish its writes and stops its actor; calls after it
// fail with ErrClosed. In-flight call reservations are dropped (their calls count nothing).
func (s *Service) Close(ctx context.Context) error {
	s.closed.Store(true)
	if s.dir == nil { // another owner: nothing of it runs here
		return nil
	}
	s.endSweep()
	s.dir.Closing()
	return placement.RetireAll(ctx, s.dir, func(acct string) <-chan *result[struct{}] {
		m := &retireMsg{reply: newReply[struct{}]()}
		if s.send(acct, m) != nil {
			return nil
		}
		return m.reply
	}, func(r *result[struct{}]) error { return r.err })
}

// do has the account's owner perform c, and turns a step that changed nothing into its
// error.
func (s *Service) do(ctx context.Context, account string, c *step.Command) (step.Result, error) {
	if s.dir == nil && s.closed.Load() {
		return step.Result{}, ErrClosed
	}
	r, err := s.owner.Do(ctx, account, c)
	if err == nil {
		err = failure(account, c, &r)
	}
	return r, err
}

// expectWrite tells the single node's group commit about a settle on its way (a cluster's
// owner commits through its shard's log instead).
func (s *Service) expectWrite(delta int) {
	if s.store != nil {
		s.store.ExpectWrite(delta)
	}
}

// stamp is the service's clock as a command carries it.
func (s *Service) stamp() int64 { return s.cfg.Now().UnixNano() }

// send routes m to the account's owner: refused once the service is closing, except the
// retire handshake, which only reaches an active owner.
func (s *Service) send(account string, m routed) error {
	_, retiring := m.(*retireMsg)
	if !s.dir.Send(account, m, retiring) {
		return ErrClosed
	}
	return nil
}

func (s *Service) now() time.Time { return s.cfg.Now() }

// endSweep stops the idle sweep and waits for it (once; Close may be called again).
func (s *Service) endSweep() {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.swept
}

func checkAccount(a string) error {
	if a == "" {
		return fmt.Errorf("%w: no account", ErrInvalid)
	}
	for i := 0; i < len(a); i++ {
		if a[i] <= ' ' || a[i] > '~' || a[i] == '/' || a[i] == '#' {
			return fmt.Errorf("%w: account %q must be printable ASCII without spaces, '/' or '#'", ErrInvalid, a)
		}
	}
	return nil
}

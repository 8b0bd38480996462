package clusterbench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/bench/load"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// paidPlan allows one call a window: every later call of the account is paid from its
// credits, so each charge holds its estimated cost at admission and takes its cost at the
// settle, as a paid API call does.
var paidPlan = &catalog.Plan{Name: "bench-paid", WindowRequests: 1}

// Each charge costs chargeCost; each account starts with accountCredits (room for 10^8).
const (
	chargeCost     = money.Amount(10_000_000)            // $0.00001
	accountCredits = money.Amount(1_000_000_000_000_000) // $1,000
)

// ledger is what the charges acknowledged took, per account (by index).
type ledger struct{ charged []atomic.Int64 }

func newLedger(accounts int) *ledger { return &ledger{charged: make([]atomic.Int64, accounts)} }

// loadRun is one run. Closed loop (rate 0): inFlight workers, each charging (admit, then a
// paid settle with a request-log entry) one account after another until the deadline. Open
// loop (rate > 0): a charge starts every 1/rate s whatever the others do (up to
// maxPacedInFlight at once), and its latencies count from when it was due, so a stall is
// not hidden by the charges it kept from starting.
type loadRun struct {
	members  []*member // worker w charges through members[w % len]
	accounts []string
	inFlight int
	rate     int // charges a second offered (open loop); 0: closed loop
	duration time.Duration
	ledger   *ledger
	runID    string // makes request ids unique across runs
	// killedAt, once set (unix ns), makes every admission still waiting or started after
	// it count toward stall: the longest admission wait after a kill.
	killedAt atomic.Int64
}

// loadResult is what a run measured.
type loadResult struct {
	charges, errors int64
	errSample       string
	elapsed         time.Duration
	admit, charge   *load.Histogram // ns: admit alone, admit + settle
	// forwarded is the admission wait of the charges taken by a node that did not lead the
	// account's shard (their steps forwarded to its leader).
	forwarded *load.Histogram
	stall     time.Duration // longest admission wait ending after killedAt
}

func (r *loadRun) run(ctx context.Context) *loadResult {
	t := newTally()
	start := time.Now()
	if r.rate > 0 {
		r.paced(ctx, t, start)
	} else {
		r.closed(ctx, t, start)
	}
	t.res.elapsed = time.Since(start)
	return t.res
}

// tally is a run's result, recorded under a lock by every charge: one pair of histograms
// for the run (a pair per worker cost 0.5 GiB at 1,024 in flight and was most of what the
// scenario reported as the nodes' memory).
type tally struct {
	mu  sync.Mutex
	res *loadResult
}

func newTally() *tally {
	return &tally{res: &loadResult{admit: load.NewHistogram(), charge: load.NewHistogram(), forwarded: load.NewHistogram()}}
}

// record counts one charge: its admission wait and whole time, or its error; stalled says
// it ended after the kill (its wait then counts toward the stall).
func (t *tally) record(wait, total time.Duration, err error, stalled, forwarded bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if stalled {
		t.res.stall = max(t.res.stall, wait)
	}
	if err != nil {
		t.res.errors++
		if t.res.errSample == "" {
			t.res.errSample = err.Error()
		}
		return
	}
	t.res.charges++
	t.res.admit.RecordDuration(wait)
	t.res.charge.RecordDuration(total)
	if forwarded {
		t.res.forwarded.RecordDuration(wait)
	}
}

// forwarded reports whether m's steps for account i go to another node: m does not lead
// its shard (a single node, or a killed member, leads all it has).
func (r *loadRun) forwarded(m *member, i int) bool {
	owner, eng := m.owner, m.eng
	if owner == nil || eng == nil {
		return false
	}
	leader, ok := eng.Leader(owner.Shard(r.accounts[i]))
	return ok && leader != m.id
}

func (r *loadRun) afterKill() bool {
	k := r.killedAt.Load()
	return k != 0 && time.Now().UnixNano() > k
}

// closed is the closed loop: inFlight workers until the deadline.
func (r *loadRun) closed(ctx context.Context, t *tally, start time.Time) {
	deadline := start.Add(r.duration)
	var wg sync.WaitGroup
	for w := range r.inFlight {
		m := r.members[w%len(r.members)]
		wg.Go(func() {
			for seq := 0; ctx.Err() == nil && time.Now().Before(deadline); seq++ {
				acct := (w + seq*r.inFlight) % len(r.accounts)
				fwd := r.forwarded(m, acct)
				wait, total, err := r.charge(ctx, m.svc, acct, fmt.Sprintf("%s-%d-%d", r.runID, w, seq))
				t.record(wait, total, err, r.afterKill(), fwd)
			}
		})
	}
	wg.Wait()
}

// maxPacedInFlight bounds an open-loop run's charges in flight: past it a due charge is
// counted as an error (the setup cannot keep up with the offered rate).
const maxPacedInFlight = 4096

var errPacedBacklog = fmt.Errorf("over %d charges in flight", maxPacedInFlight)

// paced is the open loop: a charge due every 1/rate s until the duration has passed.
func (r *loadRun) paced(ctx context.Context, t *tally, start time.Time) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxPacedInFlight)
	interval := time.Second / time.Duration(r.rate)
	for seq := 0; ctx.Err() == nil; seq++ {
		due := start.Add(time.Duration(seq) * interval)
		if !due.Before(start.Add(r.duration)) {
			break
		}
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		select {
		case sem <- struct{}{}:
		default:
			t.record(0, 0, errPacedBacklog, false, false)
			continue
		}
		m := r.members[seq%len(r.members)]
		wg.Go(func() {
			defer func() { <-sem }()
			late := time.Since(due)
			fwd := r.forwarded(m, seq%len(r.accounts))
			wait, total, err := r.charge(ctx, m.svc, seq%len(r.accounts), fmt.Sprintf("%s-p-%d", r.runID, seq))
			t.record(late+wait, late+total, err, r.afterKill(), fwd)
		})
	}
	wg.Wait()
}

// charge admits one paid call of account acct and settles it at chargeCost, returning the
// admission's wait and the whole charge's.
func (r *loadRun) charge(ctx context.Context, svc *quota.Service, acct int, rid string) (admitWait, total time.Duration, err error) {
	t0 := time.Now()
	d, err := svc.Admit(ctx, quota.AdmitRequest{Account: r.accounts[acct], KeyID: "bench-key", Plan: paidPlan, EstimatedCost: chargeCost, At: t0})
	admitWait = time.Since(t0)
	switch {
	case err != nil:
		return admitWait, 0, fmt.Errorf("admit: %w", err)
	case !d.Admitted:
		return admitWait, 0, fmt.Errorf("admit: refused (%s)", d.Refused)
	}
	entry := &persistence.LogEntry{RequestID: rid, Time: t0.UnixNano(), KeyID: "bench-key", Model: "bench-model", Route: "bench-route", Status: 200}
	s, err := svc.Settle(ctx, d.Reservation, quota.Outcome{Counts: true, Cost: chargeCost, Log: entry})
	if err != nil {
		return admitWait, time.Since(t0), fmt.Errorf("settle: %w", err)
	}
	r.ledger.charged[acct].Add(int64(s.Charged))
	return admitWait, time.Since(t0), nil
}

// fund gives every account its credits through svc, 16 at a time.
func fund(ctx context.Context, svc *quota.Service, accounts []string) error {
	sem := make(chan struct{}, 16)
	errs := make(chan error, len(accounts))
	var wg sync.WaitGroup
	for _, a := range accounts {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if _, _, err := svc.AddCredits(ctx, a, accountCredits, "bench-funding"); err != nil {
				errs <- fmt.Errorf("credits for %s: %w", a, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// ledgerExact says whether every account's spend, read through svc, is what the
// acknowledged charges took (meaningful only when no charge ended in an unknown outcome).
func ledgerExact(ctx context.Context, svc *quota.Service, accounts []string, l *ledger) (bool, error) {
	for i, a := range accounts {
		st, err := svc.State(ctx, a, paidPlan)
		if err != nil {
			return false, fmt.Errorf("state of %s: %w", a, err)
		}
		if int64(st.Spent) != l.charged[i].Load() {
			return false, nil
		}
	}
	return true, nil
}

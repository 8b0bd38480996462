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
	stall           time.Duration   // longest admission wait ending after killedAt
}

func (r *loadRun) run(ctx context.Context) *loadResult {
	if r.rate > 0 {
		return r.runPaced(ctx)
	}
	type worker struct {
		admit, charge   *load.Histogram
		charges, errors int64
		errSample       string
		stall           time.Duration
	}
	workers := make([]worker, r.inFlight)
	start := time.Now()
	deadline := start.Add(r.duration)
	var wg sync.WaitGroup
	for w := range workers {
		wk := &workers[w]
		wk.admit, wk.charge = load.NewHistogram(), load.NewHistogram()
		m := r.members[w%len(r.members)]
		wg.Go(func() {
			for seq := 0; ctx.Err() == nil && time.Now().Before(deadline); seq++ {
				acct := (w + seq*r.inFlight) % len(r.accounts)
				wait, total, err := r.charge(ctx, m.svc, acct, fmt.Sprintf("%s-%d-%d", r.runID, w, seq))
				if k := r.killedAt.Load(); k != 0 && time.Now().UnixNano() > k {
					wk.stall = max(wk.stall, wait)
				}
				if err != nil {
					wk.errors++
					if wk.errSample == "" {
						wk.errSample = err.Error()
					}
					continue
				}
				wk.charges++
				wk.admit.RecordDuration(wait)
				wk.charge.RecordDuration(total)
			}
		})
	}
	wg.Wait()
	res := &loadResult{elapsed: time.Since(start), admit: load.NewHistogram(), charge: load.NewHistogram()}
	for i := range workers {
		wk := &workers[i]
		res.charges += wk.charges
		res.errors += wk.errors
		res.admit.Merge(wk.admit)
		res.charge.Merge(wk.charge)
		res.stall = max(res.stall, wk.stall)
		if res.errSample == "" {
			res.errSample = wk.errSample
		}
	}
	return res
}

// maxPacedInFlight bounds an open-loop run's charges in flight: past it a due charge is
// counted as an error (the setup cannot keep up with the offered rate).
const maxPacedInFlight = 4096

func (r *loadRun) runPaced(ctx context.Context) *loadResult {
	res := &loadResult{admit: load.NewHistogram(), charge: load.NewHistogram()}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxPacedInFlight)
	start := time.Now()
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
			mu.Lock()
			res.errors++
			if res.errSample == "" {
				res.errSample = fmt.Sprintf("over %d charges in flight", maxPacedInFlight)
			}
			mu.Unlock()
			continue
		}
		m := r.members[seq%len(r.members)]
		acct := seq % len(r.accounts)
		wg.Go(func() {
			defer func() { <-sem }()
			late := time.Since(due)
			wait, total, err := r.charge(ctx, m.svc, acct, fmt.Sprintf("%s-p-%d", r.runID, seq))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.errors++
				if res.errSample == "" {
					res.errSample = err.Error()
				}
				return
			}
			res.charges++
			res.admit.RecordDuration(late + wait)
			res.charge.RecordDuration(late + total)
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
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

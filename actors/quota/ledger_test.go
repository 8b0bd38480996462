package quota

import (
	"context"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
)

// gatedStore holds every write until the test lets it through.
type gatedStore struct {
	Store
	writes chan func()
}

func (g *gatedStore) SubmitQuota(w persistence.QuotaWrite, done func(error)) {
	g.writes <- func() { g.Store.SubmitQuota(w, done) }
}

// TestAnswersWaitForTheDisk: a settle, a logged refusal, a top-up and a media reservation are
// answered only once their write is on disk; meanwhile the account keeps admitting, and the
// changes queued behind a write in flight share the next one.
func TestAnswersWaitForTheDisk(t *testing.T) {
	e := newEnv(t, Config{})
	g := &gatedStore{Store: e.store, writes: make(chan func(), 16)}
	svc := NewService(g, e.cfg)
	defer svc.Close(context.Background())
	ctx := context.Background()
	p := plan(t, "{name: p, window_requests: 10, burst_rpm: 5}")
	answered := make(chan string, 8)
	d1, _ := svc.Admit(ctx, AdmitRequest{Account: "acct_l", KeyID: "k", Plan: p, At: e.clk.Now()})
	d2, _ := svc.Admit(ctx, AdmitRequest{Account: "acct_l", KeyID: "k", Plan: p, At: e.clk.Now()})
	go func() {
		svc.Settle(ctx, d1.Reservation, Outcome{Counts: true, Log: e.entry("k", e.clk.Now())})
		answered <- "settle 1"
	}()
	first := <-g.writes // the first settle's write, held "in its fsync"
	go func() {
		svc.Settle(ctx, d2.Reservation, Outcome{Counts: true, Log: e.entry("k", e.clk.Now())})
		answered <- "settle 2"
	}()
	go func() {
		svc.Record(ctx, Unadmitted{Account: "acct_l", KeyID: "k", Log: &persistence.LogEntry{RequestID: "refused", Time: e.clk.Now().UnixNano(), Status: 429}})
		answered <- "refusal"
	}()
	go func() {
		svc.AddCredits(ctx, "acct_l", usdAmount(t, "1"), "t1")
		answered <- "top-up"
	}()
	// The account still admits while its write is in flight.
	if d, err := svc.Admit(ctx, AdmitRequest{Account: "acct_l", KeyID: "k", Plan: p, At: e.clk.Now()}); err != nil || !d.Admitted {
		t.Fatalf("admission during a write: %+v, %v", d, err)
	}
	select {
	case a := <-answered:
		t.Fatalf("%q answered before its write", a)
	case <-time.After(50 * time.Millisecond):
	}
	first()
	if a := <-answered; a != "settle 1" {
		t.Fatalf("answered %q first, want settle 1", a)
	}
	second := <-g.writes // everything queued behind the first write, in one
	select {
	case a := <-answered:
		t.Fatalf("%q answered before its write", a)
	case <-time.After(50 * time.Millisecond):
	}
	second()
	got := map[string]bool{}
	for i := 0; i < 3; i++ {
		got[<-answered] = true
	}
	if !got["settle 2"] || !got["refusal"] || !got["top-up"] {
		t.Fatalf("answered %v after the second write", got)
	}
	select {
	case <-g.writes:
		t.Fatal("a third write: the changes queued during the first did not share one")
	default:
	}
	logs, _ := e.store.ListLog("acct_l", time.Time{}, time.Time{}, 0)
	rec, _, _ := e.store.LoadQuota("acct_l")
	if len(logs) != 3 || rec.WindowUsed != 2000 || rec.Balance != int64(usdAmount(t, "1")) || rec.LogSeq != 3 {
		t.Fatalf("on disk: %d entries, %+v", len(logs), rec)
	}
}

// TestBurstAndThrottleSurviveACrash: after a crash (no Close), the burst
// window holds every counted call of the last minute — rebuilt from their log entries — and a
// throttled key is still throttled: a restart never lets more calls through than the plan.
func TestBurstAndThrottleSurviveACrash(t *testing.T) {
	e := newEnv(t, Config{})
	p := plan(t, "{name: p, burst_rpm: 3, throttle: {min_requests: 2, max_share: 0.01, window: 10m, rpm: 1, duration: 1h}}")
	admitted(t, e.call("acct_b", "k1", p))
	e.clk.Add(10 * time.Second)
	admitted(t, e.call("acct_b", "k1", p)) // k1's second call: throttled from now on
	e.clk.Add(10 * time.Second)
	admitted(t, e.call("acct_b", "k2", p))
	refund := e.admit("acct_b", "k2", p, 0, 0) // a refused (upstream-failed) call leaves no slot
	refused(t, refund, LimitBurst, 40*time.Second)
	e.restart(false)
	e.clk.Add(5 * time.Second)
	refused(t, e.admit("acct_b", "k2", p, 0, 0), LimitBurst, 35*time.Second)
	e.clk.Add(35 * time.Second) // the first call left the window: one slot; k1 is throttled to 1/min
	refused(t, e.admit("acct_b", "k1", p, 0, 0), LimitThrottle, 10*time.Second)
	admitted(t, e.call("acct_b", "k2", p))
	st := e.state("acct_b", p)
	if st.Burst.Remaining != 0 || len(st.Keys) != 2 || !st.Keys[0].ThrottledUntil.Equal(t0.Add(10*time.Second+time.Hour)) {
		t.Fatalf("after the crash: burst %+v, keys %+v", st.Burst, st.Keys)
	}
}

// TestRecordCountsClientErrorsNotRefusals: the counting rule, the quota's part. A client
// error answered without admission counts its units in the plan when they fit, else beyond
// it at no cost, and takes its burst slot even past the limit (never refused); a refusal
// leaves only its entry.
func TestRecordCountsClientErrorsNotRefusals(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	p := plan(t, "{name: p, window_requests: 2, burst_rpm: 2}")
	e.credit("acct_r", "1", "t1")
	rec := func(rid string, counts bool, units int64) {
		t.Helper()
		err := e.svc.Record(ctx, Unadmitted{Account: "acct_r", KeyID: "k", Plan: p, Units: units, Counts: counts,
			Log: &persistence.LogEntry{RequestID: rid, Time: e.clk.Now().UnixNano(), Status: 400}})
		if err != nil {
			t.Fatal(err)
		}
	}
	rec("refusal", false, 0)
	rec("in-plan", true, 1500)
	rec("beyond", true, 1000) // 1.5 + 1 > 2: beyond the plan, free
	rec("past-burst", true, 0)
	st := e.state("acct_r", p)
	if st.Window.Used != 1500 || st.Balance != usdAmount(t, "1") || st.Burst.Remaining != 0 {
		t.Fatalf("state = window %+v, balance %s, burst %+v", st.Window, st.Balance, st.Burst)
	}
	refused(t, e.admit("acct_r", "k", p, 0, 0), LimitBurst, time.Minute)
	logs, _ := e.store.ListLog("acct_r", time.Time{}, time.Time{}, 0)
	type view struct {
		rid     string
		counted bool
		units   int64
		cost    int64
	}
	var got []view
	for _, l := range logs {
		got = append(got, view{l.RequestID, l.Counted, l.AllowanceUnits, l.Cost})
	}
	want := []view{{"refusal", false, 0, 0}, {"in-plan", true, 1500, 0}, {"beyond", true, 0, 0}, {"past-burst", true, 0, 0}}
	if len(got) != len(want) {
		t.Fatalf("log = %+v", got)
	}
	for _, w := range want { // the entries share one time: their order in the log is by id
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Fatalf("log = %+v, missing %+v", got, w)
		}
	}
}

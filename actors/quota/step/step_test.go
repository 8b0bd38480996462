package step

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

// The burst is a true sliding 60 s window: a refusal's Retry-After is exactly when the
// oldest slot leaves it, and the budget's Reset is when the oldest call in it does.
func TestAdmitBurstSlidesExactly(t *testing.T) {
	p := plan(t, "{name: p, burst_rpm: 3}")
	steps := []struct {
		at        int64
		admit     bool
		retry     int64
		remaining int64
		reset     int64
	}{
		{0, true, 0, 2, 60 * sec},
		{10 * sec, true, 0, 1, 60 * sec},
		{20 * sec, true, 0, 0, 60 * sec},
		{30 * sec, false, 30 * sec, 0, 60 * sec},
		{59*sec + 999*int64(time.Millisecond), false, int64(time.Millisecond), 0, 60 * sec},
		{60 * sec, true, 0, 0, 70 * sec},
		{60 * sec, false, 10 * sec, 0, 70 * sec},
		{70 * sec, true, 0, 0, 80 * sec},
		{141 * sec, true, 0, 2, 201 * sec},
	}
	var a Account
	for i, s := range steps {
		r := callAt(&a, p, "k", t0+s.at)
		if r.Admitted != s.admit || r.RetryAfter != s.retry || r.Burst != (Budget{3, s.remaining, t0 + s.reset}) || r.MaxRPM != 3 {
			t.Fatalf("step %d at +%ds: %+v", i, s.at/sec, r)
		}
		if !s.admit && r.Refused != LimitBurst {
			t.Fatalf("step %d refused by %q", i, r.Refused)
		}
	}
}

// Per-key burst: another key has its own budget; account-wide: it shares it.
func TestAdmitBurstScope(t *testing.T) {
	for _, c := range []struct {
		entry string
		other bool
	}{{"{name: p, burst_rpm: 2}", false}, {"{name: p, burst_rpm: 2, burst_scope: key}", true}} {
		p := plan(t, c.entry)
		var a Account
		callAt(&a, p, "a", t0)
		callAt(&a, p, "a", t0)
		if r := admitAt(&a, p, "a", t0); r.Refused != LimitBurst || r.RetryAfter != 60*sec {
			t.Fatalf("%s: third call of a = %+v", c.entry, r)
		}
		if r := admitAt(&a, p, "b", t0); r.Admitted != c.other {
			t.Fatalf("%s: key b admitted = %v, want %v", c.entry, r.Admitted, c.other)
		}
	}
}

// Window, weekly and credits: which limit refuses, when it resets, and what a paid call holds.
func TestAdmitAllowanceAndCredits(t *testing.T) {
	usd := func(s string) money.Amount { m, _ := money.Parse(s); return m }
	monday := time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC).Unix()
	sixteen := time.Date(2026, 3, 4, 16, 0, 0, 0, time.UTC).Unix() // 5 h windows from 1970-01-01: ... 11:00, 16:00
	cases := []struct {
		name     string
		entry    string
		balance  string
		est      string
		now      int64
		refused  Limit
		resetsAt int64 // unix s
		paid     bool
	}{
		{"window used, no credit", "{name: p, window_requests: 1}", "0", "0", t0, LimitWindow, sixteen, false},
		{"weekly used, no credit", "{name: p, weekly_requests: 1}", "0", "0", t0, LimitWeekly, monday, false},
		{"both used: the week resets later", "{name: p, window_requests: 1, weekly_requests: 1, window: 1h}", "0", "0", (monday - 3602) * 1e9, LimitWeekly, monday, false},
		{"both used: the window resets later", "{name: p, window_requests: 1, weekly_requests: 1}", "0", "0", (monday - 2) * 1e9, LimitWindow, monday + 3600, false},
		{"both used, same reset: the window", "{name: p, window_requests: 1, weekly_requests: 1, window: 24h}", "0", "0", (monday - 2) * 1e9, LimitWindow, monday, false},
		{"credits below the estimate", "{name: p, window_requests: 1}", "1", "2", t0, LimitCredits, sixteen, false},
		{"credits cover the estimate", "{name: p, window_requests: 1}", "2", "2", t0, "", 0, true},
		{"overdraft covers it", "{name: p, window_requests: 1, overdraft_usd: '3'}", "0", "2", t0, "", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := plan(t, c.entry)
			a := Account{}
			a.Rec.Balance = int64(usd(c.balance))
			if r := callAt(&a, p, "k", c.now); !r.Admitted || r.Paid {
				t.Fatalf("first call: %+v", r)
			}
			r := Apply(&a, &Command{Kind: Admit, Now: c.now, Plan: p, Key: "k", Amount: usd(c.est)})
			if r.Refused != c.refused || r.Admitted != (c.refused == "") || r.Paid != c.paid || r.ResetsAt != c.resetsAt {
				t.Fatalf("second call: %+v", r)
			}
			if c.refused != "" && r.RetryAfter != c.resetsAt*1e9-c.now {
				t.Fatalf("retry after %v, want until %d", time.Duration(r.RetryAfter), c.resetsAt)
			}
			if c.paid && a.Held != usd(c.est) {
				t.Fatalf("held %s, want %s", a.Held, c.est)
			}
		})
	}
}

// A paid call is charged its cost down to the overdraft floor; an in-plan call counts its
// units; a refunded call counts nothing, frees its burst slot, and its log says so.
func TestSettle(t *testing.T) {
	cases := []struct {
		name              string
		entry             string
		balance, cost     int64
		counts            bool
		charged, balance2 int64
		used              int64
		logUnits          int64
		reserve, settle   int64 // the admission's units and the settle's (0: the default)
	}{
		{"in plan", "{name: p, window_requests: 5, burst_rpm: 1}", 100, 40, true, 0, 100, 1000, 1000, 0, 0},
		{"paid", "{name: p, window_requests: 0, weekly_requests: 1, burst_rpm: 1}", 100, 40, true, 40, 60, 0, 0, 0, 0},
		{"paid, to the floor", "{name: p, weekly_requests: 1, burst_rpm: 1}", 100, 400, true, 150, -50, 0, 0, 0, 0},
		{"refunded", "{name: p, window_requests: 5, burst_rpm: 1}", 100, 40, false, 0, 100, 0, 0, 0, 0},
		// A fallback list reserves its dearest model's units; the model that served counts.
		{"in plan, the served model counts less", "{name: p, window_requests: 5, burst_rpm: 1}", 100, 40, true, 0, 100, 1000, 1000, 3000, 1000},
		{"in plan, never more than reserved", "{name: p, window_requests: 5, burst_rpm: 1}", 100, 40, true, 0, 100, 3000, 3000, 3000, 5000},
		{"refunded, whatever the settle counts", "{name: p, window_requests: 5, burst_rpm: 1}", 100, 40, false, 0, 100, 0, 0, 3000, 1000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := plan(t, c.entry)
			p.Overdraft = 50
			var a Account
			a.Rec.Balance = c.balance
			if strings.HasPrefix(c.name, "paid") { // use the weekly allowance first
				a.Rec.WeekStart, a.Rec.WeekUsed = weekStart(t0/sec), 1000
			}
			d := Apply(&a, &Command{Kind: Admit, Now: t0, Plan: p, Key: "k", Units: c.reserve})
			if !d.Admitted {
				t.Fatalf("admit: %+v", d)
			}
			log := &persistence.LogEntry{RequestID: "r1", Time: t0, Status: 200}
			r := Apply(&a, &Command{Kind: Settle, Now: t0 + sec, ID: d.ID, Counts: c.counts, Amount: money.Amount(c.cost), Log: log, Units: c.settle})
			if r.Fail != OK || int64(r.Charged) != c.charged || int64(r.Balance) != c.balance2 || a.Rec.Balance != c.balance2 || a.Rec.WindowUsed != c.used {
				t.Fatalf("settle: %+v, record %+v", r, a.Rec)
			}
			if r.Log == nil || r.Log.KeyID != "k" || r.Log.Cost != c.charged || r.Log.Counted != c.counts || r.Log.AllowanceUnits != c.logUnits || r.Log.Seq != 1 || log.Seq != 0 {
				t.Fatalf("log entry %+v (command's %+v)", r.Log, log)
			}
			if a.Held != 0 || a.WinReserved != 0 || len(a.Calls) != 0 {
				t.Fatalf("reservations left: held %d, window %d, calls %d", a.Held, a.WinReserved, len(a.Calls))
			}
			if next := admitAt(&a, p, "k", t0+2*sec); next.Admitted == c.counts {
				t.Fatalf("next call admitted %v: the burst slot is %v", next.Admitted, c.counts)
			}
			if r := Apply(&a, &Command{Kind: Settle, Now: t0, ID: d.ID, Counts: true}); r.Fail != UnknownReservation {
				t.Fatalf("second settle: %+v", r)
			}
		})
	}
}

// The throttle: a key reaching the trigger is capped at the throttle's rpm for its
// duration (other keys are not), and it lifts exactly when it ends.
func TestThrottleTriggersAndLifts(t *testing.T) {
	p := plan(t, "{name: p, burst_rpm: 10, throttle: {window: 10m, max_share: 0.5, min_requests: 1, rpm: 2, duration: 5m}}")
	if p.Throttle.Trigger != 50 || p.Throttle.Width != 30*sec {
		t.Fatalf("throttle = %+v", p.Throttle)
	}
	var a Account
	for i := range int64(49) {
		if r := callAt(&a, p, "hot", t0+i*12*sec); !r.Admitted || r.KeyChanged != "hot" {
			t.Fatalf("call %d: %+v", i, r)
		}
	}
	if r := callAt(&a, p, "hot", t0+588*sec); !r.Admitted || r.MaxRPM != 2 || a.findKey("hot").ThrottledUntil != t0+888*sec || a.findKey("hot").Epoch != 1 {
		t.Fatalf("the 50th call: %+v, key %+v", r, a.findKey("hot"))
	}
	steps := []struct {
		key   string
		at    int64
		admit bool
		retry int64
	}{
		{"hot", 600, false, 36 * sec}, // calls at 576 s and 588 s fill the cap of 2
		{"calm", 600, true, 0},
		{"hot", 636, true, 0},
		{"hot", 636, false, 12 * sec},
		{"hot", 887, true, 0},
		{"hot", 887, true, 0},
		{"hot", 887, false, 60 * sec},
		{"hot", 888, true, 0}, // the throttle ends: back to the burst of 10
	}
	for i, s := range steps {
		r := callAt(&a, p, s.key, t0+s.at*sec)
		if r.Admitted != s.admit || r.RetryAfter != s.retry || !s.admit && r.Refused != LimitThrottle {
			t.Fatalf("step %d (%s at %d s): %+v", i, s.key, s.at, r)
		}
	}
	if r := admitAt(&a, p, "hot", t0+888*sec); r.MaxRPM != 10 || r.Burst.Remaining != 6 {
		t.Fatalf("after the throttle: %+v", r)
	}
}

// Top-ups and charges apply once per key: the caller attaches the key's earlier grant.
func TestCreditsAndChargesOncePerKey(t *testing.T) {
	top := &persistence.CreditGrant{Amount: 500, Balance: 500}
	chg := &persistence.CreditGrant{Amount: -30, Balance: 470}
	cases := []struct {
		name    string
		balance int64
		cmd     Command
		want    Result
		after   int64
	}{
		{"top-up", 100, Command{Kind: AddCredits, Key: "t1", Amount: 500}, Result{Balance: 600, Added: true, Dirty: true,
			Grant: persistence.GrantWrite{Key: "t1", Grant: persistence.CreditGrant{Amount: 500, At: t0 / sec, Balance: 600}}}, 600},
		{"top-up repeated", 100, Command{Kind: AddCredits, Key: "t1", Amount: 500, Prior: top}, Result{Balance: 100, Repeat: true}, 100},
		{"top-up, other amount", 100, Command{Kind: AddCredits, Key: "t1", Amount: 400, Prior: top}, Result{Fail: IdempotencyConflict, Balance: 100}, 100},
		{"top-up overflows", math.MaxInt64 - 10, Command{Kind: AddCredits, Key: "t1", Amount: 11}, Result{Fail: Overflow, Balance: math.MaxInt64 - 10}, math.MaxInt64 - 10},
		{"charge", 100, Command{Kind: Charge, Key: "charge/v1", Amount: 30}, Result{Counted: true, Paid: true, Charged: 30, Balance: 70, Dirty: true,
			Grant: persistence.GrantWrite{Key: "charge/v1", Grant: persistence.CreditGrant{Amount: -30, At: t0 / sec, Balance: 70}}}, 70},
		{"charge to the overdraft floor", 10, Command{Kind: Charge, Plan: Plan{Overdraft: 5}, Key: "charge/v1", Amount: 30}, Result{Counted: true, Paid: true, Charged: 15, Balance: -5, Dirty: true,
			Grant: persistence.GrantWrite{Key: "charge/v1", Grant: persistence.CreditGrant{Amount: -15, At: t0 / sec, Balance: -5}}}, -5},
		{"charge repeated", 100, Command{Kind: Charge, Key: "charge/v1", Amount: 99, Prior: chg}, Result{Counted: true, Paid: true, Charged: 30, Balance: 100, Repeat: true}, 100},
		{"charge under a top-up's key", 100, Command{Kind: Charge, Key: "charge/v1", Amount: 30, Prior: top}, Result{Fail: IdempotencyConflict}, 100},
		{"reversal below zero (a refund after spending)", 100, Command{Kind: Reverse, Key: "r1", Amount: 500}, Result{Balance: -400, Added: true, Dirty: true,
			Grant: persistence.GrantWrite{Key: "r1", Grant: persistence.CreditGrant{Amount: -500, At: t0 / sec, Balance: -400}}}, -400},
		{"reversal repeated", -400, Command{Kind: Reverse, Key: "r1", Amount: 500, Prior: &persistence.CreditGrant{Amount: -500, Balance: -400}}, Result{Balance: -400, Repeat: true}, -400},
		{"reversal under a top-up's key", 100, Command{Kind: Reverse, Key: "t1", Amount: 500, Prior: top}, Result{Fail: IdempotencyConflict, Balance: 100}, 100},
		{"reversal of nothing", 100, Command{Kind: Reverse, Key: "r1"}, Result{Fail: Invalid, Balance: 100}, 100},
		{"reversal overflows", math.MinInt64 + 10, Command{Kind: Reverse, Key: "r1", Amount: 11}, Result{Fail: Overflow, Balance: math.MinInt64 + 10}, math.MinInt64 + 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := Account{Rec: persistence.QuotaRecord{Balance: c.balance}}
			c.cmd.Now = t0
			if r := Apply(&a, &c.cmd); !equalResults(r, c.want) || a.Rec.Balance != c.after {
				t.Fatalf("result %+v, balance %d; want %+v, %d", r, a.Rec.Balance, c.want, c.after)
			}
		})
	}
}

func equalResults(a, b Result) bool {
	x, _ := a.Encode()
	y, _ := b.Encode()
	return string(x) == string(y)
}

// A hold takes over the paid estimate of the call that starts the work, is refused when
// the credits do not cover it, and a charge from it is at most what it holds.
func TestHoldAndChargeFromHold(t *testing.T) {
	p := plan(t, "{name: p, weekly_requests: 1}")
	a := Account{Rec: persistence.QuotaRecord{Balance: 100, WeekStart: weekStart(t0 / sec), WeekUsed: 1000}}
	d := Apply(&a, &Command{Kind: Admit, Now: t0, Plan: p, Key: "k", Amount: 30})
	if !d.Paid || a.Held != 30 {
		t.Fatalf("admit: %+v, held %d", d, a.Held)
	}
	if r := Apply(&a, &Command{Kind: Hold, Now: t0, Plan: p, Key: "video/1", ID: d.ID, Amount: 101}); r.Admitted || r.Refused != LimitCredits {
		t.Fatalf("hold beyond the credits: %+v", r)
	}
	r := Apply(&a, &Command{Kind: Hold, Now: t0, Plan: p, Key: "video/1", ID: d.ID, Amount: 80})
	if !r.Admitted || r.Moved != 30 || a.Held != 80 || a.Calls[0].Hold != 0 || len(a.Rec.Holds) != 1 {
		t.Fatalf("hold: %+v, held %d, call %+v", r, a.Held, a.Calls[0])
	}
	if r := Apply(&a, &Command{Kind: Hold, Now: t0, Plan: p, Key: "video/1", Amount: 80}); !r.Admitted || !r.Repeat || a.Held != 80 {
		t.Fatalf("hold repeated: %+v, held %d", r, a.Held)
	}
	Apply(&a, &Command{Kind: Settle, Now: t0, ID: d.ID, Counts: true})
	r = Apply(&a, &Command{Kind: Charge, Now: t0, Key: ChargeKeyPrefix + "video/1", Amount: 95, FromHold: true})
	if r.Charged != 80 || a.Rec.Balance != 20 || a.Held != 0 || len(a.Rec.Holds) != 0 {
		t.Fatalf("charge from the hold: %+v, balance %d, held %d", r, a.Rec.Balance, a.Held)
	}
	if r := Apply(&a, &Command{Kind: ReleaseHold, Now: t0, Key: "video/1"}); r.Dirty {
		t.Fatalf("release of a settled hold: %+v", r)
	}
}

// Daily media: reserved up to the limit, refused until 00:00 UTC, a commit counts today,
// and a reservation of an earlier day commits to nothing.
func TestMedia(t *testing.T) {
	p := plan(t, "{name: p, image_daily_limit: 3}")
	midnight := time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC).Unix()
	var a Account
	r1 := Apply(&a, &Command{Kind: MediaReserve, Now: t0, Plan: p, Media: persistence.MediaImages, N: 2})
	if !r1.Admitted || r1.Daily != (Counter{Used: 0, Reserved: 2, Limit: 3, ResetsAt: midnight}) {
		t.Fatalf("reserve: %+v", r1)
	}
	r2 := Apply(&a, &Command{Kind: MediaReserve, Now: t0, Plan: p, Media: persistence.MediaImages, N: 2})
	if r2.Admitted || r2.Refused != LimitImages || r2.ResetsAt != midnight || r2.RetryAfter != midnight*1e9-t0 {
		t.Fatalf("over the limit: %+v", r2)
	}
	if r := Apply(&a, &Command{Kind: MediaCommit, Now: t0, Media: persistence.MediaImages, ID: r1.ID, N: 1}); r.Fail != OK || a.Rec.Images != 1 {
		t.Fatalf("commit: %+v, images %d", r, a.Rec.Images)
	}
	if r := Apply(&a, &Command{Kind: MediaRelease, Now: t0, Media: persistence.MediaImages, ID: r1.ID}); r.Fail != UnknownReservation {
		t.Fatalf("release after commit: %+v", r)
	}
	r3 := Apply(&a, &Command{Kind: MediaReserve, Now: t0, Plan: p, Media: persistence.MediaVideo, N: 9})
	if !r3.Admitted || r3.ID != r1.ID+1 {
		t.Fatalf("video (unlimited): %+v", r3)
	}
	if r := Apply(&a, &Command{Kind: MediaCommit, Now: midnight * 1e9, Media: persistence.MediaVideo, ID: r3.ID, N: 9}); r.Fail != OK || a.Rec.Video != 0 || a.Rec.Day != midnight {
		t.Fatalf("commit on the next day: %+v, record %+v", r, a.Rec)
	}
}

// Expire releases calls past their TTL and forgets idle keys, listing those with stored state.
func TestExpire(t *testing.T) {
	p := plan(t, "{name: p, window_requests: 10, burst_rpm: 5, throttle: {rpm: 2, min_requests: 1}}")
	var a Account
	d := Apply(&a, &Command{Kind: Admit, Now: t0, Plan: p, Key: "k", TTL: 30 * sec})
	callAt(&a, p, "j", t0)
	if r := Apply(&a, &Command{Kind: Expire, Now: t0 + 29*sec}); len(r.Expired) != 0 || a.WinReserved != 1000 {
		t.Fatalf("before the TTL: %+v", r)
	}
	r := Apply(&a, &Command{Kind: Expire, Now: t0 + 30*sec})
	if len(r.Expired) != 1 || r.Expired[0] != d.ID || a.WinReserved != 0 || len(a.Calls) != 0 || len(r.Forgotten) != 0 {
		t.Fatalf("at the TTL: %+v, window reserved %d", r, a.WinReserved)
	}
	r = Apply(&a, &Command{Kind: Expire, Now: t0 + 3600*sec})
	if len(r.Forgotten) != 2 || r.Forgotten[0] != "j" || r.Forgotten[1] != "k" || len(a.Keys) != 0 {
		t.Fatalf("an hour later: %+v, keys %v", r, a.Keys)
	}
}

// An image reservation a call never ended (its node died mid-call) expires with its TTL and
// stops counting against the day; a video's (no TTL: its task resumes) stays.
func TestExpireEndsOrphanImageReservations(t *testing.T) {
	p := plan(t, "{name: p, image_daily_limit: 4, video_daily_seconds: 100}")
	var a Account
	img := Apply(&a, &Command{Kind: MediaReserve, Now: t0, Plan: p, Media: persistence.MediaImages, N: 3, TTL: 60 * sec})
	vid := Apply(&a, &Command{Kind: MediaReserve, Now: t0, Plan: p, Media: persistence.MediaVideo, N: 40, TTL: 60 * sec})
	if !img.Admitted || !vid.Admitted {
		t.Fatalf("reservations: %+v %+v", img, vid)
	}
	if r := Apply(&a, &Command{Kind: MediaReserve, Now: t0 + 59*sec, Plan: p, Media: persistence.MediaImages, N: 2}); r.Admitted {
		t.Fatalf("before the TTL the 3 held images count: %+v", r)
	}
	if r := Apply(&a, &Command{Kind: Expire, Now: t0 + 60*sec}); !r.Dirty || len(a.Rec.Media) != 1 || a.Rec.Media[0].ID != vid.ID {
		t.Fatalf("at the TTL: %+v, holds %+v", r, a.Rec.Media)
	}
	if r := Apply(&a, &Command{Kind: MediaReserve, Now: t0 + 61*sec, Plan: p, Media: persistence.MediaImages, N: 4}); !r.Admitted || r.Daily.Reserved != 4 {
		t.Fatalf("after the expiry the day's 4 images are free again: %+v", r)
	}
	if r := Apply(&a, &Command{Kind: MediaCommit, Now: t0 + 62*sec, Media: persistence.MediaImages, ID: img.ID, N: 3}); r.Fail != UnknownReservation {
		t.Fatalf("committing an expired reservation: %+v", r)
	}
}

// Time never goes back within an account: a command stamped earlier than the last one is
// applied at the last one's time.
func TestClockNeverGoesBack(t *testing.T) {
	p := plan(t, "{name: p, burst_rpm: 1}")
	var a Account
	callAt(&a, p, "k", t0+30*sec)
	r := admitAt(&a, p, "k", t0)
	if r.Refused != LimitBurst || r.RetryAfter != 60*sec || a.Last != t0+30*sec {
		t.Fatalf("a command from the past: %+v, last %d", r, a.Last)
	}
}

// The admin view: counters, reservations and the keys with recent calls, in key order.
func TestView(t *testing.T) {
	p := plan(t, "{name: p, window_requests: 10, weekly_requests: 20, burst_rpm: 5, image_daily_limit: 4}")
	var a Account
	callAt(&a, p, "kb", t0)
	admitAt(&a, p, "ka", t0+sec)
	r := Apply(&a, &Command{Kind: View, Now: t0 + 2*sec, Plan: p})
	v := r.View
	if v == nil || v.InFlight != 1 || v.Window.Used != 1000 || v.Window.Reserved != 1000 || v.Window.Limit != 10000 ||
		v.Weekly.Limit != 20000 || v.Burst != (Budget{5, 3, t0 + 60*sec}) || v.Images.Limit != 4 || len(v.Keys) != 2 || v.Keys[0].KeyID != "ka" || v.Keys[1].KeyID != "kb" {
		t.Fatalf("view = %+v", v)
	}
}

// A malformed command changes nothing.
func TestInvalidCommands(t *testing.T) {
	for _, c := range []Command{{}, {Kind: maxKind, Now: t0}, {Kind: Admit, Now: -1}, {Kind: Settle, Now: t0, Amount: -1}, {Kind: Record, Now: t0},
		{Kind: MediaReserve, Now: t0, Media: "audio", N: 1}, {Kind: AddCredits, Now: t0, Key: "k"}} {
		var a Account
		before, _ := a.Encode()
		if r := Apply(&a, &c); r.Fail != Invalid {
			t.Fatalf("%+v: %+v", c, r)
		}
		if after, _ := a.Encode(); string(after) != string(before) && c.Kind != Record && c.Kind != MediaReserve && c.Kind != AddCredits {
			t.Fatalf("%+v changed the account", c)
		}
	}
}

// An admission allocates at most 2 objects (the single node's hot path).
func TestAdmitAllocations(t *testing.T) {
	p := plan(t, "{name: p, window_requests: 1000000000, weekly_requests: 1000000000, throttle: {rpm: 10, min_requests: 1000000000000}}")
	var a Account
	now := t0
	allocs := testing.AllocsPerRun(1000, func() {
		now += int64(time.Millisecond)
		r := admitAt(&a, p, "k", now)
		Apply(&a, &Command{Kind: Settle, Now: now, ID: r.ID})
	})
	if allocs > 2 {
		t.Fatalf("%.1f allocations per admit and refund, want at most 2", allocs)
	}
}

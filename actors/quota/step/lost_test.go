package step

import (
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/internal/bincode"
)

// An admission carrying its proposer's reservation id (Res) keeps Calls in id order, and
// the same admission applied again answers the same and reserves nothing more.
func TestAnAdmissionWithItsOwnReservationIDIsIdempotent(t *testing.T) {
	p := plan(t, "{name: p, window_requests: 10}")
	var a Account
	ids := []uint64{1<<63 | 7, 1<<63 | 3, 1<<63 | 7, 1<<63 | 5}
	wantAdmitted := []bool{true, true, true, true}
	for i, id := range ids {
		r := Apply(&a, &Command{Kind: Admit, Now: t0, Plan: p, Key: "k", TTL: int64(time.Hour), Res: id})
		if r.Admitted != wantAdmitted[i] || r.ID != id {
			t.Fatalf("admission %d (res %x) = %+v", i, id, r)
		}
	}
	var got []uint64
	for _, c := range a.Calls {
		got = append(got, c.ID)
	}
	want := []uint64{1<<63 | 3, 1<<63 | 5, 1<<63 | 7}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("calls %x, want %x", got, want)
	}
	if a.WinReserved != 3000 || a.NextID != 0 {
		t.Fatalf("reserved %d units, next id %d; want 3000 and 0", a.WinReserved, a.NextID)
	}
	if r := Apply(&a, &Command{Kind: Settle, Now: t0, ID: 1<<63 | 5, Counts: true}); r.Fail != OK || !r.Counted {
		t.Fatalf("settle of a proposer's id = %+v", r)
	}
}

// A settle whose reservation is unknown bills the call when it is Late, by the admission's
// rule (in the plan when it fits, else from credits down to the floor), and fails
// otherwise; a late settle that does not count bills nothing.
func TestALateSettleBillsACallWhoseReservationWasLost(t *testing.T) {
	usd := func(s string) money.Amount { m, _ := money.Parse(s); return m }
	cases := []struct {
		name      string
		entry     string
		balance   string
		late      bool
		counts    bool
		cost      string
		fail      Failure
		paid      bool
		charged   string
		windowUse int64
		balAfter  string
		weekFull  bool // the week's allowance is used up first
	}{
		{"in plan", "{name: p, window_requests: 5}", "1", true, true, "0.50", OK, false, "0", 1000, "1", false},
		{"beyond the plan, paid", "{name: p, window_requests: 0, weekly_requests: 1}", "1", true, true, "0.30", OK, true, "0.30", 0, "0.70", true},
		{"beyond the plan, down to the floor", "{name: p, window_requests: 0, weekly_requests: 1}", "0.10", true, true, "0.30", OK, true, "0.10", 0, "0", true},
		{"not counted", "{name: p, window_requests: 5}", "1", true, false, "0.50", OK, false, "0", 0, "1", false},
		{"not late", "{name: p, window_requests: 5}", "1", false, true, "0.50", UnknownReservation, false, "0", 0, "1", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := plan(t, c.entry)
			var a Account
			if r := Apply(&a, &Command{Kind: AddCredits, Now: t0, Key: "top", Amount: usd(c.balance)}); !r.Added {
				t.Fatalf("top-up: %+v", r)
			}
			if c.weekFull {
				callAt(&a, p, "k", t0)
			}
			used := a.Rec.WindowUsed
			r := Apply(&a, &Command{Kind: Settle, Now: t0, ID: 1<<63 | 9, Counts: c.counts, Amount: usd(c.cost),
				Late: c.late, Plan: p, Key: "k", At: t0, Reserved: 1000})
			if r.Fail != c.fail || r.Paid != c.paid || r.Charged != usd(c.charged) || a.Rec.WindowUsed-used != c.windowUse || money.Amount(a.Rec.Balance) != usd(c.balAfter) {
				t.Fatalf("late settle = %+v; window used +%d, balance %s", r, a.Rec.WindowUsed-used, money.Amount(a.Rec.Balance))
			}
			if len(a.Calls) != 0 || a.Held != 0 || a.WinReserved != 0 {
				t.Fatalf("a late settle left calls %v, held %s, reserved %d", a.Calls, a.Held, a.WinReserved)
			}
		})
	}
}

// A command encoded before Res, Late and Reserved existed (ending at Inc) still decodes.
func TestACommandWithoutItsNewerFieldsStillDecodes(t *testing.T) {
	c := Command{Kind: Admit, Now: t0, Key: "k", Node: 2, Inc: 9}
	b := c.AppendBinary(nil)
	w := bincode.Writer{}
	w.Uint(0)
	w.Bool(false)
	w.Int(0)
	old := b[:len(b)-len(w.B)]
	var got Command
	if err := got.Decode(old); err != nil || got.Kind != Admit || got.Key != "k" || got.Node != 2 || got.Inc != 9 {
		t.Fatalf("decode of the older encoding = %+v, %v", got, err)
	}
}

// An admission applied after its Late settle (proposed late by the leader that lost it)
// reserves nothing while its reservation would have lived; the memory of it ends then.
func TestAnAdmissionAppliedAfterItsLateSettleReservesNothing(t *testing.T) {
	p := plan(t, "{name: p, window_requests: 10}")
	var a Account
	const res = 1<<63 | 42
	ttl := int64(time.Hour)
	settle := Apply(&a, &Command{Kind: Settle, Now: t0, ID: res, Counts: true, Late: true, Plan: p, Key: "k", At: t0, TTL: ttl, Reserved: 1000})
	if settle.Fail != OK || !settle.Counted || a.Lost == nil || len(a.Lost.Calls) != 1 {
		t.Fatalf("late settle = %+v, lost %v", settle, a.Lost)
	}
	steps := []struct {
		at       int64
		reserved int64 // WinReserved after the admission
		lost     int   // reservations remembered as lost after it
	}{
		{t0 + sec, 0, 1},          // the lost admission arrives late: nothing reserved
		{t0 + ttl - sec, 0, 1},    // still within its time
		{t0 + ttl + sec, 1000, 0}, // past it: forgotten, and a new admission with the id reserves
	}
	for i, s := range steps {
		b := a
		b.Calls, b.Lost = nil, &LostCalls{Calls: append([]LostCall(nil), a.Lost.Calls...)}
		r := Apply(&b, &Command{Kind: Admit, Now: s.at, Plan: p, Key: "k", TTL: ttl, Res: res})
		if lost := b.Lost; !r.Admitted || r.ID != res || b.WinReserved != s.reserved || (lost != nil) != (s.lost > 0) || lost != nil && len(lost.Calls) != s.lost {
			t.Fatalf("step %d: admission = %+v; reserved %d, lost %v", i, r, b.WinReserved, b.Lost)
		}
	}
}

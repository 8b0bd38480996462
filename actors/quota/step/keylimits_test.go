package step

import (
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

const usd = money.Amount(1_000_000_000_000)

func unixNs(y int, m time.Month, d, h, min, s int) int64 {
	return time.Date(y, m, d, h, min, s, 0, time.UTC).UnixNano()
}

// admitKey admits one call of key k1 with limits l at now, estimated at est.
func admitKey(a *Account, l *persistence.KeyLimits, now int64, est money.Amount) Result {
	return Apply(a, &Command{Kind: Admit, Now: now, Key: "k1", Amount: est, TTL: int64(time.Hour), KeyLimits: l})
}

// A key's budget is spent by its settled calls' real costs and returns at the start of the
// next UTC calendar period: the next day, Monday, the 1st (a month end included), never
// for a total budget. The refusal says when, to the nanosecond.
func TestKeyBudgetRollsAtTheUTCPeriodBoundary(t *testing.T) {
	for _, tc := range []struct {
		name   string
		period string
		spend  int64 // when the budget is spent (unix ns)
		reset  int64 // when it returns (0: never)
	}{
		{"day", persistence.BudgetDay, unixNs(2026, 3, 4, 12, 0, 0), unixNs(2026, 3, 5, 0, 0, 0)},
		{"day at 23:59:59", persistence.BudgetDay, unixNs(2026, 3, 4, 23, 59, 59), unixNs(2026, 3, 5, 0, 0, 0)},
		{"week from a Wednesday", persistence.BudgetWeek, unixNs(2026, 3, 4, 12, 0, 0), unixNs(2026, 3, 9, 0, 0, 0)},
		{"week on a Sunday night", persistence.BudgetWeek, unixNs(2026, 3, 8, 23, 0, 0), unixNs(2026, 3, 9, 0, 0, 0)},
		{"month", persistence.BudgetMonth, unixNs(2026, 3, 4, 12, 0, 0), unixNs(2026, 4, 1, 0, 0, 0)},
		{"month end of January", persistence.BudgetMonth, unixNs(2026, 1, 31, 23, 0, 0), unixNs(2026, 2, 1, 0, 0, 0)},
		{"month end of February", persistence.BudgetMonth, unixNs(2026, 2, 28, 18, 0, 0), unixNs(2026, 3, 1, 0, 0, 0)},
		{"month end of December", persistence.BudgetMonth, unixNs(2026, 12, 31, 23, 59, 0), unixNs(2027, 1, 1, 0, 0, 0)},
		{"total", persistence.BudgetTotal, unixNs(2026, 3, 4, 12, 0, 0), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &persistence.KeyLimits{Budget: usd, Period: tc.period}
			var a Account
			r := admitKey(&a, l, tc.spend, 0)
			if !r.Admitted {
				t.Fatalf("first call refused: %+v", r)
			}
			Apply(&a, &Command{Kind: Settle, Now: tc.spend, ID: r.ID, Counts: true, Amount: usd})
			r = admitKey(&a, l, tc.spend+sec/2, 0)
			wantReset := tc.reset / 1e9
			var wantRetry int64
			if tc.reset != 0 {
				wantRetry = tc.reset - (tc.spend + sec/2)
			}
			if r.Admitted || r.Refused != LimitKeyBudget || r.ResetsAt != wantReset || r.RetryAfter != wantRetry {
				t.Fatalf("spent budget: admitted %v refused %q resets %d retry %d, want key_budget_exhausted resets %d retry %d",
					r.Admitted, r.Refused, r.ResetsAt, r.RetryAfter, wantReset, wantRetry)
			}
			if tc.reset == 0 {
				if r := admitKey(&a, l, tc.spend+400*Day*sec, 0); r.Admitted {
					t.Fatal("a total budget returned after 400 days")
				}
				return
			}
			if r := admitKey(&a, l, tc.reset-1, 0); r.Admitted {
				t.Fatal("admitted 1 ns before the period's end")
			}
			if r := admitKey(&a, l, tc.reset, 0); !r.Admitted {
				t.Fatalf("refused at the new period's start: %+v", r)
			}
			if a.Rec.KeySpend[0].Start != wantReset || a.Rec.KeySpend[0].Spent != 0 {
				t.Fatalf("spend after the roll: %+v", a.Rec.KeySpend[0])
			}
		})
	}
}

// A key's calls in flight hold their estimates against its budget, as paid calls hold the
// account's credits: an admission needs budget - spent - held to cover its own estimate,
// and a settle replaces the hold by the real cost.
func TestKeyBudgetHoldsEstimatesInFlight(t *testing.T) {
	l := &persistence.KeyLimits{Budget: usd, Period: persistence.BudgetDay}
	var a Account
	first := admitKey(&a, l, t0, usd*6/10)
	steps := []struct {
		name  string
		est   money.Amount
		admit bool
	}{
		{"0.5 does not fit beside 0.6 held", usd / 2, false},
		{"0.4 fits exactly", usd * 4 / 10, true},
		{"nothing is left: even a call without estimate waits", 0, false},
	}
	var second Result
	for i, s := range steps {
		r := admitKey(&a, l, t0+int64(i+1)*sec, s.est)
		if r.Admitted != s.admit {
			t.Fatalf("%s: admitted %v (%+v)", s.name, r.Admitted, r)
		}
		if r.Admitted {
			second = r
		} else if r.Refused != LimitKeyBudget {
			t.Fatalf("%s: refused by %q", s.name, r.Refused)
		}
	}
	// The first call costs 0.1: spent 0.1, held 0.4 by the second, so 0.5 is free.
	Apply(&a, &Command{Kind: Settle, Now: t0 + 10*sec, ID: first.ID, Counts: true, Amount: usd / 10})
	v := Apply(&a, &Command{Kind: View, Now: t0 + 10*sec, Key: "k1", KeyLimits: l}).View.Key
	want := KeyLimitsView{Spent: usd / 10, Held: usd * 4 / 10, Remaining: usd / 2, Start: dayStart(t0 / 1e9), ResetsAt: dayStart(t0/1e9) + Day}
	if *v != want {
		t.Fatalf("view %+v, want %+v", *v, want)
	}
	if r := admitKey(&a, l, t0+11*sec, usd/2); !r.Admitted {
		t.Fatalf("0.5 refused with 0.5 free: %+v", r)
	}
	// A refunded call (an upstream failure) spends nothing and gives its hold back.
	Apply(&a, &Command{Kind: Settle, Now: t0 + 12*sec, ID: second.ID, Counts: false, Amount: usd})
	if v := Apply(&a, &Command{Kind: View, Now: t0 + 12*sec, Key: "k1", KeyLimits: l}).View.Key; v.Spent != usd/10 || v.Held != usd/2 {
		t.Fatalf("after a refund: %+v", *v)
	}
}

// A key's own rpm is a sliding 60 s window: the call over it is refused with the exact
// time until the oldest slot leaves, a refunded call gives its slot back.
func TestKeyRPMWindow(t *testing.T) {
	l := &persistence.KeyLimits{RPM: 2}
	var a Account
	for _, at := range []int64{t0, t0 + 10*sec} {
		r := admitKey(&a, l, at, 0)
		if !r.Admitted || r.Burst.Limit != 2 {
			t.Fatalf("call at %d: %+v", at, r)
		}
		Apply(&a, &Command{Kind: Settle, Now: at, ID: r.ID, Counts: true})
	}
	r := admitKey(&a, l, t0+25*sec, 0)
	if r.Admitted || r.Refused != LimitKeyRPM || r.RetryAfter != 35*sec || r.MaxRPM != 2 || r.Burst.Remaining != 0 {
		t.Fatalf("third call: %+v, want key_rpm_exceeded after exactly 35 s", r)
	}
	if r := admitKey(&a, l, t0+60*sec-1, 0); r.Admitted || r.RetryAfter != 1 {
		t.Fatalf("1 ns early: %+v", r)
	}
	r = admitKey(&a, l, t0+60*sec, 0)
	if !r.Admitted {
		t.Fatalf("refused once the first slot left: %+v", r)
	}
	Apply(&a, &Command{Kind: Settle, Now: t0 + 61*sec, ID: r.ID, Counts: false}) // refunded
	if r := admitKey(&a, l, t0+62*sec, 0); !r.Admitted {
		t.Fatalf("a refunded call kept its slot: %+v", r)
	}
	// Another key of the account is not limited by k1's rpm.
	if r := Apply(&a, &Command{Kind: Admit, Now: t0 + 62*sec, Key: "k2", TTL: int64(time.Hour)}); !r.Admitted {
		t.Fatalf("k2 refused: %+v", r)
	}
}

// The step refuses an expired key itself (a key expiring between the key check and the
// admission), from the second it expires.
func TestKeyExpiryRefusesAdmission(t *testing.T) {
	exp := t0/1e9 + 100
	l := &persistence.KeyLimits{ExpiresAt: exp}
	for _, tc := range []struct {
		at    int64
		admit bool
	}{{t0 + 99*sec, true}, {t0 + 100*sec - 1, true}, {t0 + 100*sec, false}, {t0 + 1000*sec, false}} {
		var a Account
		r := admitKey(&a, l, tc.at, 0)
		if r.Admitted != tc.admit || !tc.admit && (r.Refused != LimitKeyExpired || r.ResetsAt != exp) {
			t.Fatalf("at %d: %+v, want admitted %v", tc.at, r, tc.admit)
		}
	}
}

// A key whose budget was removed forgets its spend; the step keeps none for keys without one.
func TestKeyWithoutBudgetKeepsNoSpend(t *testing.T) {
	var a Account
	l := &persistence.KeyLimits{Budget: usd, Period: persistence.BudgetDay}
	r := admitKey(&a, l, t0, 0)
	Apply(&a, &Command{Kind: Settle, Now: t0, ID: r.ID, Counts: true, Amount: usd / 4})
	if len(a.Rec.KeySpend) != 1 || a.Rec.KeySpend[0].Spent != int64(usd/4) {
		t.Fatalf("spend %+v", a.Rec.KeySpend)
	}
	if r := admitKey(&a, nil, t0+sec, 0); !r.Admitted || !r.Dirty || len(a.Rec.KeySpend) != 0 {
		t.Fatalf("after the budget was removed: %+v, spend %+v", r, a.Rec.KeySpend)
	}
}

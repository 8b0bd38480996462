package quota

import (
	"context"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// A credit hold (a video beyond the plan) keeps its credits from other calls until it is
// settled (charged at most what it holds, the rest released) or released, survives a crash, and
// every step repeats harmlessly under its key.
func TestCreditHoldsReserveSettleRelease(t *testing.T) {
	onePerWindow := "{name: one, window_requests: 1}"
	cases := []struct {
		name      string
		plan      string
		topUp     string // "" = none
		paidCall  bool   // a paid admission (estimate = the hold) comes first, and its hold is taken over
		hold      string
		refused   Limit // "" = held
		crash     bool  // a crash between the hold and its end
		end       string
		amount    string // settle's amount
		charged   string
		balance   string
		heldAfter string // held once the hold ended (other calls' holds only)
	}{
		{name: "settled below the hold: the rest is released", plan: onePerWindow, topUp: "1", hold: "0.3", end: "settle", amount: "0.2", charged: "0.2", balance: "0.8", heldAfter: "0"},
		{name: "settled above the hold: capped at it", plan: onePerWindow, topUp: "1", hold: "0.3", end: "settle", amount: "0.5", charged: "0.3", balance: "0.7", heldAfter: "0"},
		{name: "released: nothing charged", plan: onePerWindow, topUp: "1", hold: "0.3", end: "release", charged: "0", balance: "1", heldAfter: "0"},
		{name: "survives a crash, then settled once", plan: onePerWindow, topUp: "1", hold: "0.3", crash: true, end: "settle", amount: "0.3", charged: "0.3", balance: "0.7", heldAfter: "0"},
		{name: "survives a crash, then released", plan: onePerWindow, topUp: "1", hold: "0.3", crash: true, end: "release", charged: "0", balance: "1", heldAfter: "0"},
		{name: "takes over the paid call's estimate", plan: onePerWindow, topUp: "0.3", paidCall: true, hold: "0.3", end: "settle", amount: "0.3", charged: "0.3", balance: "0", heldAfter: "0"},
		{name: "the overdraft covers it", plan: "{name: od, window_requests: 1, overdraft_usd: '0.5'}", hold: "0.3", end: "settle", amount: "0.3", charged: "0.3", balance: "-0.3", heldAfter: "0"},
		{name: "credits short of the hold", plan: onePerWindow, topUp: "0.1", hold: "0.3", refused: LimitCredits, end: "settle", amount: "0.3", charged: "0", balance: "0.1", heldAfter: "0"},
		{name: "no credits at all", plan: onePerWindow, hold: "0.3", refused: LimitWindow, end: "settle", amount: "0.3", charged: "0", balance: "0", heldAfter: "0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			ctx := context.Background()
			acct, p := "acct_h", plan(t, c.plan)
			if c.topUp != "" {
				e.credit(acct, c.topUp, "topup")
			}
			e.call(acct, "k", p) // the window's one call: what follows is beyond the plan
			req := HoldRequest{Account: acct, Plan: p, Key: "video/task_1", Amount: usdAmount(t, c.hold)}
			var call Decision
			if c.paidCall {
				call = e.admit(acct, "k", p, 0, req.Amount)
				if !call.Paid {
					t.Fatalf("the call is not paid: %+v", call)
				}
				req.Call = call.Reservation
			}
			for attempt := 0; attempt < 2; attempt++ { // the same key holds once
				d, err := e.svc.HoldCredits(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if d.Admitted != (c.refused == "") || d.Refused != c.refused {
					t.Fatalf("attempt %d: %+v, want refused %q", attempt, d, c.refused)
				}
				if window := int64(catalog.DefaultWindow / time.Second); c.refused != "" && d.ResetsAt.Unix() != step.PeriodStart(t0.Unix(), 0, window)+window {
					t.Fatalf("refusal resets at %v", d.ResetsAt)
				}
			}
			wantHeld := "0"
			if c.refused == "" {
				wantHeld = c.hold
			}
			if st := e.state(acct, p); st.Held != usdAmount(t, wantHeld) {
				t.Fatalf("held %s after the hold, want %s", st.Held, wantHeld)
			}
			if c.paidCall {
				e.settle(call, Outcome{Counts: true}) // the create call itself costs nothing
			}
			if c.crash {
				e.restart(false)
				if st := e.state(acct, p); st.Held != usdAmount(t, wantHeld) {
					t.Fatalf("held %s after a crash, want %s", st.Held, wantHeld)
				}
			}
			log := &persistence.LogEntry{RequestID: "task_1", Time: t0.UnixNano(), Model: "v1", Status: 200}
			for attempt := 0; attempt < 2; attempt++ { // every end repeats harmlessly
				switch c.end {
				case "settle":
					s, err := e.svc.SettleHold(ctx, acct, p, "video/task_1", usdAmount(t, c.amount), log)
					if err != nil || s.Charged != usdAmount(t, c.charged) || s.Balance != signed(t, c.balance) {
						t.Fatalf("settle %d: %+v, %v", attempt, s, err)
					}
				case "release":
					if err := e.svc.ReleaseHold(ctx, acct, "video/task_1"); err != nil {
						t.Fatal(err)
					}
				}
			}
			e.restart(false)
			st := e.state(acct, p)
			if st.Balance != signed(t, c.balance) || st.Held != usdAmount(t, c.heldAfter) || st.Spent != usdAmount(t, c.charged) {
				t.Fatalf("after: balance %s held %s spent %s; want %s, %s, %s", st.Balance, st.Held, st.Spent, c.balance, c.heldAfter, c.charged)
			}
			logs, _ := e.store.ListLog(acct, time.Time{}, time.Time{}, 0)
			var settled []persistence.LogEntry // the window's call is logged too
			for _, l := range logs {
				if l.RequestID == "task_1" {
					settled = append(settled, l)
				}
			}
			if c.end == "settle" && (len(settled) != 1 || settled[0].Cost != int64(usdAmount(t, c.charged))) {
				t.Fatalf("log %+v", logs)
			}
		})
	}
}

// Work held from the credits keeps them from other calls: a paid call that the balance
// alone would cover is refused while a hold keeps the balance.
func TestCreditHoldKeepsCreditsFromOtherCalls(t *testing.T) {
	e := newEnv(t, Config{})
	p := plan(t, "{name: one, window_requests: 1}")
	e.credit("acct_k", "1", "topup")
	e.call("acct_k", "k", p)
	d, err := e.svc.HoldCredits(context.Background(), HoldRequest{Account: "acct_k", Plan: p, Key: "video/a", Amount: usdAmount(t, "0.8")})
	if err != nil || !d.Admitted {
		t.Fatalf("%+v %v", d, err)
	}
	e.restart(false)
	if d := e.admit("acct_k", "k", p, 0, usdAmount(t, "0.5")); d.Admitted || d.Refused != LimitCredits {
		t.Fatalf("a call the held credits would pay: %+v", d)
	}
	if d := e.admit("acct_k", "k", p, 0, usdAmount(t, "0.2")); !d.Admitted || !d.Paid {
		t.Fatalf("a call the free credits pay: %+v", d)
	}
}

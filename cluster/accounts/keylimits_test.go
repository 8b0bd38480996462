package accounts

import (
	"bytes"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

// A key's own limits in an account shard: the same admissions, refusals and spend as the
// single node's step (the budget held by calls in flight, the settle's real cost, the
// rpm window, the expiry), kept in the shard's state, byte for byte on two replicas, and
// a read of the key's view (Query.Key) that changes nothing.
func TestAccountShardEnforcesKeyLimits(t *testing.T) {
	const usd = money.Amount(1_000_000_000_000)
	budget := &persistence.KeyLimits{Budget: usd, Period: persistence.BudgetDay, RPM: 2}
	expired := &persistence.KeyLimits{ExpiresAt: t0/1e9 - 1}
	s := int64(time.Second)
	cmd := func(id string, c step.Command) Command {
		c.Plan = step.Plan{}
		return Command{ID: id, Account: "acct", Step: c}
	}
	admit := func(id string, now int64, est money.Amount, l *persistence.KeyLimits) Command {
		return cmd(id, step.Command{Kind: step.Admit, Now: now, Key: "k1", Amount: est, TTL: int64(time.Hour), KeyLimits: l})
	}
	log := batch(t,
		admit("a1", t0, usd*6/10, budget),
		admit("a2", t0+s, usd/2, budget), // 0.5 does not fit beside 0.6 held
		cmd("s1", step.Command{Kind: step.Settle, Now: t0 + 2*s, ID: 1, Counts: true, Amount: usd / 10}),
		admit("a3", t0+3*s, usd/2, budget),  // 0.9 left: fits
		admit("a4", t0+4*s, 0, budget),      // the key's third call in a minute
		admit("a5", t0+5*s, 0, expired),     // an expired key
		admit("a6", t0+61*s, usd/2, budget), // 0.4 left: does not fit
	)
	a, _ := newReplica(t, 3)
	b, _ := newReplica(t, 3)
	ra := apply(t, a, entries(1, log))[0]
	rb := apply(t, b, entries(1, log))[0]
	want := []struct {
		admitted bool
		refused  step.Limit
	}{{true, ""}, {false, step.LimitKeyBudget}, {false, ""}, {true, ""}, {false, step.LimitKeyRPM}, {false, step.LimitKeyExpired}, {false, step.LimitKeyBudget}}
	for i, w := range want {
		if i == 2 { // the settle
			if ra[i].Fail != step.OK {
				t.Fatalf("settle: %+v", ra[i])
			}
			continue
		}
		if ra[i].Admitted != w.admitted || ra[i].Refused != w.refused {
			t.Errorf("command %d: admitted %v refused %q, want %v %q", i+1, ra[i].Admitted, ra[i].Refused, w.admitted, w.refused)
		}
	}
	if ra[4].RetryAfter != 56*s {
		t.Errorf("the rpm refusal's Retry-After = %d, want 56 s", ra[4].RetryAfter)
	}
	if !bytes.Equal(snapshot(t, a), snapshot(t, b)) {
		t.Fatal("the replicas' states differ")
	}
	for i := range ra {
		x, _ := ra[i].Encode()
		y, _ := rb[i].Encode()
		if !bytes.Equal(x, y) {
			t.Fatalf("result %d differs between replicas", i+1)
		}
	}
	q, err := (&Query{Account: "acct", Now: t0 + 62*s, Key: "k1", KeyLimits: budget}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, a)
	out, err := a.Lookup(q)
	if err != nil {
		t.Fatal(err)
	}
	var r step.Result
	if err := r.Decode(out); err != nil || r.View == nil || r.View.Key == nil {
		t.Fatalf("lookup: %v %+v", err, r)
	}
	day := t0 / 1e9 / step.Day * step.Day
	if got, want := *r.View.Key, (step.KeyLimitsView{Spent: usd / 10, Held: usd / 2, Remaining: usd * 4 / 10, Start: day, ResetsAt: day + step.Day,
		RPM: step.Budget{Limit: 2, Remaining: 1, Reset: t0 + 63*s}}); got != want {
		t.Fatalf("key view %+v, want %+v", got, want)
	}
	if !bytes.Equal(before, snapshot(t, a)) {
		t.Fatal("the key view changed the state")
	}
}

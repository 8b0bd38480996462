package step

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

// detPlans are the plans a random log draws from: burst (account-wide and per key), window,
// weekly, throttle, overdraft and media limits, alone and together.
var detPlans = []string{
	"{name: p, window_requests: 5, weekly_requests: 12, burst_rpm: 4, image_daily_limit: 3, video_daily_seconds: 40, overdraft_usd: '0.5'}",
	"{name: p, window_requests: 3, window: 1h, burst_rpm: 3, burst_scope: key, throttle: {window: 2m, max_share: 0.5, min_requests: 1, rpm: 1, duration: 1m}}",
	"{name: p, weekly_requests: 4, burst_rpm: 6, throttle: {window: 5m, max_share: 0.2, min_requests: 3, rpm: 2, duration: 3m}, image_daily_limit: 1}",
	"{name: p}",
}

// replica is one instance applying the log; roundtrip ones go through Encode/Decode before
// every command, as a replica restarting from disk would.
type replica struct {
	acct      Account
	roundtrip bool
}

// logGen draws a command log over a few accounts and keys, with the store's part (grants
// by key) kept per account from the results, as a caller does.
type logGen struct {
	r      *rand.Rand
	plans  []Plan
	now    int64
	grants []map[string]persistence.CreditGrant
	seq    int
}

func newLogGen(t testing.TB, seed uint64, accounts int) *logGen {
	g := &logGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), now: t0}
	for _, e := range detPlans {
		g.plans = append(g.plans, plan(t, e))
	}
	for range accounts {
		g.grants = append(g.grants, map[string]persistence.CreditGrant{})
	}
	return g
}

// next is the next command for account i, whose current state is a.
func (g *logGen) next(i int, a *Account) Command {
	r := g.r
	switch n := r.IntN(100); {
	case n < 3: // a step back, as a proposer with a slower clock
		g.now -= r.Int64N(int64(90 * time.Second))
	case n < 6: // a long pause: windows, weeks and days roll
		g.now += r.Int64N(int64(30 * time.Hour))
	default:
		g.now += r.Int64N(int64(20 * time.Second))
	}
	g.seq++
	keys := []string{"k1", "k2", "k3"}
	c := Command{Now: g.now, Plan: g.plans[r.IntN(len(g.plans))], Key: keys[r.IntN(len(keys))]}
	log := &persistence.LogEntry{RequestID: fmt.Sprintf("req_%d", g.seq), Time: g.now - r.Int64N(int64(2*time.Second)), Status: 200}
	pick := func() uint64 { // an id in flight, or now and then one that is not
		if len(a.Calls) > 0 && r.IntN(8) > 0 {
			return a.Calls[r.IntN(len(a.Calls))].ID
		}
		return a.NextID + uint64(r.IntN(3))
	}
	switch k := r.IntN(100); {
	case k < 35:
		c.Kind, c.Units, c.Amount, c.At, c.TTL = Admit, int64(r.IntN(3))*500, money.Amount(r.Int64N(300_000_000_000)), c.Now-r.Int64N(int64(time.Second)), int64(time.Duration(1+r.IntN(120))*time.Second)
	case k < 60:
		c.Kind, c.ID, c.Counts, c.Amount = Settle, pick(), r.IntN(4) > 0, money.Amount(r.Int64N(400_000_000_000))
		if r.IntN(2) == 0 {
			c.Log = log
		}
		if len(a.Rec.Media) > 0 && r.IntN(4) == 0 {
			m := a.Rec.Media[r.IntN(len(a.Rec.Media))]
			c.Media, c.MediaID, c.N = m.Kind, m.ID, r.Int64N(m.Amount+1)
		}
	case k < 66:
		c.Kind, c.Counts, c.Units, c.Log = Record, r.IntN(2) == 0, 1000, log
	case k < 71:
		c.Kind, c.Key, c.Amount = AddCredits, fmt.Sprintf("t%d", r.IntN(6)), money.Amount(1+r.Int64N(2))*500_000_000_000
	case k < 76:
		c.Kind, c.Key, c.Amount, c.FromHold = Charge, ChargeKeyPrefix+fmt.Sprintf("v%d", r.IntN(6)), money.Amount(r.Int64N(400_000_000_000)), r.IntN(2) == 0
		if r.IntN(2) == 0 {
			c.Log = log
		}
	case k < 80:
		c.Kind, c.Key, c.ID, c.Amount = Hold, fmt.Sprintf("v%d", r.IntN(6)), pick(), money.Amount(1+r.Int64N(300_000_000_000))
	case k < 82:
		c.Kind, c.Key = ReleaseHold, fmt.Sprintf("v%d", r.IntN(6))
	case k < 88:
		c.Kind, c.Media, c.N = MediaReserve, []string{persistence.MediaImages, persistence.MediaVideo}[r.IntN(2)], 1+r.Int64N(20)
	case k < 93:
		c.Kind, c.N = []Kind{MediaCommit, MediaRelease}[r.IntN(2)], r.Int64N(20)
		c.Media, c.ID = persistence.MediaImages, a.NextID
		if len(a.Rec.Media) > 0 {
			m := a.Rec.Media[r.IntN(len(a.Rec.Media))]
			c.Media, c.ID = m.Kind, m.ID
		}
	case k < 95:
		c.Kind = Expire
	case k < 97:
		c.Kind, c.Key, c.Amount = Reverse, fmt.Sprintf("r%d", r.IntN(6)), money.Amount(1+r.Int64N(2))*250_000_000_000
	default:
		c.Kind = View
	}
	if c.Kind == AddCredits || c.Kind == Charge || c.Kind == Reverse {
		if gr, ok := g.grants[i][c.Key]; ok {
			c.Prior = &gr
		}
	}
	if c.Kind == Admit || c.Kind == Record || c.Kind == View {
		c.KeyLimits = g.keyLimits(c.Key)
	}
	return c
}

// keyLimits are key's own limits in the log: k1 has a daily budget and an rpm, k2 a budget
// whose period changes now and then and an expiry the log's clock passes, k3 none.
func (g *logGen) keyLimits(key string) *persistence.KeyLimits {
	switch key {
	case "k1":
		return &persistence.KeyLimits{Budget: 1_000_000_000_000, Period: persistence.BudgetDay, RPM: 1}
	case "k2":
		periods := []string{persistence.BudgetWeek, persistence.BudgetMonth, persistence.BudgetTotal}
		return &persistence.KeyLimits{Budget: 2_000_000_000_000, Period: periods[g.seq/700%len(periods)], ExpiresAt: t0/1e9 + 40*Day}
	}
	return nil
}

// checkDeterminism applies a seeded random log of n commands over accounts accounts on
// three instances each (two fresh, one encoded and decoded before every command): after
// every command their states and results must encode to the same bytes.
func checkDeterminism(t testing.TB, seed uint64, accounts, n int) {
	g := newLogGen(t, seed, accounts)
	reps := make([][3]replica, accounts)
	for i := range reps {
		reps[i][2].roundtrip = true
	}
	for step := range n {
		i := g.r.IntN(accounts)
		c := g.next(i, &reps[i][0].acct)
		wire, err := c.Encode()
		if err != nil {
			t.Fatal(err)
		}
		var states, results [3][]byte
		for j := range reps[i] {
			rp := &reps[i][j]
			if rp.roundtrip {
				b, err := rp.acct.Encode()
				if err != nil {
					t.Fatal(err)
				}
				if err := rp.acct.Decode(b); err != nil {
					t.Fatal(err)
				}
			}
			var cj Command // each instance decodes its own copy of the command, as from a log
			if err := cj.Decode(wire); err != nil {
				t.Fatal(err)
			}
			res := Apply(&rp.acct, &cj)
			if results[j], err = res.Encode(); err != nil {
				t.Fatal(err)
			}
			if states[j], err = rp.acct.Encode(); err != nil {
				t.Fatal(err)
			}
			if j == 0 && res.Grant.Key != "" {
				g.grants[i][res.Grant.Key] = res.Grant.Grant
			}
		}
		for j := 1; j < 3; j++ {
			if !bytes.Equal(states[0], states[j]) || !bytes.Equal(results[0], results[j]) {
				var a, b Account
				a.Decode(states[0])
				b.Decode(states[j])
				t.Fatalf("seed %d, command %d (%+v): instance %d differs\nstate %+v\n   vs %+v", seed, step, c, j, a, b)
			}
		}
		if t.Failed() {
			return
		}
		checkInvariants(t, &reps[i][0].acct, &c)
	}
}

// checkInvariants: the derived reservations are what the calls and holds add up to.
func checkInvariants(t testing.TB, a *Account, c *Command) {
	var win, week int64
	var held money.Amount
	for k, h := range a.Calls {
		if k > 0 && a.Calls[k-1].ID >= h.ID {
			t.Fatalf("calls out of order: %d then %d", a.Calls[k-1].ID, h.ID)
		}
		if h.InPlan && h.WinStart == a.Rec.WindowStart {
			win += h.Units
		}
		if h.InPlan && h.WeekStart == a.Rec.WeekStart {
			week += h.Units
		}
		if h.Paid {
			held += h.Hold
		}
	}
	for _, h := range a.Rec.Holds {
		held += money.Amount(h.Amount)
	}
	if win != a.WinReserved || week != a.WeekReserved || held != a.Held {
		t.Fatalf("after %+v: reservations: window %d/%d, week %d/%d, held %d/%d", *c, a.WinReserved, win, a.WeekReserved, week, a.Held, held)
	}
	for k, s := range a.Rec.KeySpend {
		if k > 0 && a.Rec.KeySpend[k-1].KeyID >= s.KeyID {
			t.Fatalf("key spend out of order: %s then %s", a.Rec.KeySpend[k-1].KeyID, s.KeyID)
		}
	}
}

// A random log applied on fresh instances, and on one restarting from its encoding before
// every command, gives byte-identical states and results after every command.
func TestRandomLogIsDeterministic(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		checkDeterminism(t, seed, 3, 3000)
	}
}

// The log's kinds are all exercised, and decisions go both ways: the test above is not
// comparing instances that never do anything.
func TestRandomLogCoversEveryKind(t *testing.T) {
	g := newLogGen(t, 1, 1)
	var a Account
	seen := map[Kind]int{}
	admitted, refused := 0, 0
	keyRefusals := map[Limit]int{}
	for range 3000 {
		c := g.next(0, &a)
		r := Apply(&a, &c)
		if r.Grant.Key != "" {
			g.grants[0][r.Grant.Key] = r.Grant.Grant
		}
		if r.Fail == OK {
			seen[c.Kind]++
		}
		if c.Kind == Admit {
			if r.Admitted {
				admitted++
			} else {
				refused++
				keyRefusals[r.Refused]++
			}
		}
	}
	for k := Admit; k < maxKind; k++ {
		if seen[k] == 0 {
			t.Errorf("kind %d never applied", k)
		}
	}
	if admitted < 100 || refused < 100 {
		t.Errorf("admitted %d, refused %d", admitted, refused)
	}
	for _, l := range []Limit{LimitKeyBudget, LimitKeyRPM, LimitKeyExpired} {
		if keyRefusals[l] == 0 {
			t.Errorf("no admission refused by %s (refusals: %v)", l, keyRefusals)
		}
	}
}

// FuzzStepDeterminism runs the determinism check over a fuzzed log seed.
func FuzzStepDeterminism(f *testing.F) {
	for _, s := range []uint64{0, 7, 1 << 40} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		checkDeterminism(t, seed, 2, 300)
	})
}

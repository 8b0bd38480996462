package quota

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// A charge debits credits once per key, down to the plan's overdraft floor, and writes its
// log entry with the amount actually charged; a repeat (also after a crash) charges nothing.
func TestChargeIdempotentDownToOverdraftFloor(t *testing.T) {
	noOverdraft := plan(t, "{name: p}")
	overdraft := plan(t, "{name: o, overdraft_usd: '0.5'}")
	cases := []struct {
		name    string
		topUp   string // "" = none
		plan    *catalog.Plan
		amount  string
		charged string
		balance string
	}{
		{"covered", "1", noOverdraft, "0.25", "0.25", "0.75"},
		{"exactly the balance", "1", noOverdraft, "1", "1", "0"},
		{"capped at zero", "1", noOverdraft, "3", "1", "0"},
		{"no credits", "", noOverdraft, "0.1", "0", "0"},
		{"into the overdraft", "1", overdraft, "1.2", "1.2", "-0.2"},
		{"capped at the overdraft floor", "1", overdraft, "3", "1.5", "-0.5"},
		{"nil plan has no overdraft", "0.1", nil, "1", "0.1", "0"},
		{"zero amount", "1", noOverdraft, "0", "0", "1"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			acct := "acct_c"
			if c.topUp != "" {
				e.credit(acct, c.topUp, "topup")
			}
			rid := "video_" + string(rune('a'+i))
			log := &persistence.LogEntry{RequestID: rid, Time: t0.UnixNano(), Model: "v1", Status: 200, Cost: 12345, ListCost: int64(usdAmount(t, c.amount))}
			want := Settlement{Counted: true, Paid: true, Charged: usdAmount(t, c.charged), Balance: signed(t, c.balance)}
			for attempt := 0; attempt < 2; attempt++ {
				s, err := e.svc.Charge(context.Background(), acct, c.plan, usdAmount(t, c.amount), "video/"+rid, log)
				if err != nil {
					t.Fatal(err)
				}
				if s != want {
					t.Fatalf("attempt %d: %+v, want %+v", attempt, s, want)
				}
			}
			e.restart(false) // a crash: only what was acknowledged survives
			s, err := e.svc.Charge(context.Background(), acct, c.plan, usdAmount(t, c.amount), "video/"+rid, log)
			if err != nil || s != want {
				t.Fatalf("after restart: %+v, %v; want %+v", s, err, want)
			}
			st := e.state(acct, noOverdraft)
			if st.Balance != want.Balance || st.Spent != want.Charged {
				t.Fatalf("state: balance %s spent %s", st.Balance, st.Spent)
			}
			logs, err := e.store.ListLog(acct, time.Time{}, time.Time{}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(logs) != 1 || logs[0].RequestID != rid || logs[0].AccountID != acct || logs[0].Cost != int64(want.Charged) || logs[0].ListCost != log.ListCost {
				t.Fatalf("log = %+v", logs)
			}
		})
	}
}

func TestChargeRejects(t *testing.T) {
	e := newEnv(t, Config{})
	p := plan(t, "{name: p}")
	e.credit("acct_r", "1", "topup")
	long := make([]byte, 122)
	for i := range long {
		long[i] = 'k'
	}
	cases := []struct {
		name    string
		account string
		amount  money.Amount
		key     string
		log     *persistence.LogEntry
		want    error
	}{
		{"no account", "", 1, "k", nil, ErrInvalid},
		{"negative amount", "acct_r", -1, "k", nil, ErrInvalid},
		{"no key", "acct_r", 1, "", nil, ErrInvalid},
		{"key too long", "acct_r", 1, string(long), nil, ErrInvalid},
		{"log of another account", "acct_r", 1, "k", &persistence.LogEntry{RequestID: "r", Time: 1, AccountID: "other"}, ErrInvalid},
		{"invalid log", "acct_r", 1, "k", &persistence.LogEntry{Time: 1}, ErrInvalid},
	}
	for _, c := range cases {
		if _, err := e.svc.Charge(context.Background(), c.account, p, c.amount, c.key, c.log); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	if st := e.state("acct_r", p); st.Balance != usdAmount(t, "1") {
		t.Fatalf("a rejected charge moved money: balance %s", st.Balance)
	}
	// A charge key is not a top-up key, and a top-up key is not a charge key.
	if _, err := e.svc.Charge(context.Background(), "acct_r", p, usdAmount(t, "0.5"), "x", nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.svc.AddCredits(context.Background(), "acct_r", usdAmount(t, "0.5"), ChargeKeyPrefix+"x"); !errors.Is(err, ErrIdempotencyConflict) {
		t.Fatalf("top-up under a charge's key: %v", err)
	}
	e.credit("acct_r", "2", ChargeKeyPrefix+"y")
	if _, err := e.svc.Charge(context.Background(), "acct_r", p, usdAmount(t, "0.5"), "y", nil); !errors.Is(err, ErrIdempotencyConflict) {
		t.Fatalf("charge under a top-up's key: %v", err)
	}
	if st := e.state("acct_r", p); st.Balance != usdAmount(t, "2.5") {
		t.Fatalf("balance %s, want 2.5", st.Balance)
	}
}

func signed(t testing.TB, s string) money.Amount {
	if len(s) > 0 && s[0] == '-' {
		return -usdAmount(t, s[1:])
	}
	return usdAmount(t, s)
}

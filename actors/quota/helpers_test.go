package quota

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// t0 is a Wednesday noon; tests move the clock from here.
var t0 = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

// env is one node: a store and the service, restartable on the same directory.
type env struct {
	t     testing.TB
	dir   string
	cfg   Config
	clk   *testutil.Clock
	store *persistence.Store
	svc   *Service
}

func newEnv(t testing.TB, cfg Config) *env {
	t.Helper()
	e := &env{t: t, dir: filepath.Join(t.TempDir(), "pebble"), cfg: cfg, clk: testutil.NewClock(t0)}
	if e.cfg.Now == nil {
		e.cfg.Now = e.clk.Now
	}
	if e.cfg.IdleTimeout == 0 {
		e.cfg.IdleTimeout = time.Hour // tests about passivation set their own
	}
	e.start()
	t.Cleanup(func() {
		e.svc.Close(context.Background())
		e.store.Close()
	})
	return e
}

func (e *env) start() {
	st, err := persistence.Open(e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	e.store = st
	e.svc = NewService(st, e.cfg)
}

// restart closes the service (graceful) or not (crash: the old actors just lose their
// store), closes the store, and starts a new service on the same directory.
func (e *env) restart(graceful bool) {
	if graceful {
		if err := e.svc.Close(context.Background()); err != nil {
			e.t.Fatal(err)
		}
	}
	e.store.Close()
	e.start()
}

// plan parses one plan entry (YAML flow mapping) through the catalog's validator.
func plan(t testing.TB, entry string) *catalog.Plan {
	t.Helper()
	doc := "models:\n  - id: m1\n    kind: chat\n    routes: [{id: r1, format: chat, base_url: 'http://x'}]\nplans:\n  - " + entry + "\n"
	c, err := catalog.Parse("test.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return c.Plans()[0]
}

func (e *env) admit(acct, key string, p *catalog.Plan, units int64, est money.Amount) Decision {
	e.t.Helper()
	d, err := e.svc.Admit(context.Background(), AdmitRequest{Account: acct, KeyID: key, Plan: p, Units: units, EstimatedCost: est, At: e.clk.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

func (e *env) settle(d Decision, o Outcome) Settlement {
	e.t.Helper()
	if !d.Admitted {
		e.t.Fatalf("settle of a refused call: %+v", d)
	}
	s, err := e.svc.Settle(context.Background(), d.Reservation, o)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// call admits and settles one counted call, with its log entry (the durable record of its
// burst slot).
func (e *env) call(acct, key string, p *catalog.Plan) Decision {
	e.t.Helper()
	at := e.clk.Now()
	d := e.admit(acct, key, p, 0, 0)
	if d.Admitted {
		e.settle(d, Outcome{Counts: true, Log: e.entry(key, at)})
	}
	return d
}

var entries atomic.Int64

// entry is a log entry of a call that arrived at at.
func (e *env) entry(key string, at time.Time) *persistence.LogEntry {
	return &persistence.LogEntry{RequestID: fmt.Sprintf("req_%d", entries.Add(1)), Time: at.UnixNano(), KeyID: key, Status: 200}
}

func (e *env) state(acct string, p *catalog.Plan) QuotaState {
	e.t.Helper()
	st, err := e.svc.State(context.Background(), acct, p)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

func (e *env) credit(acct string, usd, key string) money.Amount {
	e.t.Helper()
	b, _, err := e.svc.AddCredits(context.Background(), acct, usdAmount(e.t, usd), key)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func usdAmount(t testing.TB, s string) money.Amount {
	a, err := money.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func refused(t testing.TB, d Decision, limit Limit, retry time.Duration) {
	t.Helper()
	if d.Admitted || d.Refused != limit || d.RetryAfter != retry {
		t.Fatalf("decision = admitted %v, refused %q, retry %v; want refused %q, retry %v", d.Admitted, d.Refused, d.RetryAfter, limit, retry)
	}
}

func admitted(t testing.TB, d Decision) {
	t.Helper()
	if !d.Admitted {
		t.Fatalf("refused by %q (retry %v), want admitted", d.Refused, d.RetryAfter)
	}
}

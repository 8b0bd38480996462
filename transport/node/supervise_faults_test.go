//go:build faults

package node_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/mail/mailtest"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// loopEnv is a node whose every long-lived loop turns during a test: retention every 20 ms
// (a one-day window), the full-disk monitor every 20 ms over a fake disk, the outbox mailing
// through a real SMTP server.
type loopEnv struct {
	*nodetest.Env
	disk *nodetest.Disk
	smtp *mailtest.Server
}

func startLoopEnv(t *testing.T) *loopEnv {
	smtp := mailtest.Start(t)
	cat := strings.Replace(nodetest.DefaultCatalog, "server: {", "server: {log_retention_days: 1, ", 1) +
		"auth:\n  signup_plan: demo\n  mail: {host: 127.0.0.1, port: " + strconv.Itoa(smtp.Port) + ", security: none, from: \"gw <noreply@example.com>\"}\n"
	disk := nodetest.NewDisk(1 << 40)
	env := nodetest.Start(t, cat, nodetest.Options{LogRetentionEvery: 20 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
		Store:  persistence.Options{MinFreeBytes: 4 << 20, BallastBytes: -1, RecheckEvery: 20 * time.Millisecond, FreeSpace: disk.FreeSpace, MeasureEvery: -1}})
	return &loopEnv{Env: env, disk: disk, smtp: smtp}
}

// TestFaultEveryLoopOfTheNodeResumesAfterAPanic injects a panic into a turn of each
// long-lived loop of a node (supervise.PanicAt, the faults build): the panic is counted in
// modelgate_panics_total{where}, the loop resumes — it does its next turn's work — and the
// node keeps serving: a chat call is answered 200, logged, and counted exactly (one more call
// in the window, its list cost the usage at the model's prices).
func TestFaultEveryLoopOfTheNodeResumesAfterAPanic(t *testing.T) {
	env := startLoopEnv(t)
	cases := []struct {
		where string
		// turn makes the loop take the turn that panics; resumed proves it took the next.
		turn, resumed func(t *testing.T, e *loopEnv)
	}{
		{"persistence.ledger", func(t *testing.T, e *loopEnv) {
			resp := e.Post("/v1/chat/completions", e.Key, chat("chat", "hi")) // its record's group commit panics
			nodetest.Read(t, resp)
		}, nil}, // the call after it is the next write: served, logged and counted below
		{"auth.outbox", func(t *testing.T, e *loopEnv) {
			signup(t, e, "lost@example.com")
		}, func(t *testing.T, e *loopEnv) {
			signup(t, e, "next@example.com")
			if m := e.smtp.Next(t); len(m.To) != 1 || m.To[0] != "next@example.com" {
				t.Fatalf("the mail after the panic went to %v, want next@example.com (the one being sent was lost)", m.To)
			}
		}},
		{"node.log-retention", func(*testing.T, *loopEnv) {}, func(t *testing.T, e *loopEnv) {
			old := persistence.LogEntry{RequestID: "req_0123456789abcdef01234567", AccountID: e.Account.ID,
				Time: time.Now().Add(-49 * time.Hour).UnixNano(), Status: 200, Model: "chat"}
			if err := e.Node.Store.AppendLog([]persistence.LogEntry{old}); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, "retention to run again", func() bool {
				es, err := e.Node.Store.ListLog(e.Account.ID, time.Time{}, time.Time{}, 0)
				return err == nil && !slices.ContainsFunc(es, func(e persistence.LogEntry) bool { return e.RequestID == old.RequestID })
			})
		}},
		{"persistence.space", func(t *testing.T, e *loopEnv) {
			e.disk.Set(1 << 20) // below the reserve: the monitor starts and watches
			if resp := e.Post("/v1/chat/completions", e.Key, chat("chat", "hi")); resp.StatusCode != 503 {
				t.Fatalf("a call on a full disk: %d, want 503", resp.StatusCode)
			} else {
				nodetest.Read(t, resp)
			}
		}, func(t *testing.T, e *loopEnv) {
			e.disk.Set(1 << 40) // the monitor, started again, sees the space and resumes writes
			testutil.WaitFor(t, "writes to resume", func() bool { return e.Node.Store.CheckWritable() == nil })
		}},
	}
	for _, c := range cases {
		t.Run(c.where, func(t *testing.T) {
			before := supervise.CountAt(c.where)
			seen := make(chan struct{}, 1)
			defer supervise.OnPanic(func(w string) {
				if w == c.where {
					select {
					case seen <- struct{}{}:
					default:
					}
				}
			})()
			supervise.PanicAt(c.where, 1)
			c.turn(t, env)
			select {
			case <-seen:
			case <-time.After(10 * time.Second):
				t.Fatalf("no panic at %s (armed %d left)", c.where, supervise.Armed(c.where))
			}
			if c.resumed != nil {
				c.resumed(t, env)
			}
			servedAndCounted(t, env.Env)
			want := `modelgate_panics_total{where="` + c.where + `"} ` + strconv.FormatUint(before+1, 10)
			if m := env.Metrics(); !strings.Contains(m, want+"\n") {
				t.Fatalf("metrics lack %s", want)
			}
		})
	}
}

// servedAndCounted makes a chat call and checks it was answered 200, logged with its status
// and its exact list cost, and took exactly one call of the account's window.
func servedAndCounted(t *testing.T, env *nodetest.Env) {
	t.Helper()
	used := windowUsed(t, env)
	resp := env.Post("/v1/chat/completions", env.Key, chat("chat", "hi"))
	raw := nodetest.Read(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("a call after the panic: %d %s", resp.StatusCode, raw)
	}
	var answer struct {
		Usage struct {
			Prompt     int64 `json:"prompt_tokens"`
			Completion int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil || answer.Usage.Completion == 0 {
		t.Fatalf("answer %s: %v", raw, err)
	}
	prompt, _ := money.Parse("0.000001") // the chat model's prices (nodetest.DefaultCatalog)
	completion, _ := money.Parse("0.000002")
	wantCost := prompt.Times(answer.Usage.Prompt) + completion.Times(answer.Usage.Completion)
	e, err := env.Node.Store.LogEntry(env.Account.ID, resp.Header.Get("X-Request-Id"))
	if err != nil || e.Status != 200 || money.Amount(e.ListCost) != wantCost {
		t.Fatalf("the call's log entry %+v, %v; want status 200, list cost %s", e, err, wantCost)
	}
	if got := windowUsed(t, env); got != used+1 {
		t.Fatalf("window used %d after the call, want %d", got, used+1)
	}
}

// windowUsed is the calls the account's window has counted.
func windowUsed(t *testing.T, env *nodetest.Env) int {
	t.Helper()
	env.WaitIdle()
	var q struct {
		Window struct {
			Used int `json:"used"`
		} `json:"window"`
	}
	raw := nodetest.Read(t, env.Admin(http.MethodGet, "/admin/v1/accounts/"+env.Account.ID+"/quota", ""))
	if err := json.Unmarshal(raw, &q); err != nil {
		t.Fatalf("quota %s: %v", raw, err)
	}
	return q.Window.Used
}

// signup asks for an account for email: its verification mail goes through the outbox.
func signup(t *testing.T, env *loopEnv, email string) {
	t.Helper()
	resp := env.Do(http.MethodPost, "/auth/signup", "", `{"email":"`+email+`","password":"a long enough password"}`)
	if raw := nodetest.Read(t, resp); resp.StatusCode != 202 {
		t.Fatalf("signup: %d %s", resp.StatusCode, raw)
	}
}

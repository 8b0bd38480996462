package video

import (
	"errors"
	"testing"

	"github.com/modelgate/modelgate/actors/quota"
)

// Video billing, the task's side: within the plan a video holds and costs no credits;
// beyond it, Price × the requested seconds is held at creation (refused up front when the
// credits cannot hold it), and on completed the output seconds are charged from the hold,
// never more than it; a failed task releases it.
func TestTaskBillsOutputSecondsFromItsHold(t *testing.T) {
	cases := []struct {
		name     string
		topUp    string
		paid     bool
		spec     string
		refused  quota.Limit // "" = created
		heldAt   string      // held right after creation
		status   string
		made     int64 // seconds committed to the day
		charged  string
		listCost string
	}{
		{name: "within the plan: nothing held, nothing charged", topUp: "1", spec: `{"duration":"2s"}`,
			heldAt: "0", status: StatusCompleted, made: 5, charged: "0", listCost: "0.5"},
		{name: "within the plan without credits: the same", spec: `{"duration":"2s"}`,
			heldAt: "0", status: StatusCompleted, made: 5, charged: "0", listCost: "0.5"},
		{name: "beyond the plan: the output seconds are charged, the rest released", topUp: "1", paid: true, spec: `{"duration":"2s","made":3}`,
			heldAt: "0.5", status: StatusCompleted, made: 3, charged: "0.3", listCost: "0.3"},
		{name: "beyond the plan: never more than the requested seconds", topUp: "1", paid: true, spec: `{"duration":"2s","made":9}`,
			heldAt: "0.5", status: StatusCompleted, made: 5, charged: "0.5", listCost: "0.5"},
		{name: "beyond the plan, failed: the hold is released", topUp: "1", paid: true, spec: `{"duration":"2s","fail":"content_policy_violation"}`,
			heldAt: "0.5", status: StatusFailed, charged: "0"},
		{name: "beyond the plan, credits and overdraft short: refused at creation", topUp: "0.2", paid: true, refused: quota.LimitCredits},
		{name: "beyond the plan, no credits, the overdraft short: refused at creation", paid: true, refused: quota.LimitCredits},
		{name: "beyond the plan: the overdraft makes up the difference", topUp: "0.3", paid: true, spec: `{"duration":"2s"}`,
			heldAt: "0.5", status: StatusCompleted, made: 5, charged: "0.5", listCost: "0.5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, envOpts{topUp: c.topUp})
			balance := usd(t, "0")
			if c.topUp != "" {
				balance = usd(t, c.topUp)
			}
			created, err := e.createTask("acct_b", 5, c.paid)
			var refusal *CreditRefusal
			if c.refused != "" {
				if !errors.As(err, &refusal) || refusal.Decision.Refused != c.refused || refusal.Decision.ResetsAt.IsZero() {
					t.Fatalf("created %+v, %v; want refused by %q with resets_at", created, err, c.refused)
				}
				st := e.state("acct_b")
				if open, _ := e.store.ListOpenTasks(); len(open) != 0 || st.Held != 0 || st.Video.Reserved != 0 || st.Balance != balance {
					t.Fatalf("a refused task left %d open tasks, held %s, video %+v, balance %s", len(open), st.Held, st.Video, st.Balance)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st := e.state("acct_b"); st.Held != usd(t, c.heldAt) || st.Balance != balance {
				t.Fatalf("after creation: held %s balance %s, want %s and %s", st.Held, st.Balance, c.heldAt, balance)
			}
			job := e.startJob(created.ID, c.spec)
			task := e.wait("acct_b", job.ID, nil)
			if task.Status != c.status || task.Charged != int64(usd(t, c.charged)) {
				t.Fatalf("task %+v", task)
			}
			st := e.state("acct_b")
			if st.Held != 0 || st.Balance != balance-usd(t, c.charged) || st.Spent != usd(t, c.charged) || st.Video.Used != c.made || st.Video.Reserved != 0 {
				t.Fatalf("after the end: held %s balance %s spent %s video %+v", st.Held, st.Balance, st.Spent, st.Video)
			}
			logs := e.logs("acct_b")
			if c.status == StatusFailed {
				if len(logs) != 0 {
					t.Fatalf("a failed task logged %+v", logs)
				}
				return
			}
			// A video's upstream cost is its list cost: route prices are per token.
			if len(logs) != 1 || logs[0].Cost != int64(usd(t, c.charged)) || logs[0].ListCost != int64(usd(t, c.listCost)) ||
				logs[0].UpstreamCost != logs[0].ListCost {
				t.Fatalf("log %+v", logs)
			}
		})
	}
}

// Abandon (every route refused the job) ends the task before it returns: failed, settled,
// its seconds and hold released; Start and Abandon refuse a task that began already.
func TestAbandonReleasesEverythingAtOnce(t *testing.T) {
	e := newEnv(t, envOpts{topUp: "1"})
	created, err := e.createTask("acct_x", 5, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Abandon(t.Context(), created.ID, CodeNoRoute, "no route took the job"); err != nil {
		t.Fatal(err)
	}
	rec, err := e.store.GetTask(created.ID)
	if err != nil || rec.Status != StatusFailed || !rec.Settled || rec.ErrorCode != CodeNoRoute {
		t.Fatalf("abandoned task %+v, %v", rec, err)
	}
	st := e.state("acct_x")
	if st.Held != 0 || st.Video.Reserved != 0 || st.Balance != usd(t, "1") || e.svc.Active() != 0 {
		t.Fatalf("held %s video %+v balance %s, %d actors", st.Held, st.Video, st.Balance, e.svc.Active())
	}
	if err := e.svc.Abandon(t.Context(), created.ID, CodeNoRoute, "again"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("second abandon: %v", err)
	}
	if _, err := e.svc.Start(t.Context(), created.ID, e.route, upstreamJob("vid_up_9"), 1); !errors.Is(err, ErrInvalid) {
		t.Fatalf("start of an abandoned task: %v", err)
	}
}

// Withdraw (the creating call could not be recorded, so its client got a 503) fails a task
// that started already: settled, its seconds and hold released, nothing logged or charged,
// whether the actor was idle or had a call in flight.
func TestWithdrawFailsAStartedTaskAndReleasesIt(t *testing.T) {
	for _, spec := range []string{`{"duration":"60s"}`, `{"duration":"2s"}`} {
		t.Run(spec, func(t *testing.T) {
			e := newEnv(t, envOpts{topUp: "1"})
			created, err := e.createTask("acct_w", 5, true)
			if err != nil {
				t.Fatal(err)
			}
			e.startJob(created.ID, spec)
			if err := e.svc.Withdraw(t.Context(), created.ID, CodeNoRoute, "the video call could not be recorded"); err != nil {
				t.Fatal(err)
			}
			task := e.wait("acct_w", created.ID, nil)
			if task.Status != StatusFailed || task.Charged != 0 || task.Error == nil || task.Error.Code != CodeNoRoute {
				t.Fatalf("withdrawn task %+v", task)
			}
			st := e.state("acct_w")
			if st.Held != 0 || st.Video.Reserved != 0 || st.Video.Used != 0 || st.Balance != usd(t, "1") || st.Spent != 0 {
				t.Fatalf("held %s video %+v balance %s spent %s", st.Held, st.Video, st.Balance, st.Spent)
			}
			if logs := e.logs("acct_w"); len(logs) != 0 {
				t.Fatalf("a withdrawn task logged %+v", logs)
			}
		})
	}
}

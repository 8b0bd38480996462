package video

import (
	"bytes"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
)

func (e *env) awaitHeld(what string) {
	e.t.Helper()
	select {
	case got := <-e.api.paused:
		if got != what {
			e.t.Fatalf("held a %s, want a %s", got, what)
		}
	case <-time.After(10 * time.Second):
		e.t.Fatalf("no %s was held", what)
	}
}

func (e *env) unpause() {
	e.api.holdFromPoll.Store(0)
	e.api.pausePolls.Store(false)
}

// The node stops while a task is in progress: after the restart the task resumes polling
// its upstream job, completes, and is billed exactly once; its video stays served after
// a further restart.
func TestRestartInTheMiddle(t *testing.T) {
	e := newEnv(t, envOpts{topUp: "2"})
	e.api.holdFromPoll.Store(4) // polls at 1 s, 2.5 s, 4.75 s pass; the one at 8.125 s hangs
	created := e.create("acct_r", 8, `{"duration":"20s"}`)
	e.awaitHeld("poll")
	before, err := e.svc.Get(t.Context(), "acct_r", created.ID)
	if err != nil || before.Status != StatusInProgress || before.Progress != 23 {
		t.Fatalf("before the restart: %+v, %v", before, err)
	}

	e.unpause()
	e.restart()
	task := e.wait("acct_r", created.ID, nil)

	// Resumed at 8.125 s with an immediate poll (40%), then 1 s, 1.5 s, … from there.
	want := []string{"queued 0", "queued 0", "in_progress 5", "in_progress 12", "in_progress 23",
		"in_progress 40", "in_progress 45", "in_progress 53", "in_progress 64", "in_progress 81", "completed 100", "completed 100 settled"}
	if got := e.tasks.of(created.ID); !reflect.DeepEqual(got, want) {
		t.Fatalf("writes:\n got %q\nwant %q", got, want)
	}
	price := usd(t, "0.8") // 0.1 × 8 s
	if task.Status != StatusCompleted || task.Charged != int64(price) || e.api.createCount() != 1 {
		t.Fatalf("task %+v, creates %d", task, e.api.createCount())
	}
	checkBilledOnce(t, e, "acct_r", 8, usd(t, "2")-price, 1)

	e.restart()
	again, err := e.svc.Get(t.Context(), "acct_r", created.ID)
	if err != nil || again != task {
		t.Fatalf("after a second restart: %+v, %v", again, err)
	}
	checkServed(t, e, task.URL, content("vid_up_1", 4096))
	checkBilledOnce(t, e, "acct_r", 8, usd(t, "2")-price, 1)
}

// The node stops after the task was created but before its upstream job was recorded.
// The request body (the prompt) was never written to disk, so the resumed task cannot
// start the job: it fails at once, releases its seconds and its credit hold, and costs
// nothing.
func TestRestartBeforeTheUpstreamJob(t *testing.T) {
	e := newEnv(t, envOpts{topUp: "1"})
	created, err := e.createTask("acct_c", 5, true)
	if err != nil {
		t.Fatal(err)
	}
	if st := e.state("acct_c"); st.Held != usd(t, "0.5") || st.Video.Reserved != 5 {
		t.Fatalf("before the restart: held %s, video %+v", st.Held, st.Video)
	}
	e.restart()
	task := e.wait("acct_c", created.ID, nil)
	if task.Status != StatusFailed || task.Error == nil || task.Error.Code != CodeUpstreamJobLost || task.Charged != 0 {
		t.Fatalf("task %+v", task)
	}
	st := e.state("acct_c")
	if st.Video.Used != 0 || st.Video.Reserved != 0 || st.Balance != usd(t, "1") || st.Held != 0 || e.api.createCount() != 0 {
		t.Fatalf("quota after the lost job: video %+v, balance %s, held %s; creates %d", st.Video, st.Balance, st.Held, e.api.createCount())
	}
}

// The node stops after the charge is durable but before the task wrote that it is
// settled: the resumed task settles again, and the charge, under the same key, does not
// repeat.
func TestRestartBetweenChargeAndSettled(t *testing.T) {
	e := newEnv(t, envOpts{topUp: "1"})
	e.quotas.holdAfterSettle = true
	created := e.create("acct_s", 5, `{"duration":"2s"}`)
	select {
	case <-e.quotas.held:
	case <-time.After(10 * time.Second):
		t.Fatal("no charge")
	}
	if rec, _ := e.store.GetTask(created.ID); rec.Status != StatusCompleted || rec.Settled {
		t.Fatalf("before the restart: %+v", rec)
	}
	e.restart()
	task := e.wait("acct_s", created.ID, nil)
	if task.Charged != int64(usd(t, "0.5")) {
		t.Fatalf("task %+v", task)
	}
	if n := e.quotas.counts(); n.commits != 2 || n.settles != 2 {
		t.Fatalf("quota calls %+v: both steps run again after the restart", n)
	}
	checkBilledOnce(t, e, "acct_s", 5, usd(t, "0.5"), 1)
}

// A node down past a task's deadline gives the upstream job one last look when it comes
// back: a job that finished meanwhile is still stored and billed.
func TestRestartAfterTheDeadline(t *testing.T) {
	e := newEnv(t, envOpts{topUp: "1", cfg: Config{MaxAge: time.Minute}})
	e.api.holdFromPoll.Store(2) // the poll at 2.5 s hangs
	created := e.create("acct_d", 5, `{"duration":"20s"}`)
	e.awaitHeld("poll")
	e.unpause()
	e.stop()
	e.clk.add(2 * time.Minute) // down for two minutes
	e.start()
	if err := e.svc.Resume(t.Context()); err != nil {
		t.Fatal(err)
	}
	task := e.wait("acct_d", created.ID, nil)
	want := []string{"queued 0", "queued 0", "in_progress 5", "completed 100", "completed 100 settled"}
	if got := e.tasks.of(created.ID); task.Status != StatusCompleted || !reflect.DeepEqual(got, want) {
		t.Fatalf("task %+v, writes %q", task, got)
	}
	checkBilledOnce(t, e, "acct_d", 5, usd(t, "0.5"), 1)
}

// A task whose route left the catalog while the node was down fails (and costs nothing).
func TestRestartWithoutTheRoute(t *testing.T) {
	e := newEnv(t, envOpts{topUp: "1"})
	e.api.holdFromPoll.Store(1) // the first poll hangs
	created := e.create("acct_g", 5, `{}`)
	e.awaitHeld("poll")
	e.unpause()
	e.stop()
	e.holder.Store(e.catalog("vr2")) // the model is now served by another route
	e.start()
	if err := e.svc.Resume(t.Context()); err != nil {
		t.Fatal(err)
	}
	task := e.wait("acct_g", created.ID, nil)
	if task.Status != StatusFailed || *task.Error != (TaskError{CodeRouteUnavailable, `route "vr1" of model vid-1 is no longer in the catalog`}) {
		t.Fatalf("task %+v %+v", task, task.Error)
	}
	st := e.state("acct_g")
	if st.Video.Used != 0 || st.Video.Reserved != 0 || st.Balance != usd(t, "1") || st.Held != 0 {
		t.Fatalf("quota %+v balance %s held %s", st.Video, st.Balance, st.Held)
	}
}

func checkBilledOnce(t *testing.T, e *env, account string, secs int64, balance money.Amount, logs int) {
	t.Helper()
	st := e.state(account)
	if st.Video.Used != secs || st.Video.Reserved != 0 || st.Balance != balance || st.Held != 0 {
		t.Fatalf("quota: video %+v, balance %s (want %v)", st.Video, st.Balance, balance)
	}
	if l := e.logs(account); len(l) != logs {
		t.Fatalf("%d log entries, want %d", len(l), logs)
	}
	if open, _ := e.store.ListOpenTasks(); len(open) != 0 {
		t.Fatalf("%d tasks still open", len(open))
	}
}

func checkServed(t *testing.T, e *env, url string, want []byte) {
	t.Helper()
	id := url[len("/assets/vid/") : len(url)-len(".mp4")]
	_, f, err := e.assets.OpenPath("vid", id+".mp4")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, _ := io.ReadAll(f)
	if !bytes.Equal(got, want) {
		t.Fatalf("served %d bytes, want %d", len(got), len(want))
	}
}

package accounts

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/persistence"
)

// videoTask is a queued task of account with id "video_" + the 24-character suffix.
func videoTask(account, suffix string) persistence.VideoTask {
	return persistence.VideoTask{ID: "video_" + suffix, Account: account, Model: "vid", Route: "r", Seconds: 5, Size: "720P",
		Status: persistence.TaskQueued, Created: t0, Updated: t0, Deadline: t0 + 1e12, Price: 100}
}

func taskCmd(id string, op TaskOp, v persistence.VideoTask) Command {
	return Command{ID: id, Account: v.Account, Task: &TaskChange{Op: op, Task: v}}
}

// applyTasks applies es and returns every command's decoded TaskResult, in order.
func applyTasks(t *testing.T, sm *StateMachine, es []cluster.Entry) []TaskResult {
	t.Helper()
	if err := sm.Update(es); err != nil {
		t.Fatal(err)
	}
	var out []TaskResult
	for _, e := range es {
		raw, err := cluster.DecodeResults(e.Result, countOf(t, e.Cmd))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range raw {
			var r TaskResult
			if err := r.Decode(b); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
	}
	return out
}

func TestTaskChangesApplyOnceOntoTheirRevision(t *testing.T) {
	const a = "acct-a"
	created := videoTask(a, "AAAAAAAAAAAAAAAAAAAAAAAA")
	started := created
	started.UpstreamID, started.Status, started.Progress, started.Rev = "job-1", persistence.TaskInProgress, 10, 1
	moved := started
	moved.Progress, moved.Rev = 50, 2
	rival := started // another actor's change from revision 1, after "moved" took it
	rival.Progress = 70
	done := moved
	done.Status, done.Progress, done.AssetPath, done.Rev = persistence.TaskCompleted, 100, "/assets/vid/x.mp4", 3
	reopen := done
	reopen.Status, reopen.Progress, reopen.AssetPath, reopen.Rev = persistence.TaskInProgress, 60, "", 4
	other := started
	other.Account = "acct-b"
	unknown := videoTask(a, "BBBBBBBBBBBBBBBBBBBBBBBB")
	unknown.Rev = 3
	bad := created
	bad.Seconds = 0
	tests := []struct {
		name string
		cmd  Command
		want TaskResult
		rev  uint64 // stored revision afterwards
	}{
		{"create", taskCmd("c1", TaskCreate, created), TaskResult{Rev: 1}, 1},
		{"the same create again (a retry of its id)", taskCmd("c1", TaskCreate, created), TaskResult{Rev: 1}, 1},
		{"another create of the id", taskCmd("c2", TaskCreate, created), TaskResult{Fail: TaskExists}, 1},
		{"job recorded onto revision 1", taskCmd("p1", TaskPut, started), TaskResult{Rev: 2}, 2},
		{"the same transition under a new command id", taskCmd("p1b", TaskPut, started), TaskResult{Rev: 2}, 2},
		{"progress onto revision 2", taskCmd("p2", TaskPut, moved), TaskResult{Rev: 3}, 3},
		{"a rival change from revision 1", taskCmd("p3", TaskPut, rival), TaskResult{Fail: TaskStale}, 3},
		{"a change of another account's task", taskCmd("p4", TaskPut, other), TaskResult{Fail: TaskInvalid}, 3},
		{"an unknown task", taskCmd("p5", TaskPut, unknown), TaskResult{Fail: TaskNotFound}, 3},
		{"a record the store refuses", taskCmd("p6", TaskPut, bad), TaskResult{Fail: TaskInvalid}, 3},
		{"completed", taskCmd("p7", TaskPut, done), TaskResult{Rev: 4}, 4},
		{"an ended task does not reopen", taskCmd("p8", TaskPut, reopen), TaskResult{Fail: TaskInvalid}, 4},
	}
	sm, store := newReplica(t, 3)
	for i, tc := range tests {
		got := applyTasks(t, sm, entries(uint64(i+1), batch(t, tc.cmd)))
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: result %+v, want %+v", tc.name, got, tc.want)
		}
		rec, err := store.GetTask(created.ID)
		if err != nil || rec.Rev != tc.rev {
			t.Errorf("%s: stored revision %d (%v), want %d", tc.name, rec.Rev, err, tc.rev)
		}
	}
	rec, _ := store.GetTask(created.ID)
	want := done
	want.Rev = 4
	if !sameTask(rec, want) || rec.Rev != 4 {
		t.Errorf("stored task %+v, want %+v", rec, want)
	}
	if open, err := store.ListOpenTasks(); err != nil || len(open) != 1 || open[0].ID != created.ID {
		t.Errorf("open tasks = %+v, %v; want the completed, unsettled task", open, err)
	}
}

func TestReplicasAgreeOnTasksAndTheHookSeesEachWriteOnceAfterItsCommit(t *testing.T) {
	a1 := videoTask("acct-a", "AAAAAAAAAAAAAAAAAAAAAAAA")
	b1 := videoTask("acct-b", "BBBBBBBBBBBBBBBBBBBBBBBB")
	a2 := a1
	a2.Rev, a2.UpstreamID = 1, "job-a"
	log := [][]byte{
		batch(t, taskCmd("1", TaskCreate, a1), taskCmd("2", TaskCreate, b1)),
		batch(t, taskCmd("3", TaskPut, a2), taskCmd("1", TaskCreate, a1)), // a retry in a later entry
		batch(t, taskCmd("4", TaskPut, a2)),                               // the same transition again
	}
	one, s1 := newReplica(t, 2)
	two, _ := newReplica(t, 2)
	var seen []string
	one.SetTaskHook(func(v persistence.VideoTask) {
		stored, err := s1.GetTask(v.ID) // its Update is committed before the hook hears of it
		if err != nil || stored.Rev < v.Rev {
			t.Errorf("hook for %s rev %d before its commit (stored %d, %v)", v.ID, v.Rev, stored.Rev, err)
		}
		seen = append(seen, v.ID[len(v.ID)-1:]+string(rune('0'+v.Rev)))
	})
	applyTasks(t, one, entries(1, log...))
	for i := range log { // one entry per Update on the other replica
		applyTasks(t, two, entries(uint64(i+1), log[i]))
	}
	if want := []string{"A1", "B1", "A2"}; !slices.Equal(seen, want) {
		t.Errorf("hook saw %q, want %q", seen, want)
	}
	if !bytes.Equal(snapshot(t, one), snapshot(t, two)) {
		t.Error("replicas fed the same log differ")
	}
}

func TestASnapshotCarriesTheShardsTasksAndRecoveryReplacesOnlyThem(t *testing.T) {
	src, _ := newReplica(t, 4)
	kept := videoTask("acct-a", "AAAAAAAAAAAAAAAAAAAAAAAA")
	ended := videoTask("acct-a", "CCCCCCCCCCCCCCCCCCCCCCCC")
	applyTasks(t, src, entries(1, batch(t, taskCmd("1", TaskCreate, kept), taskCmd("2", TaskCreate, ended))))
	ended.Rev, ended.Status, ended.ErrorCode, ended.Settled = 1, persistence.TaskFailed, "x", true
	applyTasks(t, src, entries(2, batch(t, taskCmd("3", TaskPut, ended))))
	snap := snapshot(t, src)

	dst, store := newReplica(t, 4)
	stale := videoTask("acct-a", "DDDDDDDDDDDDDDDDDDDDDDDD") // the replica's own older state: dropped
	applyTasks(t, dst, entries(1, batch(t, taskCmd("9", TaskCreate, stale))))
	neighbour := NewStateMachine(store, 5) // another shard's task: left alone
	otherTask := videoTask("acct-z", "ZZZZZZZZZZZZZZZZZZZZZZZZ")
	applyTasks(t, neighbour, entries(1, batch(t, taskCmd("z", TaskCreate, otherTask))))

	if err := dst.RecoverFromSnapshot(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snapshot(t, dst), snap) {
		t.Error("the recovered shard differs from the snapshot")
	}
	for _, tc := range []struct {
		id  string
		rev uint64
		err error
	}{{kept.ID, 1, nil}, {ended.ID, 2, nil}, {stale.ID, 0, persistence.ErrNotFound}, {otherTask.ID, 1, nil}} {
		rec, err := store.GetTask(tc.id)
		if !errors.Is(err, tc.err) || (tc.err == nil && rec.Rev != tc.rev) {
			t.Errorf("task %s after recovery: rev %d, %v; want rev %d, %v", tc.id, rec.Rev, err, tc.rev, tc.err)
		}
	}
	open, err := store.ListOpenTasks()
	var ids []string
	for _, o := range open {
		ids = append(ids, o.ID)
	}
	if want := []string{kept.ID, otherTask.ID}; err != nil || !slices.Equal(ids, want) {
		t.Errorf("open tasks after recovery %q (%v), want %q", ids, err, want)
	}
}

func TestATaskQueryReadsTheReplica(t *testing.T) {
	sm, _ := newReplica(t, 1)
	v := videoTask("acct-a", "AAAAAAAAAAAAAAAAAAAAAAAA")
	applyTasks(t, sm, entries(1, batch(t, taskCmd("1", TaskCreate, v))))
	for _, tc := range []struct {
		id    string
		found bool
	}{{v.ID, true}, {"video_BBBBBBBBBBBBBBBBBBBBBBBB", false}, {"no/such", false}} {
		q, _ := (&Query{Account: "acct-a", Task: tc.id}).Encode()
		out, err := sm.Lookup(q)
		var l TaskLookup
		if err == nil {
			err = msgpack.Unmarshal(out, &l)
		}
		if err != nil || l.Found != tc.found || (tc.found && l.Task.Rev != 1) {
			t.Errorf("lookup %s = %+v, %v; want found %v", tc.id, l, err, tc.found)
		}
	}
}

package persistence

import (
	"errors"
	"reflect"
	"testing"
)

func sampleTask(id string) *VideoTask {
	return &VideoTask{
		ID: id, Account: "acct_1", KeyID: "k1", Model: "vid-1", Route: "r1", Seconds: 5, Size: "720P",
		Status: TaskQueued, Created: 1_700_000_000_000_000_000,
		Updated: 1_700_000_000_000_000_000, Deadline: 1_700_003_600_000_000_000,
		MediaAccount: "acct_1", MediaKind: MediaVideo, MediaID: 42, Price: 100_000_000_000, Plan: "pro",
	}
}

// Every transition is written with the open index in step; a terminal, settled task
// leaves the index; everything survives a reopen.
func TestTaskTransitionsAndOpenIndex(t *testing.T) {
	s, dir := openStore(t)
	a, b, c := sampleTask("video_a"), sampleTask("video_b"), sampleTask("video_c")
	for _, task := range []*VideoTask{a, b, c} {
		if err := s.CreateTask(task); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateTask(sampleTask("video_b")); !errors.Is(err, ErrConflict) {
		t.Fatalf("second create: %v", err)
	}
	steps := []struct {
		name string
		task *VideoTask
		edit func(*VideoTask)
		open []string
	}{
		{"a in progress", a, func(v *VideoTask) {
			v.Status, v.Progress, v.UpstreamID, v.Held = TaskInProgress, 40, "up_a", 500_000_000_000
		}, []string{"video_a", "video_b", "video_c"}},
		{"a completed, not yet billed", a, func(v *VideoTask) {
			v.Status, v.Progress, v.AssetID, v.AssetPath, v.OutputSeconds = TaskCompleted, 100, "X", "/assets/vid/X.mp4", 4
		}, []string{"video_a", "video_b", "video_c"}},
		{"a billed", a, func(v *VideoTask) { v.Settled, v.Charged = true, 500_000_000_000 }, []string{"video_b", "video_c"}},
		{"b failed and released", b, func(v *VideoTask) {
			v.Status, v.ErrorCode, v.ErrorMessage, v.Settled = TaskFailed, "upstream_error", "no", true
		}, []string{"video_c"}},
	}
	for _, st := range steps {
		st.edit(st.task)
		if err := s.PutTask(st.task); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := openIDs(t, s); !reflect.DeepEqual(got, st.open) {
			t.Fatalf("%s: open = %v, want %v", st.name, got, st.open)
		}
	}
	s = reopen(t, s, dir)
	for _, want := range []*VideoTask{a, b, c} {
		got, err := s.GetTask(want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&got, want) {
			t.Fatalf("after reopen:\n got %+v\nwant %+v", got, *want)
		}
	}
	if got := openIDs(t, s); !reflect.DeepEqual(got, []string{"video_c"}) {
		t.Fatalf("open after reopen = %v", got)
	}
	if _, err := s.GetTask("video_zzz"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
}

func TestTaskValidation(t *testing.T) {
	s, _ := openStore(t)
	cases := []struct {
		name string
		edit func(*VideoTask)
	}{
		{"no id", func(v *VideoTask) { v.ID = "" }},
		{"slash in id", func(v *VideoTask) { v.ID = "a/b" }},
		{"no account", func(v *VideoTask) { v.Account = "" }},
		{"unknown status", func(v *VideoTask) { v.Status = "running" }},
		{"progress over 100", func(v *VideoTask) { v.Progress = 101 }},
		{"no seconds", func(v *VideoTask) { v.Seconds = 0 }},
		{"negative price", func(v *VideoTask) { v.Price = -1 }},
		{"completed without asset", func(v *VideoTask) { v.Status, v.Progress = TaskCompleted, 100 }},
		{"completed below 100", func(v *VideoTask) { v.Status, v.Progress, v.AssetPath = TaskCompleted, 99, "/x" }},
		{"failed without code", func(v *VideoTask) { v.Status = TaskFailed }},
		{"settled while running", func(v *VideoTask) { v.Settled = true }},
		{"negative hold", func(v *VideoTask) { v.Held = -1 }},
		{"more seconds made than asked", func(v *VideoTask) { v.OutputSeconds = v.Seconds + 1 }},
	}
	for _, c := range cases {
		v := sampleTask("video_v")
		c.edit(v)
		if err := s.PutTask(v); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, err)
		}
	}
	if got := openIDs(t, s); len(got) != 0 {
		t.Fatalf("invalid tasks were written: %v", got)
	}
}

// Raw access serves other packages' namespaces and refuses this package's own.
func TestRawKV(t *testing.T) {
	s, dir := openStore(t)
	if _, err := s.GetRaw([]byte("asset/x")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	if err := s.SetRaw([]byte("asset/x"), []byte("v1")); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, dir)
	if v, err := s.GetRaw([]byte("asset/x")); err != nil || string(v) != "v1" {
		t.Fatalf("get = %q, %v", v, err)
	}
	if err := s.DeleteRaw([]byte("asset/x")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRaw([]byte("asset/x")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted: %v", err)
	}
	for _, k := range []string{"", "acct/a", "quota/a", "credit/a/b", "task/x", "task-open/x", "log/a", "meta/a", "key/a", "keyhash/a", "acctkey/a"} {
		if err := s.SetRaw([]byte(k), nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("SetRaw(%q) = %v, want ErrInvalid", k, err)
		}
		if _, err := s.GetRaw([]byte(k)); !errors.Is(err, ErrInvalid) {
			t.Errorf("GetRaw(%q) = %v, want ErrInvalid", k, err)
		}
	}
}

func openIDs(t *testing.T, s *Store) []string {
	t.Helper()
	tasks, err := s.ListOpenTasks()
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, v := range tasks {
		ids = append(ids, v.ID)
	}
	return ids
}

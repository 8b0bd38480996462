package video

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

var assetURL = regexp.MustCompile(`^/assets/vid/[0-9A-Za-z]{32}\.mp4$`)

// A task goes queued → in_progress (the upstream's progress, never backwards) → completed
// with the video stored and served byte for byte; each step is written before it is seen;
// the poll waits start at 1 s, grow ×1.5 up to 15 s and are never shorter than the
// upstream's Retry-After; the seconds are committed and Price × seconds charged once, from
// the hold made at creation.
func TestLifecycleToCompleted(t *testing.T) {
	cases := []struct {
		name    string
		spec    string
		seconds int
		writes  []string
		waits   []time.Duration
		polls   []int // HTTP statuses of the polls
	}{
		{
			name: "queued then in progress", spec: `{"duration":"10s","queued":"2s"}`, seconds: 5,
			// polls at 1 s (queued), 2.5 s (25%), 4.75 s (47%), 8.125 s (81%), 13.1875 s (done)
			writes: []string{"queued 0", "queued 0", "in_progress 25", "in_progress 47", "in_progress 81", "completed 100", "completed 100 settled"},
			waits:  seconds(1, 1.5, 2.25, 3.375, 5.0625),
			polls:  []int{200, 200, 200, 200, 200},
		},
		{
			name: "the wait stops growing at 15 s", spec: `{"duration":"60s"}`, seconds: 12,
			writes: []string{"queued 0", "queued 0", "in_progress 1", "in_progress 4", "in_progress 7", "in_progress 13",
				"in_progress 21", "in_progress 34", "in_progress 53", "in_progress 78", "completed 100", "completed 100 settled"},
			waits: seconds(1, 1.5, 2.25, 3.375, 5.0625, 7.59375, 11.390625, 15, 15),
			polls: []int{200, 200, 200, 200, 200, 200, 200, 200, 200},
		},
		{
			name: "a Retry-After longer than the step wins", spec: `{"duration":"10s","throttle":2,"retry_after":4}`, seconds: 5,
			// polls at 1 s (429), 5 s (429), 9 s (90%), 12.375 s (done)
			writes: []string{"queued 0", "queued 0", "in_progress 90", "completed 100", "completed 100 settled"},
			waits:  seconds(1, 4, 4, 3.375),
			polls:  []int{429, 429, 200, 200},
		},
		{
			name: "a Retry-After on a successful poll is a minimum too", spec: `{"duration":"10s","hint":3}`, seconds: 5,
			// polls at 1 s (10%), 4 s (40%), 7 s (70%), 10.375 s (done)
			writes: []string{"queued 0", "queued 0", "in_progress 10", "in_progress 40", "in_progress 70", "completed 100", "completed 100 settled"},
			waits:  seconds(1, 3, 3, 3.375),
			polls:  []int{200, 200, 200, 200},
		},
		{
			name: "a Retry-After shorter than the step does not", spec: `{"duration":"5s","throttle":1,"retry_after":1}`, seconds: 5,
			// polls at 1 s (429), 2.5 s (50%), 4.75 s (95%), 8.125 s (done)
			writes: []string{"queued 0", "queued 0", "in_progress 50", "in_progress 95", "completed 100", "completed 100 settled"},
			waits:  seconds(1, 1.5, 2.25, 3.375),
			polls:  []int{429, 200, 200, 200},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, envOpts{topUp: "10"})
			created := e.create("acct_a", c.seconds, c.spec)
			if created.Status != StatusQueued || created.Progress != 0 || created.Seconds != c.seconds || !validTaskID(created.ID) {
				t.Fatalf("created = %+v", created)
			}
			task := e.wait("acct_a", created.ID, nil)

			if got := e.tasks.of(created.ID); !reflect.DeepEqual(got, c.writes) {
				t.Errorf("writes:\n got %q\nwant %q", got, c.writes)
			}
			if got := e.clk.waits(); !reflect.DeepEqual(got, c.waits) {
				t.Errorf("waits: got %v, want %v", got, c.waits)
			}
			var polls []int
			for _, p := range e.api.pollLog() {
				polls = append(polls, p.status)
			}
			if !reflect.DeepEqual(polls, c.polls) || e.api.createCount() != 1 {
				t.Errorf("polls %v creates %d, want %v and 1", polls, e.api.createCount(), c.polls)
			}

			price := usd(t, "0.1").Times(int64(c.seconds))
			want := Task{ID: created.ID, Account: "acct_a", KeyID: "key_1", Model: "vid-1", Status: StatusCompleted, Progress: 100,
				Seconds: c.seconds, Size: "720P", CreatedAt: t0, FinishedAt: task.FinishedAt, URL: task.URL, Charged: int64(price), Settled: true}
			if task != want || !assetURL.MatchString(task.URL) {
				t.Fatalf("task = %+v\nwant %+v", task, want)
			}
			// The asset is the upstream's video, byte for byte.
			a, f, err := e.assets.Open(task.URL[len("/assets/vid/") : len(task.URL)-len(".mp4")])
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(f)
			f.Close()
			if !bytes.Equal(got, content("vid_up_1", 4096)) || a.ContentType != "video/mp4" || a.Account != "acct_a" || a.Path != task.URL {
				t.Fatalf("asset %+v, %d bytes", a, len(got))
			}
			// Billing: the seconds count today, Price × seconds left the credits, once, with
			// its log entry.
			st := e.state("acct_a")
			if st.Video.Used != int64(c.seconds) || st.Video.Reserved != 0 || st.Balance != usd(t, "10")-price || st.Spent != price {
				t.Fatalf("quota: video %+v balance %s spent %s", st.Video, st.Balance, st.Spent)
			}
			if n := e.quotas.counts(); n != (quotaCalls{commits: 1, holds: 1, settles: 1}) {
				t.Fatalf("quota calls %+v", n)
			}
			logs := e.logs("acct_a")
			if len(logs) != 1 {
				t.Fatalf("log = %+v", logs)
			}
			l := logs[0]
			if l.RequestID != created.ID || l.Time != t0.UnixNano() || l.Cost != int64(price) || l.ListCost != int64(price) || l.Model != "vid-1" ||
				l.Route != "vr1" || l.KeyID != "key_1" || l.Status != 200 || l.ClientFormat != "videos" || l.UpstreamFormat != "chat" ||
				l.Attempts != 1 || l.LatencyMs != task.FinishedAt.Sub(t0).Milliseconds() {
				t.Fatalf("log entry = %+v", l)
			}
			// The task holds its job and what it made; nothing is left open.
			rec, err := e.store.GetTask(created.ID)
			if err != nil || rec.UpstreamID != "vid_up_1" || rec.OutputSeconds != int64(c.seconds) || rec.Held != int64(price) {
				t.Fatalf("stored task: %+v, %v", rec, err)
			}
			if open, _ := e.store.ListOpenTasks(); len(open) != 0 {
				t.Fatalf("open tasks: %d", len(open))
			}
			if !e.api.auth["Bearer sk-upstream"] || len(e.api.auth) != 1 {
				t.Fatalf("upstream auth: %v", e.api.auth)
			}
		})
	}
}

// A task that fails releases its seconds and its credit hold and costs nothing; its error
// says why.
func TestFailurePaths(t *testing.T) {
	cases := []struct {
		name    string
		spec    string
		opts    envOpts
		code    string
		message string
		last    []string // the last writes
	}{
		{"the upstream fails the job", `{"duration":"4s","fail":"content_policy_violation"}`, envOpts{},
			"content_policy_violation", "generation failed: content_policy_violation", []string{"in_progress 62", "failed 62", "failed 62 settled"}},
		{"the upstream loses the job", `{"lose":true}`, envOpts{},
			CodeUpstreamJobLost, "the upstream no longer knows video job vid_up_1 (HTTP 404)", []string{"queued 0", "failed 0", "failed 0 settled"}},
		{"the job outlives the maximum age", `{"duration":"60s"}`, envOpts{cfg: Config{MaxAge: 20 * time.Second}},
			CodeTimeout, "the video was not ready within 20s", []string{"in_progress 33", "failed 33", "failed 33 settled"}},
		{"the video is too large to keep", `{"duration":"2s","size":5000}`, envOpts{maxVideoBytes: 4096},
			CodeTooLarge, "the finished video is too large to store (assets: too large: more than 4096 bytes)", []string{"in_progress 50", "failed 50", "failed 50 settled"}},
		{"the finished file is a web page labelled video/mp4", `{"duration":"2s","content":"PCFkb2N0eXBlIGh0bWw+PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="}`, envOpts{},
			CodeFailed, `the finished file is not an MP4 or WebM video (labelled "video/mp4")`, []string{"in_progress 50", "failed 50", "failed 50 settled"}},
		{"the finished file is QuickTime", `{"duration":"2s","content":"AAAAFGZ0eXBxdCAg"}`, envOpts{},
			CodeFailed, `the finished file is not an MP4 or WebM video (labelled "video/mp4")`, []string{"in_progress 50", "failed 50", "failed 50 settled"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.topUp = "1"
			e := newEnv(t, c.opts)
			created := e.create("acct_f", 5, c.spec)
			task := e.wait("acct_f", created.ID, nil)
			if task.Status != StatusFailed || task.URL != "" || task.Charged != 0 || task.Error == nil || *task.Error != (TaskError{c.code, c.message}) {
				t.Fatalf("task = %+v, error %+v", task, task.Error)
			}
			writes := e.tasks.of(created.ID)
			if got := writes[len(writes)-len(c.last):]; !reflect.DeepEqual(got, c.last) {
				t.Errorf("writes end with %q, want %q (all: %q)", got, c.last, writes)
			}
			st := e.state("acct_f")
			if st.Video.Used != 0 || st.Video.Reserved != 0 || st.Balance != usd(t, "1") || st.Spent != 0 || st.Held != 0 {
				t.Fatalf("quota: video %+v balance %s spent %s held %s", st.Video, st.Balance, st.Spent, st.Held)
			}
			if n := e.quotas.counts(); n != (quotaCalls{releases: 1, holds: 1, holdReleases: 1}) {
				t.Fatalf("quota calls %+v", n)
			}
			if logs := e.logs("acct_f"); len(logs) != 0 {
				t.Fatalf("log = %+v", logs)
			}
			if files, _ := os.ReadDir(filepath.Join(e.dir, "assets", "vid")); len(files) != 0 {
				t.Fatalf("stored files: %v", files)
			}
		})
	}
}

// TestAVideoIsStoredAsWhatItsBytesAre: a WebM file that the upstream labels video/mp4 is
// stored and linked as WebM.
func TestAVideoIsStoredAsWhatItsBytesAre(t *testing.T) {
	e := newEnv(t, envOpts{topUp: "1"})
	webm := base64.StdEncoding.EncodeToString([]byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm"))
	created := e.create("acct_w", 5, `{"duration":"2s","content":"`+webm+`"}`)
	task := e.wait("acct_w", created.ID, nil)
	if task.Status != StatusCompleted || !strings.HasSuffix(task.URL, ".webm") {
		t.Fatalf("task = %+v", task)
	}
	a, f, err := e.assets.OpenPath("vid", strings.TrimPrefix(task.URL, "/assets/vid/"))
	if err != nil || a.ContentType != "video/webm" {
		t.Fatalf("asset %+v, %v", a, err)
	}
	f.Close()
}

// Get serves only the owner's tasks, from the actor (a passivated one is activated from
// the store); another account's task, an unknown or malformed id are not found, and none
// of those activates an actor.
func TestGetOwnership(t *testing.T) {
	e := newEnv(t, envOpts{cfg: Config{IdleTimeout: 20 * time.Millisecond}})
	task := e.wait("acct_a", e.create("acct_a", 5, `{"duration":"2s"}`).ID, nil)
	ctx := context.Background()
	for _, c := range []struct{ account, id string }{
		{"acct_b", task.ID},
		{"acct_a", "video_AAAAAAAAAAAAAAAAAAAAAAAA"},
		{"acct_a", "video_../../etc"},
		{"acct_a", ""},
	} {
		if _, err := e.svc.Get(ctx, c.account, c.id); !isNotFound(err) {
			t.Errorf("Get(%q, %q) = %v, want not found", c.account, c.id, err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.svc.Active() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d actors still active", e.svc.Active())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := e.svc.Get(ctx, "acct_b", task.ID); !isNotFound(err) || e.svc.Active() != 0 {
		t.Fatalf("another account's Get of a passivated task: %v, active %d", err, e.svc.Active())
	}
	again, err := e.svc.Get(ctx, "acct_a", task.ID)
	if err != nil || again != task || e.svc.Active() != 1 {
		t.Fatalf("after passivation: %+v, %v, active %d", again, err, e.svc.Active())
	}
}

// The task object is the spec's, with exactly these keys in each state.
func TestTaskJSON(t *testing.T) {
	base := Task{ID: "video_0123456789abcdefghijKLMN", Account: "a", Model: "vid-1", Seconds: 8, Size: "720P", CreatedAt: time.Unix(1712697600, 0)}
	queued, running, done, failed := base, base, base, base
	queued.Status = StatusQueued
	running.Status, running.Progress = StatusInProgress, 42
	done.Status, done.Progress, done.URL = StatusCompleted, 100, "/assets/vid/abc.mp4"
	failed.Status, failed.Progress, failed.Error = StatusFailed, 42, &TaskError{Code: "content_policy_violation", Message: "refused"}
	head := `{"id":"video_0123456789abcdefghijKLMN","task_id":"video_0123456789abcdefghijKLMN","video_id":"video_0123456789abcdefghijKLMN","object":"video","model":"vid-1",`
	cases := []struct {
		task Task
		want string
	}{
		{queued, head + `"status":"queued","progress":0,"seconds":"8","size":"720P","created_at":1712697600}`},
		{running, head + `"status":"in_progress","progress":42,"seconds":"8","size":"720P","created_at":1712697600}`},
		{done, head + `"status":"completed","progress":100,"seconds":"8","size":"720P","created_at":1712697600,"metadata":{"url":"/assets/vid/abc.mp4"}}`},
		{failed, head + `"status":"failed","progress":42,"seconds":"8","size":"720P","created_at":1712697600,"error":{"code":"content_policy_violation","message":"refused"}}`},
	}
	for _, c := range cases {
		got, err := json.Marshal(c.task)
		if err != nil || string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.task.Status, got, c.want)
		}
	}
}

func TestCreateRejects(t *testing.T) {
	e := newEnv(t, envOpts{})
	chat := *e.model
	chat.Kind = "chat"
	d, err := e.quota.ReserveVideoSeconds(context.Background(), "acct_r", e.plan, 5)
	if err != nil {
		t.Fatal(err)
	}
	good := CreateRequest{Account: "acct_r", Model: e.model, Seconds: 5, MediaReservation: d.Reservation}
	cases := []struct {
		name string
		edit func(*CreateRequest)
	}{
		{"no account", func(r *CreateRequest) { r.Account = "" }},
		{"no model", func(r *CreateRequest) { r.Model = nil }},
		{"a chat model", func(r *CreateRequest) { r.Model = &chat }},
		{"no seconds", func(r *CreateRequest) { r.Seconds = 0 }},
		{"paid without a plan", func(r *CreateRequest) { r.Paid = true }},
		{"negative price", func(r *CreateRequest) { r.Price = -1 }},
		{"another account's reservation", func(r *CreateRequest) { r.MediaReservation.Account = "acct_x" }},
		{"an image reservation", func(r *CreateRequest) { r.MediaReservation.Kind = "images" }},
	}
	for _, c := range cases {
		r := good
		c.edit(&r)
		if _, err := e.svc.Create(context.Background(), r); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if open, _ := e.store.ListOpenTasks(); len(open) != 0 {
		t.Fatalf("rejected creates stored %d tasks", len(open))
	}
}

package upstream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/videos"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// fakeJobs mimics the upstream video job API (OpenAI's Videos API): create, poll with a
// scripted answer, content.
type fakeJobs struct {
	mu       sync.Mutex
	poll     func(id string) (status int, header http.Header, body string)
	lastBody []byte
	lastHdr  http.Header
	paths    []string
}

func (f *fakeJobs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.lastHdr = r.Header.Clone()
	f.paths = append(f.paths, r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/videos":
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.lastBody = body
		f.mu.Unlock()
		if bytes.Contains(body, []byte("forbidden")) {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"code":"moderation_blocked","message":"prompt refused"}}`)
			return
		}
		io.WriteString(w, `{"id":"video_up1","object":"video","model":"sora-2","status":"queued","progress":0,"seconds":"8","created_at":1712697600,"error":null}`)
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/content"):
		if r.URL.Path != "/v1/videos/video_up1/content" {
			w.WriteHeader(404)
			return
		}
		w.Header().Set("Content-Type", "video/mp4")
		io.WriteString(w, "\x00\x00\x00\x18ftypmp42-movie-bytes")
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/videos/"):
		status, hdr, body := f.poll(strings.TrimPrefix(r.URL.Path, "/v1/videos/"))
		for k, v := range hdr {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	default:
		w.WriteHeader(405)
	}
}

func videoRoute(t *testing.T, base string) (*catalog.Route, catalog.Timeouts) {
	t.Setenv("MG_TEST_VIDEO_KEY", "sk-up")
	return &catalog.Route{ID: "r1", Format: catalog.FormatChat, BaseURL: base + "/v1", CredentialEnv: "MG_TEST_VIDEO_KEY"},
		catalog.Timeouts{Connect: time.Second, FirstByte: 2 * time.Second, IdleStream: 2 * time.Second}
}

func TestCreateVideo(t *testing.T) {
	f := &fakeJobs{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	route, to := videoRoute(t, srv.URL)
	c := New()
	create := func(body []byte, key string) (videos.Job, error) {
		resp, err := c.Do(context.Background(), CreateVideoRequest(route, to, body, key))
		if err != nil {
			return videos.Job{}, err
		}
		return ReadJob(resp)
	}

	body := []byte(`{"model":"sora-2","prompt":"a calico cat","seconds":"8"}`)
	job, err := create(body, "video_abc")
	if err != nil {
		t.Fatal(err)
	}
	if job != (videos.Job{ID: "video_up1", Status: videos.JobQueued, Seconds: 8}) {
		t.Fatalf("job = %+v", job)
	}
	if !bytes.Equal(f.lastBody, body) || f.lastHdr.Get("Authorization") != "Bearer sk-up" ||
		f.lastHdr.Get("Content-Type") != "application/json" || f.lastHdr.Get("Idempotency-Key") != "video_abc" {
		t.Fatalf("upstream saw body %s, headers %v", f.lastBody, f.lastHdr)
	}

	_, err = create([]byte(`{"prompt":"forbidden"}`), "")
	var e *Error
	if !errors.As(err, &e) || e.Kind != ClientError || e.Status != 400 || !strings.Contains(string(e.Body), "moderation_blocked") {
		t.Fatalf("refused create: %v", err)
	}
	if f.lastHdr.Get("Idempotency-Key") != "" {
		t.Fatal("an idempotency key sent without one")
	}
}

func TestPollVideo(t *testing.T) {
	f := &fakeJobs{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	route, to := videoRoute(t, srv.URL)
	c := New()
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	cases := []struct {
		name   string
		status int
		header http.Header
		body   string
		job    videos.Job
		wait   time.Duration
		kind   Kind // for errors
		err    bool
	}{
		{"in progress", 200, nil, `{"id":"video_up1","status":"in_progress","progress":42}`, videos.Job{ID: "video_up1", Status: videos.JobInProgress, Progress: 42}, 0, 0, false},
		{"fractional progress", 200, nil, `{"id":"video_up1","status":"in_progress","progress":42.9}`, videos.Job{ID: "video_up1", Status: videos.JobInProgress, Progress: 42}, 0, 0, false},
		{"retry-after on 200", 200, hdr("Retry-After", "3"), `{"id":"video_up1","status":"queued","progress":0}`, videos.Job{ID: "video_up1", Status: videos.JobQueued}, 3 * time.Second, 0, false},
		{"completed", 200, nil, `{"id":"video_up1","status":"completed","progress":100}`, videos.Job{ID: "video_up1", Status: videos.JobCompleted, Progress: 100}, 0, 0, false},
		{"completed, seconds as the API writes them", 200, nil, `{"id":"video_up1","status":"completed","progress":100,"seconds":"4"}`, videos.Job{ID: "video_up1", Status: videos.JobCompleted, Progress: 100, Seconds: 4}, 0, 0, false},
		{"seconds as a number", 200, nil, `{"id":"video_up1","status":"completed","progress":100,"seconds":6}`, videos.Job{ID: "video_up1", Status: videos.JobCompleted, Progress: 100, Seconds: 6}, 0, 0, false},
		{"seconds unreadable", 200, nil, `{"id":"video_up1","status":"completed","progress":100,"seconds":"long"}`, videos.Job{ID: "video_up1", Status: videos.JobCompleted, Progress: 100}, 0, 0, false},
		{"failed with error object", 200, nil, `{"id":"video_up1","status":"failed","progress":0,"error":{"code":"content_policy","message":"refused"}}`,
			videos.Job{ID: "video_up1", Status: videos.JobFailed, Error: videos.JobError{Code: "content_policy", Message: "refused"}}, 0, 0, false},
		{"failed with error string", 200, nil, `{"id":"video_up1","status":"failed","error":"render crashed"}`,
			videos.Job{ID: "video_up1", Status: videos.JobFailed, Error: videos.JobError{Message: "render crashed"}}, 0, 0, false},
		{"429 with retry-after", 429, hdr("Retry-After", "7"), `{"error":{"message":"slow down"}}`, videos.Job{}, 7 * time.Second, RateLimited, true},
		{"404", 404, nil, `{"error":{"message":"no such video"}}`, videos.Job{}, 0, ServerError, true},
		{"500", 500, nil, `oops`, videos.Job{}, 0, ServerError, true},
		{"not json", 200, nil, `<html>`, videos.Job{}, 0, ServerError, true},
		{"no id", 200, nil, `{"status":"queued"}`, videos.Job{}, 0, ServerError, true},
	}
	for _, tc := range cases {
		f.poll = func(id string) (int, http.Header, string) {
			if id != "video_up1" {
				return 404, nil, ""
			}
			return tc.status, tc.header, tc.body
		}
		job, wait, err := c.PollVideo(context.Background(), route, to, "video_up1")
		if job != tc.job || wait != tc.wait {
			t.Errorf("%s: job %+v wait %v, want %+v %v", tc.name, job, wait, tc.job, tc.wait)
		}
		var e *Error
		switch {
		case !tc.err && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err && (!errors.As(err, &e) || e.Kind != tc.kind):
			t.Errorf("%s: err %v, want kind %v", tc.name, err, tc.kind)
		}
	}
	if last := f.paths[len(f.paths)-1]; last != "GET /v1/videos/video_up1" || f.lastHdr.Get("Authorization") != "Bearer sk-up" {
		t.Fatalf("last request %s with %v", last, f.lastHdr)
	}
}

func TestDownloadVideo(t *testing.T) {
	f := &fakeJobs{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	route, to := videoRoute(t, srv.URL)
	c := New()
	rc, ct, err := c.DownloadVideo(context.Background(), route, to, "video_up1")
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(data) != "\x00\x00\x00\x18ftypmp42-movie-bytes" || ct != "video/mp4" {
		t.Fatalf("download %q %q %v", data, ct, err)
	}
	_, _, err = c.DownloadVideo(context.Background(), route, to, "video_other")
	var e *Error
	if !errors.As(err, &e) || e.Status != 404 {
		t.Fatalf("missing content: %v", err)
	}
}

// A poll that gets no first byte in time is TimedOut, like any other call.
func TestPollVideoFirstByteTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	route, to := videoRoute(t, srv.URL)
	to.FirstByte = 50 * time.Millisecond
	_, _, err := New().PollVideo(context.Background(), route, to, "x")
	var e *Error
	if !errors.As(err, &e) || e.Kind != TimedOut {
		t.Fatalf("err = %v", err)
	}
}

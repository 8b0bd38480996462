package video

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// fakeAPI mimics an upstream's asynchronous video job API (OpenAI's Videos API) on the
// clock it is given: POST /v1/videos, GET /v1/videos/{id}, GET /v1/videos/{id}/content.
// Each job follows the "fake" object of its create body (jobSpec).
type fakeAPI struct {
	now func() time.Time

	mu      sync.Mutex
	jobs    map[string]*fakeJob
	creates map[string]int // create requests per Idempotency-Key
	polls   []pollRecord
	auth    map[string]bool // Authorization headers seen

	pausePolls   atomic.Bool
	holdFromPoll atomic.Int64 // when > 0, polls from this number on (counting from 1) are held
	paused       chan string  // "poll", when a request is held
	release      chan struct{}
}

// jobSpec scripts one job.
type jobSpec struct {
	Duration   string `json:"duration"`    // creation to completion; default 10s
	Queued     string `json:"queued"`      // spent queued first; default 0
	Fail       string `json:"fail"`        // the job fails at Duration with this code
	Throttle   int    `json:"throttle"`    // the first N polls answer 429
	RetryAfter int    `json:"retry_after"` // seconds of Retry-After with those 429s
	Made       int    `json:"made"`        // the seconds a completed job says it made (0: it does not say)
	Lose       bool   `json:"lose"`        // polls answer 404
	Size       int    `json:"size"`        // bytes of content; default 4096
	Content    []byte `json:"content"`     // the content's first bytes (base64) instead of an MP4's, still labelled video/mp4
	Hint       int    `json:"hint"`        // seconds of Retry-After on successful polls while running
}

type fakeJob struct {
	id      string
	created time.Time
	spec    jobSpec
	dur     time.Duration
	queued  time.Duration
	polls   int
}

type pollRecord struct {
	job    string
	at     time.Time
	status int
}

func newFakeAPI(now func() time.Time) *fakeAPI {
	return &fakeAPI{now: now, jobs: map[string]*fakeJob{}, creates: map[string]int{}, auth: map[string]bool{},
		paused: make(chan string, 16), release: make(chan struct{})}
}

// content is a job's video: deterministic bytes that start like an MP4.
func content(jobID string, size int) []byte {
	sum := sha256.Sum256([]byte(jobID))
	b := append([]byte("\x00\x00\x00\x18ftypmp42"), bytes.Repeat(sum[:], size/32+1)...)
	return b[:size]
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.auth[r.Header.Get("Authorization")] = true
	f.mu.Unlock()
	path := strings.TrimPrefix(r.URL.Path, "/v1/videos")
	switch {
	case r.Method == http.MethodPost && path == "":
		f.create(w, r)
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/content"):
		f.content(w, strings.TrimSuffix(strings.TrimPrefix(path, "/"), "/content"))
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/"):
		f.poll(w, r, strings.TrimPrefix(path, "/"))
	default:
		http.Error(w, "no such endpoint", 404)
	}
}

// hold blocks a request while paused, until released or the caller gives up.
func (f *fakeAPI) hold(r *http.Request, what string, paused *atomic.Bool) bool {
	if !paused.Load() {
		return false
	}
	f.paused <- what
	select {
	case <-f.release:
	case <-r.Context().Done():
	}
	return true
}

func (f *fakeAPI) create(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Fake jobSpec `json:"fake"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeErr(w, 400, "invalid_json", err.Error())
		return
	}
	spec := body.Fake
	f.mu.Lock()
	f.creates[r.Header.Get("Idempotency-Key")]++
	f.mu.Unlock()
	j := &fakeJob{created: f.now(), spec: spec, dur: 10 * time.Second}
	if d, err := time.ParseDuration(spec.Duration); err == nil {
		j.dur = d
	}
	if d, err := time.ParseDuration(spec.Queued); err == nil {
		j.queued = d
	}
	if j.spec.Size == 0 {
		j.spec.Size = 4096
	}
	f.mu.Lock()
	j.id = "vid_up_" + strconv.Itoa(len(f.jobs)+1)
	f.jobs[j.id] = j
	f.mu.Unlock()
	writeJSON(w, 200, map[string]any{"id": j.id, "object": "video", "model": "sora-2", "status": "queued", "progress": 0, "error": nil})
}

func (f *fakeAPI) poll(w http.ResponseWriter, r *http.Request, id string) {
	f.mu.Lock()
	n := int64(len(f.polls) + 1)
	f.mu.Unlock()
	if h := f.holdFromPoll.Load(); h > 0 && n >= h {
		f.pausePolls.Store(true)
	}
	if f.hold(r, "poll", &f.pausePolls) {
		writeErr(w, 503, "", "held")
		return
	}
	now := f.now()
	f.mu.Lock()
	j := f.jobs[id]
	status := 200
	switch {
	case j == nil || j.spec.Lose:
		status = 404
	case j.polls < j.spec.Throttle:
		status = 429
	}
	if j != nil {
		j.polls++
	}
	f.polls = append(f.polls, pollRecord{job: id, at: now, status: status})
	f.mu.Unlock()
	switch status {
	case 404:
		writeErr(w, 404, "not_found", "no such video")
		return
	case 429:
		w.Header().Set("Retry-After", strconv.Itoa(j.spec.RetryAfter))
		writeErr(w, 429, "rate_limit_exceeded", "slow down")
		return
	}
	elapsed := now.Sub(j.created)
	obj := map[string]any{"id": j.id, "object": "video", "status": "queued", "progress": 0, "error": nil}
	switch {
	case elapsed >= j.dur && j.spec.Fail != "":
		obj["status"], obj["error"] = "failed", map[string]string{"code": j.spec.Fail, "message": "generation failed: " + j.spec.Fail}
	case elapsed >= j.dur:
		obj["status"], obj["progress"] = "completed", 100
		if j.spec.Made > 0 {
			obj["seconds"] = strconv.Itoa(j.spec.Made)
		}
	case elapsed >= j.queued:
		obj["status"], obj["progress"] = "in_progress", int(elapsed*100/j.dur)
	}
	if j.spec.Hint > 0 && elapsed < j.dur {
		w.Header().Set("Retry-After", strconv.Itoa(j.spec.Hint))
	}
	writeJSON(w, 200, obj)
}

func (f *fakeAPI) content(w http.ResponseWriter, id string) {
	f.mu.Lock()
	j := f.jobs[id]
	f.mu.Unlock()
	if j == nil || f.now().Sub(j.created) < j.dur || j.spec.Fail != "" {
		writeErr(w, 404, "not_found", "no content")
		return
	}
	w.Header().Set("Content-Type", "video/mp4")
	b := content(id, j.spec.Size)
	copy(b, j.spec.Content)
	w.Write(b)
}

// pollLog is the jobs' polls so far.
func (f *fakeAPI) pollLog() []pollRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]pollRecord(nil), f.polls...)
}

func (f *fakeAPI) createCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.creates {
		n += c
	}
	return n
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, code, msg string) {
	e := map[string]any{"message": msg}
	if code != "" {
		e["code"] = code
	}
	writeJSON(w, status, map[string]any{"error": e})
}

// fakeBody is an upstream create body carrying a job script.
func fakeBody(spec string) []byte {
	if spec == "" {
		spec = "{}"
	}
	return []byte(fmt.Sprintf(`{"model":"sora-2","prompt":"a calico cat","seconds":"5","fake":%s}`, spec))
}

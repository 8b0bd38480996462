package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// recordedDir holds the recordings: <provider>/<name>.(sse|json) plus <name>.meta.json.
const recordedDir = "../../testdata/recorded"

// recording is one recorded upstream answer and what the suite needs to know about it.
type recording struct {
	Key  string // <provider>/<name>
	Body []byte // the bytes as recorded
	Meta meta
}

// meta is a recording's <name>.meta.json.
type meta struct {
	Format        string            `json:"format"` // upstream wire format: chat | messages | responses | gemini
	Stream        bool              `json:"stream"` // an SSE stream (else one whole JSON body)
	Status        int               `json:"status"`
	Headers       map[string]string `json:"headers"`
	Tools         []string          `json:"tools"`          // tool names the request must offer
	Covers        []int             `json:"covers"`         // numbered requirements the recording proves
	UpstreamModel string            `json:"upstream_model"` // the route's upstream model id
	Note          string            `json:"note"`
	Expect        *expectation      `json:"expect"` // exact hand-written facts, checked against the reference reader too
}

// expectation is what a person read off a recording; nil fields are not stated.
type expectation struct {
	Text      *string    `json:"text"`
	Reasoning *string    `json:"reasoning"`
	Finish    string     `json:"finish"`
	ToolCalls []toolCall `json:"tool_calls"`
	Usage     *usage     `json:"usage"`
}

// loadRecordings reads every recording under recordedDir, sorted by key.
func loadRecordings(t *testing.T) []recording {
	t.Helper()
	metas, err := filepath.Glob(filepath.Join(recordedDir, "*", "*.meta.json"))
	if err != nil || len(metas) == 0 {
		t.Fatalf("no recordings under %s: %v", recordedDir, err)
	}
	var out []recording
	for _, mp := range metas {
		var m meta
		raw, err := os.ReadFile(mp)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%s: %v", mp, err)
		}
		base := strings.TrimSuffix(mp, ".meta.json")
		ext := ".json"
		if m.Stream {
			ext = ".sse"
		}
		body, err := os.ReadFile(base + ext)
		if err != nil {
			t.Fatalf("%s: the recording for this meta: %v", mp, err)
		}
		if m.Status == 0 {
			m.Status = http.StatusOK
		}
		rel, _ := filepath.Rel(recordedDir, base)
		out = append(out, recording{Key: filepath.ToSlash(rel), Body: body, Meta: m})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// upstreamPath is the path a route of the format calls, below its base_url.
func upstreamPath(format, model string, stream bool) string {
	switch format {
	case "chat":
		return "/chat/completions"
	case "messages":
		return "/messages"
	case "responses":
		return "/responses"
	case "gemini":
		if stream {
			return "/models/" + model + ":streamGenerateContent"
		}
		return "/models/" + model + ":generateContent"
	}
	return ""
}

// fakeUpstream serves each recording under /<id>/…, as recorded: status, headers, and the
// bytes event by event with a flush after each, so the gateway reads a real stream. It
// notes every request that does not fit its recording (wrong path, or a whole-answer
// request for a stream recording and the reverse).
type fakeUpstream struct {
	srv   *httptest.Server
	byID  map[string]recording
	mu    sync.Mutex
	calls map[string]int
	wrong map[string][]string
}

func startFakeUpstream(t *testing.T, recs map[string]recording) *fakeUpstream {
	f := &fakeUpstream{byID: recs, calls: map[string]int{}, wrong: map[string][]string{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeUpstream) serve(w http.ResponseWriter, r *http.Request) {
	id, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	rec, ok := f.byID[id]
	if !ok {
		http.Error(w, "no recording "+id, http.StatusNotFound)
		return
	}
	var body struct {
		Stream bool `json:"stream"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	f.mu.Lock()
	f.calls[id]++
	if want := upstreamPath(rec.Meta.Format, rec.Meta.UpstreamModel, rec.Meta.Stream); "/"+rest != want {
		f.wrong[id] = append(f.wrong[id], fmt.Sprintf("the gateway called %s %s, the recording answers %s", r.Method, "/"+rest, want))
	} else if rec.Meta.Format != "gemini" && rec.Meta.Status == http.StatusOK && body.Stream != rec.Meta.Stream {
		f.wrong[id] = append(f.wrong[id], fmt.Sprintf("the gateway asked for stream=%v, the recording is stream=%v", body.Stream, rec.Meta.Stream))
	}
	f.mu.Unlock()
	for k, v := range rec.Meta.Headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rec.Meta.Status)
	if !rec.Meta.Stream {
		_, _ = w.Write(rec.Body)
		return
	}
	fl, _ := w.(http.Flusher)
	for _, ev := range splitEvents(rec.Body) {
		if _, err := w.Write(ev); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}

// taken returns (and forgets) how often a recording was served and what did not fit.
func (f *fakeUpstream) taken(id string) (int, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, w := f.calls[id], f.wrong[id]
	delete(f.calls, id)
	delete(f.wrong, id)
	return n, w
}

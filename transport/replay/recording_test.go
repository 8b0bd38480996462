package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// recordedDir holds the recordings: <provider>/<name>.(sse|json|eventstream|jsonl) plus
// <name>.meta.json.
const recordedDir = "../../testdata/recorded"

// recording is one recorded upstream answer and what the suite needs to know about it.
type recording struct {
	Key  string // <provider>/<name>
	Body []byte // the bytes as recorded
	Meta meta
}

// meta is a recording's <name>.meta.json.
type meta struct {
	Provider      string            `json:"provider"` // who served it: bedrock | vertex | azure; "" the format's own API
	Format        string            `json:"format"`   // upstream wire format: chat | messages | responses | gemini | converse
	Stream        bool              `json:"stream"`   // a stream (else one whole JSON body)
	Framing       string            `json:"framing"`  // a Bedrock stream's file: eventstream (the bytes) | lines (decoded events)
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
		body, err := os.ReadFile(base + m.ext())
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

// Bedrock stream files: the event-stream bytes as received, or one decoded event per line
// that the fake upstream encodes into frames (eventstream_test.go).
const (
	framingEventStream = "eventstream"
	framingLines       = "lines"
)

// ext is the recording's file extension: .sse or .json, and for Bedrock streams .eventstream
// (binary frames) or .jsonl (one decoded event per line).
func (m meta) ext() string {
	switch {
	case !m.Stream:
		return ".json"
	case m.Framing == framingEventStream:
		return ".eventstream"
	case m.Framing == framingLines:
		return ".jsonl"
	}
	return ".sse"
}

// upstreamPath is the path a direct route of the format calls, below its base_url (cloud
// routes: cloudPath).
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
	if r.URL.Path == tokenPath {
		serveToken(w, r)
		return
	}
	id, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	rec, ok := f.byID[id]
	if !ok {
		http.Error(w, "no recording "+id, http.StatusNotFound)
		return
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	f.mu.Lock()
	f.calls[id]++
	f.wrong[id] = append(f.wrong[id], misfits(rec, r, "/"+rest, raw)...)
	f.mu.Unlock()
	for k, v := range rec.Meta.Headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rec.Meta.Status)
	if !rec.Meta.Stream || rec.Meta.Status != http.StatusOK {
		_, _ = w.Write(rec.Body)
		return
	}
	pieces := splitEvents(rec.Body)
	switch rec.Meta.Framing {
	case framingEventStream:
		pieces = splitFrames(rec.Body)
	case framingLines:
		pieces = encodeLines(rec)
	}
	fl, _ := w.(http.Flusher)
	for _, ev := range pieces {
		if _, err := w.Write(ev); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}

// misfits are the ways a request does not fit its recording: the path (and api-version)
// the route's provider puts the call at, the stream mode, the credential, and the body a
// cloud takes for Anthropic's models.
func misfits(rec recording, r *http.Request, path string, raw []byte) []string {
	var out []string
	m := rec.Meta
	want, query := upstreamPath(m.Format, m.UpstreamModel, m.Stream), ""
	if m.Provider != "" {
		want, query = cloudPath(m)
	}
	if path != want {
		out = append(out, fmt.Sprintf("the gateway called %s %s, the recording answers %s", r.Method, path, want))
	}
	if query != "" && r.URL.Query().Get("api-version") != query {
		out = append(out, fmt.Sprintf("api-version = %q, want %q", r.URL.Query().Get("api-version"), query))
	}
	var body struct {
		Stream *bool `json:"stream"`
	}
	_ = json.Unmarshal(raw, &body)
	stream := body.Stream != nil && *body.Stream
	switch {
	case m.Provider == "bedrock" || m.Format == "gemini" || m.Status != http.StatusOK:
		// the path says whether it streams
	case stream != m.Stream:
		out = append(out, fmt.Sprintf("the gateway asked for stream=%v, the recording is stream=%v", stream, m.Stream))
	}
	return append(out, cloudMisfits(m, r, raw)...)
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

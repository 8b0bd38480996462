package nodetest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Fixed is an upstream that answers with given bytes (a provider's stream or body exactly as
// it sent it) over a real loopback socket, for what the simulator does not produce: a first
// tool index of 1, a stream without data: [DONE], a pretty-printed answer with a dated model
// id. Answers are set per route: a request to /r/<route>/… gets that route's answer.
type Fixed struct {
	URL     string
	srv     *httptest.Server
	mu      sync.Mutex
	answers map[string]FixedAnswer
	last    map[string][]byte
}

// FixedAnswer is one canned answer. A text/event-stream body is written event by event (up to
// each blank line), flushed as it goes, and the connection then ends where the body ends.
type FixedAnswer struct {
	Status      int // 200 when 0
	ContentType string
	Body        []byte
	Stall       time.Duration // silence after the body before the connection ends (an idle upstream)
}

// StartFixed starts a fixed upstream; the test's cleanup stops it.
func StartFixed(tb testing.TB) *Fixed {
	f := &Fixed{answers: map[string]FixedAnswer{}, last: map[string][]byte{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	f.URL = f.srv.URL
	tb.Cleanup(f.srv.Close)
	return f
}

// Set makes route answer a from now on.
func (f *Fixed) Set(route string, a FixedAnswer) {
	f.mu.Lock()
	f.answers[route] = a
	f.mu.Unlock()
}

// SetStream makes route answer with an event stream.
func (f *Fixed) SetStream(route string, body []byte) {
	f.Set(route, FixedAnswer{ContentType: "text/event-stream", Body: body})
}

// SetJSON makes route answer with a JSON body.
func (f *Fixed) SetJSON(route string, body []byte) {
	f.Set(route, FixedAnswer{ContentType: "application/json", Body: body})
}

// LastRequest is the body of the last request route received.
func (f *Fixed) LastRequest(route string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last[route]
}

func (f *Fixed) serve(w http.ResponseWriter, r *http.Request) {
	route, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/r/"), "/")
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	a, ok := f.answers[route]
	f.last[route] = body
	f.mu.Unlock()
	if !ok {
		http.Error(w, `{"error":{"message":"no answer set for this route","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", a.ContentType)
	status := a.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	if a.ContentType != "text/event-stream" {
		w.Write(a.Body)
		return
	}
	flusher, _ := w.(http.Flusher)
	rest := a.Body
	for len(rest) > 0 {
		n := len(rest)
		if i := bytes.Index(rest, []byte("\n\n")); i >= 0 {
			n = i + 2
		}
		w.Write(rest[:n])
		if flusher != nil {
			flusher.Flush()
		}
		rest = rest[n:]
	}
	if a.Stall > 0 {
		select {
		case <-time.After(a.Stall):
		case <-r.Context().Done():
		}
	}
}

// Testdata reads a file under the repository's testdata directory (path elements joined).
func Testdata(tb testing.TB, path ...string) []byte {
	tb.Helper()
	_, here, _, _ := runtime.Caller(0) // …/transport/node/nodetest/fixed.go
	root := filepath.Join(filepath.Dir(here), "..", "..", "..", "testdata")
	b, err := os.ReadFile(filepath.Join(append([]string{root}, path...)...))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// FixedCatalog has one model per upstream format, each with one route on a Fixed upstream
// ({{FIXED}} is its URL); the routes ask for undated model ids, as an operator writes them.
const FixedCatalog = `
server: {first_byte_timeout: 5s, idle_stream_timeout: 5s, max_body_bytes: 65536}
models:
  - id: fx-chat
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.000001", completion: "0.000002", cache_read: "0.0000001"}
    routes:
      - {id: fc, format: chat, base_url: "{{FIXED}}/r/fc/v1", upstream_model: gpt-4o, credential_env: NODETEST_SIM_KEY}
  - id: fx-msg
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.000003", completion: "0.000015"}
    routes:
      - {id: fm, format: messages, base_url: "{{FIXED}}/r/fm/v1", upstream_model: claude-sonnet-4-5, credential_env: NODETEST_SIM_KEY}
  - id: fx-resp
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.0000025", completion: "0.00001"}
    routes:
      - {id: fr, format: responses, base_url: "{{FIXED}}/r/fr/v1", upstream_model: gpt-5, credential_env: NODETEST_SIM_KEY}
  - id: fx-embed
    kind: embedding
    pricing: {prompt: "0.0000001"}
    routes:
      - {id: fe, format: chat, base_url: "{{FIXED}}/r/fe/v1", upstream_model: text-embedding-3-small, credential_env: NODETEST_SIM_KEY}
`

// StartWithFixed starts a gateway node whose catalog is FixedCatalog, in front of a new Fixed
// upstream (the simulator runs too, unused).
func StartWithFixed(tb testing.TB, opt Options) (*Env, *Fixed) {
	f := StartFixed(tb)
	return Start(tb, strings.ReplaceAll(FixedCatalog, "{{FIXED}}", f.URL), opt), f
}

// Disk is a data directory whose free space a test sets, for the store's full-disk guard
// (Options.Store.FreeSpace = disk.FreeSpace): a full disk without filling one.
type Disk struct{ free atomic.Int64 }

// NewDisk is a disk with free bytes free.
func NewDisk(free int64) *Disk {
	d := &Disk{}
	d.free.Store(free)
	return d
}

// Set changes the free space.
func (d *Disk) Set(free int64) { d.free.Store(free) }

// FreeSpace is persistence.Options.FreeSpace.
func (d *Disk) FreeSpace(string) (int64, error) { return d.free.Load(), nil }

package clients

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a reverse proxy between one cell's CLI and the gateway. It sees exactly what
// the CLI sends (the User-Agent and the headers client classification reads) and what the
// gateway answers, so a failing cell shows its failing exchange, and it tells whether the
// tool's output went back to the model. Nothing is written to disk.
type recorder struct {
	url string

	mu        sync.Mutex
	exchanges []exchange
	inFlight  sync.WaitGroup
}

// exchange is one request the CLI made.
type exchange struct {
	method, path string
	status       int
	userAgent    string
	signals      string // X-Title / originator / HTTP-Referer, when sent
	hasMarker    bool   // the request carried the tool's output back
	stream       bool   // the answer was a Server-Sent Events stream
	request      string // the body, cut short; kept only for failed exchanges
	response     string // the answer body of a failed exchange, cut short
}

// startRecorder listens on loopback and forwards to target.
func startRecorder(t *testing.T, target, marker string) *recorder {
	t.Helper()
	to, _ := url.Parse(target)
	rec := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(to)
	proxy.FlushInterval = -1 // streams pass through event by event
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.inFlight.Add(1)
		defer rec.inFlight.Done()
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		ex := exchange{
			method: r.Method, path: r.URL.RequestURI(), userAgent: r.Header.Get("User-Agent"),
			signals:   signalHeaders(r.Header),
			hasMarker: bytes.Contains(body, []byte(marker)),
		}
		cw := &captureWriter{ResponseWriter: w}
		// Recorded even when the proxy aborts (it panics with http.ErrAbortHandler when the
		// CLI hangs up before the stream's end, as a CLI may once its last event is in).
		defer func() {
			ex.status = cw.status
			ex.stream = strings.HasPrefix(cw.Header().Get("Content-Type"), "text/event-stream")
			if ex.status >= 400 {
				ex.request = cut(string(body), 4000)
				ex.response = cut(cw.body.String(), 2000)
			}
			rec.mu.Lock()
			rec.exchanges = append(rec.exchanges, ex)
			rec.mu.Unlock()
		}()
		proxy.ServeHTTP(cw, r)
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	rec.url = srv.URL
	return rec
}

func signalHeaders(h http.Header) string {
	var out []string
	for _, name := range []string{"X-Title", "HTTP-Referer", "originator"} {
		if v := h.Get(name); v != "" {
			out = append(out, name+": "+v)
		}
	}
	return strings.Join(out, "; ")
}

// settle waits (a while) for the exchanges still being relayed: a CLI may exit as soon as
// its stream's last event arrives, before the proxy has seen the stream end.
func (r *recorder) settle(d time.Duration) {
	done := make(chan struct{})
	go func() { r.inFlight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

func (r *recorder) all() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.exchanges...)
}

// modelCalls are the exchanges on the inference endpoints (not model lists, token counts).
func (r *recorder) modelCalls() []exchange {
	var out []exchange
	for _, ex := range r.all() {
		p := ex.path
		if strings.Contains(p, "/chat/completions") || strings.Contains(p, "/responses") ||
			strings.Contains(p, "Content") || (strings.Contains(p, "/messages") && !strings.Contains(p, "count_tokens")) {
			out = append(out, ex)
		}
	}
	return out
}

// summary lists the exchanges, one a line, with the first failure in full.
func (r *recorder) summary() string {
	var b strings.Builder
	var failed *exchange
	for _, ex := range r.all() {
		fmt.Fprintf(&b, "  %s %s → %d  UA %q %s\n", ex.method, ex.path, ex.status, ex.userAgent, ex.signals)
		if ex.status >= 400 && failed == nil {
			failed = &ex
		}
	}
	if failed != nil {
		fmt.Fprintf(&b, "  first failed exchange: %s %s → %d\n    request: %s\n    response: %s\n",
			failed.method, failed.path, failed.status, failed.request, failed.response)
	}
	return b.String()
}

// captureWriter keeps the status, and the body of an error answer.
type captureWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (c *captureWriter) WriteHeader(code int) {
	c.status = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if c.status >= 400 && c.body.Len() < 4000 {
		c.body.Write(p)
	}
	return c.ResponseWriter.Write(p)
}

func (c *captureWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

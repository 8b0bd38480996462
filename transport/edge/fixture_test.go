package edge_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/edge"
)

// bodyLimit is what the fixture's /read accepts.
const bodyLimit = 64 << 10

// fixture is a Guard in front of a small API on a real loopback server:
//
//	/read    reads the body with edge.ReadBody: 200 "<n> bytes", or the refusal
//	/unread  answers 401 without reading the body (a wrong key)
//	/stream  writes ?pieces= pieces of ?size= bytes, ?gap= ms apart, flushing each
//	/file    serves fileBytes with http.ServeContent (ranges too)
type fixture struct {
	t        *testing.T
	g        *edge.Guard
	srv      *httptest.Server
	server   atomic.Pointer[catalog.Server]
	mu       sync.Mutex
	refused  map[string]int
	problems chan *edge.Problem // each refusal /read met
	writeErr chan error         // how each /stream ended
	file     *os.File
}

// fileBytes is /file's content: past several write pieces, and not a multiple of one.
var fileBytes = []byte(strings.Repeat("0123456789abcdef", 20000) + "end")

type fixtureOpts struct {
	server       catalog.Server // zero fields: the catalog's defaults
	writeTimeout time.Duration
	grace        time.Duration
	http2        bool
}

func newFixture(t *testing.T, o fixtureOpts) *fixture {
	t.Helper()
	f := &fixture{t: t, refused: map[string]int{}, problems: make(chan *edge.Problem, 16), writeErr: make(chan error, 16)}
	s := o.server
	if s.BodyTimeout == 0 {
		s.BodyTimeout = catalog.DefaultBodyTimeout
	}
	if s.MaxConnsPerIP == 0 {
		s.MaxConnsPerIP = catalog.DefaultMaxConnsPerIP
	}
	if s.MaxBodyBytes == 0 {
		s.MaxBodyBytes = bodyLimit
	}
	f.server.Store(&s)
	path := filepath.Join(t.TempDir(), "file.bin")
	if err := os.WriteFile(path, fileBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.file, err = os.Open(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.file.Close() })
	f.g = edge.New(edge.Config{
		Server: f.server.Load,
		Refuse: func(w http.ResponseWriter, r *http.Request, p *edge.Problem) {
			p.SetRetryAfter(w)
			writeProblem(w, p)
		},
		Refused:      func(reason string) { f.mu.Lock(); f.refused[reason]++; f.mu.Unlock() },
		Memory:       1 << 30,
		Logger:       slog.New(slog.DiscardHandler),
		WriteTimeout: o.writeTimeout,
		Grace:        o.grace,
	})
	f.srv = httptest.NewUnstartedServer(f.g.Handler(http.HandlerFunc(f.serve)))
	f.g.Install(f.srv.Config)
	f.srv.Listener = f.g.Listener(f.srv.Listener)
	if o.http2 {
		f.srv.EnableHTTP2 = true
		f.srv.StartTLS()
	} else {
		f.srv.Start()
	}
	t.Cleanup(f.srv.Close)
	return f
}

func writeProblem(w http.ResponseWriter, p *edge.Problem) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(p.Status)
	json.NewEncoder(w).Encode(map[string]string{"code": p.Code, "message": p.Message})
}

func (f *fixture) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/read":
		body, p := edge.ReadBody(w, r, bodyLimit)
		if p != nil {
			f.problems <- p
			p.SetRetryAfter(w)
			writeProblem(w, p)
			return
		}
		fmt.Fprintf(w, "%d bytes", len(body))
	case "/file":
		http.ServeContent(w, r, "file.bin", time.Time{}, f.file)
	case "/unread":
		http.Error(w, "wrong key", http.StatusUnauthorized)
	case "/stream":
		q := r.URL.Query()
		pieces, _ := strconv.Atoi(q.Get("pieces"))
		size, _ := strconv.Atoi(q.Get("size"))
		gap, _ := time.ParseDuration(q.Get("gap") + "ms")
		piece := []byte(strings.Repeat("x", size))
		var err error
		for i := 0; (pieces == 0 || i < pieces) && err == nil; i++ {
			if i > 0 {
				time.Sleep(gap)
			}
			if _, err = w.Write(piece); err == nil {
				err = http.NewResponseController(w).Flush()
			}
		}
		f.writeErr <- err
	}
}

// refusals is how many refusals of each reason the guard counted.
func (f *fixture) refusals() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.refused {
		out[k] = v
	}
	return out
}

// heldReturns waits until every request has given its bytes back to the budget.
func (f *fixture) heldReturns(t *testing.T) {
	t.Helper()
	testutil.WaitFor(t, "the budget to be returned", func() bool { return f.g.Budget().Held() == 0 })
}

// raw is an HTTP/1.1 client on a bare connection, writing exactly what a case says.
type raw struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

func (f *fixture) dial(t *testing.T) *raw {
	t.Helper()
	c, err := net.Dial("tcp", f.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &raw{t: t, conn: c, br: bufio.NewReader(c)}
}

// head sends a request's header block; headers are "Name: value" lines.
func (c *raw) head(method, path string, headers ...string) {
	c.t.Helper()
	block := method + " " + path + " HTTP/1.1\r\nHost: gateway\r\n"
	for _, h := range headers {
		block += h + "\r\n"
	}
	c.send(block + "\r\n")
}

func (c *raw) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatal(err)
	}
}

// response reads one answer (within 30 s) and its body.
func (c *raw) response() (*http.Response, string) {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		c.t.Fatalf("reading the answer: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("reading the answer's body: %v", err)
	}
	return resp, string(b)
}

// closedWithin reports whether the server closes the connection (EOF, nothing more sent)
// within d.
func (c *raw) closedWithin(d time.Duration) error {
	c.conn.SetReadDeadline(time.Now().Add(d))
	n, err := c.br.Read(make([]byte, 1))
	if err == io.EOF && n == 0 {
		return nil
	}
	return fmt.Errorf("read %d bytes, %v; want the connection closed", n, err)
}

// code is a problem answer's code.
func code(body string) string {
	var p struct{ Code string }
	json.Unmarshal([]byte(body), &p)
	return p.Code
}

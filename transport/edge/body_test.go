package edge_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/edge"
)

// The bounded reader over real sockets: each body arrives as its case sends it and meets its
// answer (status, code, message, the connection closed on a refusal), and whatever path it
// took, every byte it took from the budget is back once its request ended.
func TestReadBodyBoundsEachBody(t *testing.T) {
	for _, c := range []struct {
		name    string
		server  catalog.Server
		grace   time.Duration
		send    func(c *raw)
		status  int
		code    string
		message string // a phrase of the refusal's message
		reason  string // the refusal counted
		// within bounds when the answer comes (a refusal at once, or at its deadline).
		within time.Duration
	}{
		{name: "a whole body of announced length", send: func(c *raw) {
			c.head("POST", "/read", "Content-Length: 1000")
			c.send(strings.Repeat("a", 1000))
		}, status: 200, message: "1000 bytes", within: 5 * time.Second},
		{name: "a chunked body", send: func(c *raw) {
			c.head("POST", "/read", "Transfer-Encoding: chunked")
			c.send("3e8\r\n" + strings.Repeat("a", 1000) + "\r\n7d0\r\n" + strings.Repeat("b", 2000) + "\r\n0\r\n\r\n")
		}, status: 200, message: "3000 bytes", within: 5 * time.Second},
		{name: "a body across two buffers", send: func(c *raw) {
			c.head("POST", "/read", "Content-Length: 60000")
			c.send(strings.Repeat("a", 60000))
		}, status: 200, message: "60000 bytes", within: 5 * time.Second},
		{name: "an announced length over the limit: at once, unread", send: func(c *raw) {
			c.head("POST", "/read", "Content-Length: 70000")
		}, status: 413, code: "request_too_large", message: "limit of 64 KiB", reason: edge.ReasonTooLarge, within: time.Second},
		{name: "a chunked body over the limit", send: func(c *raw) {
			c.head("POST", "/read", "Transfer-Encoding: chunked")
			c.send("11170\r\n" + strings.Repeat("a", 70000) + "\r\n0\r\n\r\n")
		}, status: 413, code: "request_too_large", message: "limit of 64 KiB", reason: edge.ReasonTooLarge, within: 5 * time.Second},
		{name: "a body that never comes", server: catalog.Server{BodyTimeout: time.Second}, send: func(c *raw) {
			c.head("POST", "/read", "Content-Length: 1000")
		}, status: 408, code: "request_timeout", message: "did not arrive within 1s (0 of 1000 bytes came)", reason: edge.ReasonTimeout,
			within: 4 * time.Second},
		{name: "a body that stops halfway", server: catalog.Server{BodyTimeout: time.Second}, send: func(c *raw) {
			c.head("POST", "/read", "Content-Length: 1000")
			c.send(strings.Repeat("a", 500))
		}, status: 408, code: "request_timeout", message: "(500 of 1000 bytes came)", reason: edge.ReasonTimeout, within: 4 * time.Second},
		{name: "a body slower than the minimum rate after the grace", server: catalog.Server{BodyMinRate: 1000}, grace: time.Second,
			send: func(c *raw) {
				c.head("POST", "/read", "Content-Length: 60000")
				c.send(strings.Repeat("a", 100))
			}, status: 408, code: "request_timeout", message: "arrived slower than 1000 bytes a second (100 of 60000 bytes in", reason: edge.ReasonSlow,
			within: 4 * time.Second},
		{name: "a body at twice the minimum rate, past the grace", server: catalog.Server{BodyMinRate: 1000}, grace: time.Second,
			send: func(c *raw) {
				c.head("POST", "/read", "Content-Length: 4000")
				for i := range 4 {
					if i > 0 {
						time.Sleep(500 * time.Millisecond)
					}
					c.send(strings.Repeat("a", 1000))
				}
			}, status: 200, message: "4000 bytes", within: 10 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureOpts{server: c.server, grace: c.grace})
			conn := f.dial(t)
			began := time.Now()
			c.send(conn)
			resp, body := conn.response()
			if took := time.Since(began); took > c.within {
				t.Errorf("answered after %v, want within %v", took, c.within)
			}
			if resp.StatusCode != c.status || code(body) != c.code || !strings.Contains(body, c.message) {
				t.Fatalf("got %d %s\nwant %d, code %q, message with %q", resp.StatusCode, body, c.status, c.code, c.message)
			}
			if c.status != 200 {
				if !resp.Close {
					t.Error("no Connection: close")
				}
				if err := conn.closedWithin(2 * time.Second); err != nil {
					t.Error(err)
				}
			}
			f.heldReturns(t)
			want := map[string]int{}
			if c.reason != "" {
				want[c.reason] = 1
			}
			if got := f.refusals(); !equalCounts(got, want) {
				t.Errorf("refusals %v, want %v", got, want)
			}
		})
	}
}

// A client that leaves in the middle of its body: the reader reports it (nobody to answer)
// and gives back what the body held.
func TestReadBodyClientLeaves(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	conn := f.dial(t)
	conn.head("POST", "/read", "Content-Length: 40000")
	conn.send(strings.Repeat("a", 30000))
	testutil.WaitFor(t, "the body to be read", func() bool { return f.g.Budget().Held() > 0 })
	conn.conn.Close()
	select {
	case p := <-f.problems:
		if p.Status != edge.StatusClientClosed || p.Code != "client_closed_request" {
			t.Errorf("problem %+v, want %d client_closed_request", p, edge.StatusClientClosed)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader did not notice the client leave")
	}
	f.heldReturns(t)
}

// The bytes in flight are capped: a body the budget cannot hold beside a stalled one is
// refused 503 with Retry-After, one that fits is read, and the stalled one's bytes come back
// when its client leaves. Buffers are taken as the bytes arrive: the stalled body holds its
// buffers (16 KiB, then the 48 KiB left of its announced 64 KiB), not more.
func TestInFlightCapRefusesWhatDoesNotFit(t *testing.T) {
	f := newFixture(t, fixtureOpts{server: catalog.Server{MaxBodyBytesInFlight: 100 << 10}})
	stalled := f.dial(t)
	stalled.head("POST", "/read", "Content-Length: 65536")
	stalled.send(strings.Repeat("a", 60000))
	testutil.WaitFor(t, "the stalled body's buffers", func() bool { return f.g.Budget().Held() == 65536 })
	for _, c := range []struct {
		name   string
		length int
		status int
		code   string
	}{
		{"a body over what is left", 40000, 503, "too_many_request_bodies"},
		{"a body within what is left", 20000, 200, ""},
	} {
		conn := f.dial(t)
		conn.head("POST", "/read", "Content-Length: "+strconv.Itoa(c.length))
		conn.send(strings.Repeat("b", c.length))
		resp, body := conn.response()
		if resp.StatusCode != c.status || code(body) != c.code {
			t.Fatalf("%s: %d %s, want %d %q", c.name, resp.StatusCode, body, c.status, c.code)
		}
		if c.status == 503 && resp.Header.Get("Retry-After") != "1" {
			t.Errorf("%s: Retry-After %q, want 1", c.name, resp.Header.Get("Retry-After"))
		}
		testutil.WaitFor(t, "the stalled body's bytes alone", func() bool { return f.g.Budget().Held() == 65536 })
	}
	stalled.conn.Close()
	f.heldReturns(t)
	if got, want := f.refusals(), map[string]int{edge.ReasonBudget: 1}; !equalCounts(got, want) {
		t.Errorf("refusals %v, want %v", got, want)
	}
}

// A request answered without its body being read (a wrong key): on HTTP/1 the answer comes
// at once with Connection: close and the connection ends, whether the body never comes or
// is already sent (read after the answer, so the close resets nothing the client has not
// read).
func TestUnreadBodyIsAnsweredAtOnceAndClosed(t *testing.T) {
	for _, c := range []struct {
		name string
		body string
	}{
		{"a body that never comes", ""},
		{"a body already sent", strings.Repeat("a", 1000)},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, fixtureOpts{})
			conn := f.dial(t)
			began := time.Now()
			conn.head("POST", "/unread", "Content-Length: 1000")
			conn.send(c.body)
			resp, _ := conn.response()
			if took := time.Since(began); resp.StatusCode != 401 || took > time.Second {
				t.Fatalf("%d after %v, want 401 at once", resp.StatusCode, took)
			}
			if !resp.Close {
				t.Error("no Connection: close")
			}
			if err := conn.closedWithin(2 * time.Second); err != nil {
				t.Error(err)
			}
		})
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

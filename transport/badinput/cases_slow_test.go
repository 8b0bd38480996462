package badinput_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
)

// slowServer are the suite catalog's bounds on slow and greedy clients: a body must arrive
// within 2 s, and request bodies may hold 96 KiB together (a body of the 64 KiB limit and a
// little more). The cases that need other bounds reload the catalog for their run.
const slowServer = "body_timeout: 2s, max_body_bytes_in_flight: 98304"

// slowCases: bodies that come late, slowly or never, bodies past the bytes in flight, and
// connections past their address's cap (docs/running.md, "Slow and greedy clients"). The
// requests go over bare connections (wire), so a body can be announced and not sent.
func slowCases() []badCase {
	const p = "/v1/chat/completions"
	timeout := chatErr(408, "invalid_request_error", "request_timeout", "", "did not arrive within 2s (0 of 1000 bytes came)")
	unknownKey := "Bearer sk-token-" + strings.Repeat("u", 48)
	tooManyConns := "more connections open to the gateway than the 8 one address may hold"
	return []badCase{
		post("slow", "a body that never comes", p, "", timeout, clientError(1000)).
			sentAs(wire{length: 1000, after: 2 * time.Second, within: 5 * time.Second, closes: true}),
		post("slow", "a body that stops halfway", p, `{"model":"chat",`,
			chatErr(408, "invalid_request_error", "request_timeout", "", "did not arrive within 2s (16 of 1000 bytes came)"), clientError(1000)).
			sentAs(wire{length: 1000, after: 2 * time.Second, within: 5 * time.Second, closes: true}),
		post("slow", "a body slower than the minimum rate", p, strings.Repeat(" ", 100),
			chatErr(408, "invalid_request_error", "request_timeout", "", "arrived slower than 4096 bytes a second (100 of 30000 bytes in"),
			clientError(1000)).
			sentAs(wire{length: 30000, after: 5 * time.Second, within: 9 * time.Second, closes: true}).
			preparing(reloadWith("body_timeout: 30s")),
		post("slow", "a messages body that never comes", "/v1/messages", "",
			messagesErr(408, "timeout_error", "request_timeout", "did not arrive within 2s"), clientError(1000)).
			withHeaders("anthropic-version", "2023-06-01").
			sentAs(wire{length: 1000, after: 2 * time.Second, within: 5 * time.Second, closes: true}),
		post("slow", "a wrong key, its body never comes", p, "", unknownKeyAnswer, nothing).
			withKey(keyNone).withHeaders("Authorization", unknownKey).
			sentAs(wire{length: 1000, within: time.Second, closes: true}),
		post("slow", "a wrong key on messages, its body never comes", "/v1/messages", "",
			messagesErr(401, "authentication_error", "invalid_api_key", "invalid API key"), nothing).
			withKey(keyNone).withHeaders("x-api-key", "sk-token-"+strings.Repeat("u", 48), "anthropic-version", "2023-06-01").
			sentAs(wire{length: 1000, within: time.Second, closes: true}),
		{endpoint: "slow", name: "a wrong admin token, its body never comes", method: "POST", path: "/admin/v1/accounts", key: keyNone, admin: true,
			headers: []string{"Authorization", "Bearer not-the-token"},
			want:    chatErr(401, "authentication_error", "invalid_admin_token", "", "Authorization: Bearer <admin token>"), eff: nothing,
			over: wire{length: 1000, within: time.Second, closes: true}.send},
		{endpoint: "slow", name: "a login whose body never comes", method: "POST", path: "/auth/login", key: keyNone,
			want: chatErr(408, "invalid_request_error", "request_timeout", "", "did not arrive within 2s"), eff: nothing,
			over: wire{length: 100, after: 2 * time.Second, within: 5 * time.Second, closes: true}.send},
		post("slow", "a body past the bytes in flight", p, `{"model":"chat",`+hello+`,"metadata":{"pad":"`+strings.Repeat("p", 40000)+`"}}`,
			chatErr(503, "overloaded_error", "too_many_request_bodies", "", "as many request bodies as its memory allows"), refused).
			sentAs(wire{within: 5 * time.Second, retryAfter: "1", closes: true}).
			preparing(stallBody(60000)),
		post("slow", "a connection past its address's cap", p, chatHello, chatErr(429, "rate_limit_error", "too_many_connections", "", tooManyConns), nothing).
			withKey(keyNone).withHeaders("Authorization", "Bearer {key}").
			sentAs(wire{from: "127.0.0.2", within: time.Second, retryAfter: "1", closes: true}).
			preparing(fillConns("127.0.0.2", 8)),
		post("slow", "a messages connection past its address's cap", "/v1/messages", `{"model":"msg","max_tokens":10,`+hello+`}`,
			messagesErr(429, "rate_limit_error", "too_many_connections", tooManyConns), nothing).
			withKey(keyNone).withHeaders("x-api-key", "{key}", "anthropic-version", "2023-06-01").
			sentAs(wire{from: "127.0.0.2", within: time.Second, retryAfter: "1", closes: true}).
			preparing(fillConns("127.0.0.2", 8)),
	}
}

var unknownKeyAnswer = chatErr(401, "authentication_error", "invalid_api_key", "", "invalid API key")

func (c badCase) sentAs(w wire) badCase { c.over = w.send; return c }

func (c badCase) preparing(f func(*testing.T, *suite, *caseAccount)) badCase {
	c.prepare = f
	return c
}

// wire sends a request over a bare connection: its headers, Content-Length: length (0: the
// body's), and of the body only the case's (which may be shorter, or nothing), then waits.
// The answer must come after after and within within, with Retry-After: retryAfter, and with
// closes the connection must end after it.
type wire struct {
	from          string // the local address to connect from ("": any)
	length        int
	after, within time.Duration
	retryAfter    string
	closes        bool
}

func (w wire) send(t *testing.T, req *http.Request, addr string) (*http.Response, []byte) {
	t.Helper()
	conn := dialFrom(t, w.from, addr)
	body, _ := io.ReadAll(req.Body)
	length := w.length
	if length == 0 {
		length = len(body)
	}
	var head strings.Builder
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", req.Method, req.URL.RequestURI(), addr, length)
	req.Header.Write(&head)
	began := time.Now()
	if _, err := io.WriteString(conn, head.String()+"\r\n"+string(body)); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(w.within + 5*time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("the answer's body: %v", err)
	}
	if took := time.Since(began); took < w.after || took > w.within {
		t.Errorf("answered after %v, want from %v to %v", took.Round(time.Millisecond), w.after, w.within)
	}
	if got := resp.Header.Get("Retry-After"); got != w.retryAfter {
		t.Errorf("Retry-After %q, want %q", got, w.retryAfter)
	}
	if w.closes {
		if !resp.Close {
			t.Error("the answer has no Connection: close")
		}
		conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Errorf("after the answer: %d bytes, %v; want the connection closed", n, err)
		}
	}
	return resp, raw
}

func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// reloadWith reloads the suite's catalog with setting in place of the suite's own for the
// case's run (a setting slowServer has not: added to it), and the suite's own after it.
func reloadWith(setting string) func(*testing.T, *suite, *caseAccount) {
	return func(t *testing.T, s *suite, _ *caseAccount) {
		path := filepath.Join(s.env.DataDir, "catalog.yaml")
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		load := func(b []byte) {
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := s.env.Node.Reload(); err != nil {
				t.Fatal(err)
			}
		}
		name, _, _ := strings.Cut(setting, ":")
		server := slowServer + ", " + setting
		if strings.Contains(slowServer, name+":") {
			server = regexp.MustCompile(name+`: [^,]*`).ReplaceAllString(slowServer, setting)
		}
		load([]byte(strings.Replace(string(orig), slowServer, server, 1)))
		t.Cleanup(func() { load(orig) })
	}
}

// stallBody holds n bytes of the bytes in flight for the case's run: a body of the env's own
// account announced at the 64 KiB limit, sent but for its end (its buffers: all 64 KiB), on
// a catalog that waits for it.
func stallBody(n int) func(*testing.T, *suite, *caseAccount) {
	return func(t *testing.T, s *suite, c *caseAccount) {
		reloadWith("body_timeout: 30s")(t, s, c)
		addr := strings.TrimPrefix(s.env.Node.URL, "http://")
		conn := dialFrom(t, "", addr)
		fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Length: 65536\r\n\r\n%s",
			addr, s.env.Key, strings.Repeat("a", n))
		budget := s.env.Node.Edge.Budget()
		testutil.WaitFor(t, "the stalled body's buffers", func() bool { return budget.Held() == 65536 })
		t.Cleanup(func() {
			conn.Close()
			testutil.WaitFor(t, "the bytes in flight given back", func() bool { return budget.Held() == 0 })
		})
	}
}

// fillConns opens n connections from the address from, its cap for the case's run.
func fillConns(from string, n int) func(*testing.T, *suite, *caseAccount) {
	return func(t *testing.T, s *suite, c *caseAccount) {
		reloadWith("max_conns_per_ip: "+strconv.Itoa(n))(t, s, c)
		addr := strings.TrimPrefix(s.env.Node.URL, "http://")
		a := netip.MustParseAddr(from)
		// Cleanups run last first: this wait comes after the connections' close.
		t.Cleanup(func() {
			testutil.WaitFor(t, "the address's connections closed", func() bool { return s.env.Node.Edge.Conns(a) == 0 })
		})
		for range n {
			dialFrom(t, from, addr)
		}
		testutil.WaitFor(t, "the address's connections counted", func() bool { return s.env.Node.Edge.Conns(a) == n })
	}
}

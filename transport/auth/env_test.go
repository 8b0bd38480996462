package auth

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/mail"
	"github.com/modelgate/modelgate/transport/mail/mailtest"
)

// env is the /auth API on a loopback socket over a real Pebble store, mailing through a
// real SMTP server on loopback.
type env struct {
	t     *testing.T
	url   string
	store *persistence.Store
	smtp  *mailtest.Server
	clock *testutil.Clock
	srv   *Server
}

func newEnv(t *testing.T, limits Limits) *env {
	t.Helper()
	store, err := persistence.Open(filepath.Join(t.TempDir(), "pebble"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	smtp := mailtest.Start(t)
	mailer, err := mail.NewSMTP(mail.Config{Host: smtp.Host, Port: smtp.Port, Security: mail.None, From: "modelgate <noreply@example.com>"})
	if err != nil {
		t.Fatal(err)
	}
	r := mux.NewRouter()
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	c := testutil.NewClock(time.Now().UTC().Truncate(time.Second))
	a := New(Config{Store: store, Mailer: mailer, Plan: "free", BaseURL: srv.URL, Limits: limits, Now: c.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(a.Close)
	a.Register(r)
	return &env{t: t, url: srv.URL, store: store, smtp: smtp, clock: c, srv: a}
}

// answer is one HTTP answer, its body read.
type answer struct {
	status int
	header http.Header
	body   string
	resp   *http.Response
}

// call sends a request; session (a cookie value) and csrf are sent when not empty.
func (e *env) call(method, path, body, session, csrf string) answer {
	e.t.Helper()
	return e.callFrom("", method, path, body, session, csrf)
}

// callFrom sends a request from the loopback address from ("": the system's choice, which
// is 127.0.0.1): Linux's loopback takes any 127/8 source, so each is another client.
func (e *env) callFrom(from, method, path, body, session, csrf string) answer {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if session != "" {
		req.AddCookie(&http.Cookie{Name: CookieName, Value: session})
	}
	if csrf != "" {
		req.Header.Set(CSRFHeader, csrf)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if from != "" {
		dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		client.Transport = &http.Transport{DialContext: dialer.DialContext}
	}
	resp, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(raw), resp: resp}
}

// cookie is the session cookie an answer set.
func (a answer) cookie(t *testing.T) *http.Cookie {
	t.Helper()
	for _, c := range a.resp.Cookies() {
		if c.Name == CookieName {
			return c
		}
	}
	t.Fatalf("no %s cookie in %v", CookieName, a.header)
	return nil
}

// token is the token query parameter of a mailed link.
func token(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("token")
}

// signupVerified signs email up and follows the link of the mail it gets.
func (e *env) signupVerified(email, password string) {
	e.t.Helper()
	if a := e.call("POST", "/auth/signup", `{"email":"`+email+`","password":"`+password+`"}`, "", ""); a.status != 202 {
		e.t.Fatalf("signup: %d %s", a.status, a.body)
	}
	link := e.smtp.Next(e.t).Link(e.t)
	if a := e.call("GET", strings.TrimPrefix(link, e.url), "", "", ""); a.status != 303 {
		e.t.Fatalf("verify: %d %s", a.status, a.body)
	}
}

// login logs in and returns the session id and CSRF token.
func (e *env) login(email, password string) (string, string) {
	e.t.Helper()
	a := e.call("POST", "/auth/login", `{"email":"`+email+`","password":"`+password+`"}`, "", "")
	if a.status != 200 {
		e.t.Fatalf("login: %d %s", a.status, a.body)
	}
	csrf := between(a.body, `"csrf_token":"`, `"`)
	return a.cookie(e.t).Value, csrf
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(rest, to)
	return v
}

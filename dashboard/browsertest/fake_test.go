package browsertest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/dashboard"
)

// fixtureDir holds the JSON answers the fake serves (testdata/dashboard at the repo root).
var fixtureDir = filepath.Join("..", "..", "testdata", "dashboard")

// reply is one answer of the fake: a status and a fixture file (or none), plus headers.
type reply struct {
	status  int
	fixture string
	headers map[string]string
}

// seenCall is a request the fake received, as the page sent it.
type seenCall struct {
	method, path, query, csrf, body string
}

// fakeGateway serves the real dashboard handler and, beside it, a small fake of the JSON
// contract (/auth/*, /account/v1/*) answering from fixtures: page behaviour that needs no
// real server is tested against it. It is same-origin with the pages, as the gateway is.
type fakeGateway struct {
	URL     string
	tb      testing.TB
	mu      sync.Mutex
	answers map[string]func(*http.Request) reply // "METHOD /path"
	calls   []seenCall
}

func startFakeGateway(tb testing.TB) *fakeGateway {
	f := &fakeGateway{tb: tb, answers: map[string]func(*http.Request) reply{}}
	mux := http.NewServeMux()
	mux.Handle(dashboard.Prefix, dashboard.Handler())
	mux.HandleFunc("/", f.serve)
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// answer makes "METHOD /path" answer r from now on.
func (f *fakeGateway) answer(route string, r reply) {
	f.answerWith(route, func(*http.Request) reply { return r })
}

func (f *fakeGateway) answerWith(route string, fn func(*http.Request) reply) {
	f.mu.Lock()
	f.answers[route] = fn
	f.mu.Unlock()
}

// loggedIn answers the session and the account reads of an authed page from fixtures.
func (f *fakeGateway) loggedIn() {
	f.answer("GET /auth/session", reply{status: 200, fixture: "session.json"})
	f.answer("GET /account/v1/me", reply{status: 200, fixture: "me.json"})
	f.answer("GET /account/v1/keys", reply{status: 200, fixture: "keys.json"})
	f.answer("GET /account/v1/credits", reply{status: 200, fixture: "credits.json"})
	f.answer("GET /account/v1/plan", reply{status: 200, fixture: "plan.json"})
	f.answerWith("GET /account/v1/usage", func(r *http.Request) reply {
		if r.URL.Query().Get("cursor") != "" {
			return reply{status: 200, fixture: "usage-page-2.json"}
		}
		return reply{status: 200, fixture: "usage-page-1.json"}
	})
}

// callsTo are the requests received for "METHOD /path", oldest first.
func (f *fakeGateway) callsTo(method, path string) []seenCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []seenCall
	for _, c := range f.calls {
		if c.method == method && c.path == path {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeGateway) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.calls = append(f.calls, seenCall{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("X-CSRF-Token"), string(body)})
	fn, ok := f.answers[r.Method+" "+r.URL.Path]
	f.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"message":"the fake has no answer for `+r.Method+` `+r.URL.Path+`","type":"invalid_request_error","code":"not_found","param":null}}`)
		return
	}
	a := fn(r)
	for k, v := range a.headers {
		w.Header().Set(k, v)
	}
	if a.fixture == "" {
		w.WriteHeader(a.status)
		return
	}
	raw, err := os.ReadFile(filepath.Join(fixtureDir, a.fixture))
	if err != nil {
		f.tb.Errorf("fixture: %v", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	w.Write(raw)
}

// fixtureMessage is the error message of an error fixture.
func fixtureMessage(tb testing.TB, name string) string {
	raw, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		tb.Fatal(err)
	}
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal(raw, &e); err != nil || e.Error.Message == "" {
		tb.Fatalf("%s is not an error fixture: %v", name, err)
	}
	return e.Error.Message
}

// Package badinput_test is the bad-input suite: malformed, hostile and out-of-range requests on
// every endpoint of a live gateway (real sockets, the simulator as the upstream), each of which
// must get the right status in its client's own envelope, move the account's counters exactly
// as the counting rule says (docs/decisions.md, "Counting"), store nothing else, call no
// upstream when the gateway must refuse first, and leave the gateway serving.
package badinput_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// suiteCatalog is the default test catalog with the messages model counting two calls, small
// bounds on slow and greedy clients (slowServer), a chat model on one route whose answers
// are capped at 50 tokens, an image model of its own sizes and qualities, a removed model,
// and the plans the cases run on: roomy (room for everything), interactive (no automated
// clients), free (what an account created without a plan gets).
var suiteCatalog = strings.NewReplacer("  - id: msg\n    kind: chat\n", "  - id: msg\n    kind: chat\n    quota_multiplier: 2\n",
	"max_body_bytes: 65536}", "max_body_bytes: 65536, "+slowServer+"}").Replace(nodetest.DefaultCatalog) + `  - id: solo
    kind: chat
    max_output_tokens: 50
    routes:
      - {id: s, format: chat, base_url: "{{SIM}}/r/s/v1", upstream_model: up-s, credential_env: NODETEST_SIM_KEY}
  - id: img-sized
    kind: image
    sizes: [1024x1024, 1536x1024]
    qualities: [low, high]
    routes:
      - {id: is, format: chat, base_url: "{{SIM}}/r/is/v1", upstream_model: up-is, credential_env: NODETEST_SIM_KEY}
removed:
  - {id: chat-old, replacement: chat}
plans:
  - {name: roomy, window_requests: 1000, weekly_requests: 10000, burst_rpm: 1000, allow_automated: true, image_daily_limit: 10, video_daily_seconds: 100}
  - {name: interactive, window_requests: 1000, burst_rpm: 1000}
  - {name: free, window_requests: 10, burst_rpm: 10}
`

// simRoutes are the simulator routes of suiteCatalog.
var simRoutes = []string{"a", "b", "c", "m", "g", "r", "i", "gi", "v", "e", "s", "is"}

// keyKind is the credential a case sends.
type keyKind int

const (
	keyMain       keyKind = iota // the case account's key, as Authorization: Bearer
	keyNone                      // none (the case's headers may carry their own)
	keyRestricted                // a key of the account restricted to model img
	keyZDR                       // a zero-data-retention key of the account
	keyRevoked                   // a revoked key of the account
	keyAdmin                     // the operator's admin token
)

// badCase is one request and what it must do. Its path, body and header values may name the
// case's account ({acct}), its key ({key}, {keyid}), the account's e-mail in capitals
// ({EMAIL}) and a video task of another account ({task}).
type badCase struct {
	endpoint           string // the group the suite reports it under
	name               string
	method, path, body string
	headers            []string // name, value pairs, set after the key's
	key                keyKind
	known              bool   // a valid key goes in the case's headers (it gets rate headers)
	admin              bool   // sent to the admin listener (the admin API's cases), not the public port
	plan               string // the account's plan ("" = roomy)
	from               string // the loopback address the case's requests come from ("": 127.0.0.1)
	want               answer
	eff                effect
	// prepare readies the account before the case is measured; check looks further at the
	// answer (the upstream's request, a served body).
	prepare func(t *testing.T, s *suite, c *caseAccount)
	check   func(t *testing.T, s *suite, c *caseAccount, raw []byte)
	// over sends the request over a bare connection its own way (a body late or never);
	// nil: the ordinary client.
	over func(t *testing.T, req *http.Request, addr string) (*http.Response, []byte)
}

// answer is the status and, for an error, its envelope.
type answer struct {
	status int
	format string // chat, messages or google; "" for a success; "bare" when Go's HTTP server answers itself
	typ    string // the error's type, or Google's status
	code   string // its code, or Google's ErrorInfo reason lower-cased
	param  string // its param (Google: the BadRequest field); "" when it names none
	msg    string // a phrase the message holds
}

// effect is what the answer does to the account, by the counting rule.
type effect struct {
	logged  bool  // the answer has a log entry (the key was known)
	counted bool  // it counts: its units from the window and weekly allowance, a burst slot
	units   int64 // thousandths of a call it takes
	served  bool  // an upstream answered it (one upstream call)
	// calls are the upstream calls of an answer that tried more than one route (0: served's);
	// images the day's images it used, files the asset files it stored.
	calls  int64
	images int64
	files  int
}

var (
	nothing = effect{}             // no account known, or a read, a token count, the admin API
	refused = effect{logged: true} // a refusal of a known key: logged, counting nothing
)

// clientError counts units (the model's, 1000 when the request names none) at no cost.
func clientError(units int64) effect { return effect{logged: true, counted: true, units: units} }

// servedBy counts units within the plan: no cost, one upstream call.
func servedBy(units int64) effect {
	return effect{logged: true, counted: true, units: units, served: true}
}

func chatErr(status int, typ, code, param, msg string) answer {
	return answer{status: status, format: "chat", typ: typ, code: code, param: param, msg: msg}
}

func messagesErr(status int, typ, code, msg string) answer {
	return answer{status: status, format: "messages", typ: typ, code: code, msg: msg}
}

func googleErr(status int, typ, code, param, msg string) answer {
	return answer{status: status, format: "google", typ: typ, code: code, param: param, msg: msg}
}

// invalid is the gateway's 400 in the chat envelope.
func invalid(param, msg string) answer {
	return chatErr(400, "invalid_request_error", "invalid_request", param, msg)
}

var ok200 = answer{status: 200}

// suite is the gateway the cases run against.
type suite struct {
	env    *nodetest.Env
	client *http.Client // never follows a redirect: the case sees the gateway's own answer
	probe  string       // the key of the account whose call shows the gateway still serves
	task   string       // a finished video task of the env's account
	seq    int
}

// caseAccount is a case's own account, so its counters and log are the case's alone.
type caseAccount struct {
	acct   persistence.Account
	key    string // its unrestricted key
	keyID  string
	secret string // the credential the case sends (keyKind)
}

var requestID = regexp.MustCompile(`^req_[0-9a-f]{24}$`)

// TestBadInputIsAnsweredByTheContract is the bad-input suite: every case over every endpoint
// (public and admin, and paths no endpoint serves) gets its exact status in its client's
// envelope with the request id, counts by the counting rule and nothing else, stores nothing
// else, calls no upstream unless served, and the gateway serves a good call after it. The count
// of cases per endpoint is logged (go test -v).
func TestBadInputIsAnsweredByTheContract(t *testing.T) {
	s := newSuite(t)
	var cases []badCase
	for _, group := range [][]badCase{chatCases(), messagesCases(), responsesCases(), geminiCases(), embeddingsCases(),
		imagesCases(), videosCases(), readCases(), adminCases(), unroutedCases(),
		adminPlaneCases(), edgeCases(), fetchCases(), inputsCases(), authFailCases(), slowCases()} {
		cases = append(cases, group...)
	}
	perEndpoint := map[string]int{}
	for _, c := range cases {
		perEndpoint[c.endpoint]++
		t.Run(c.endpoint+"/"+c.name, func(t *testing.T) { s.run(t, c) })
	}
	if len(cases) < 100 {
		t.Errorf("%d cases; the suite holds at least 100", len(cases))
	}
	names := make([]string, 0, len(perEndpoint))
	for n := range perEndpoint {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("%-22s %3d cases", n, perEndpoint[n])
	}
	t.Logf("%-22s %3d cases", "total", len(cases))
}

func newSuite(t *testing.T) *suite {
	env := nodetest.Start(t, suiteCatalog, nodetest.Options{Plan: "roomy"})
	s := &suite{env: env, client: &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	acct, err := env.Node.Store.CreateAccount("probe@example.com", "roomy")
	if err != nil {
		t.Fatal(err)
	}
	if _, s.probe, err = env.Node.Store.CreateKey(acct.ID, persistence.KeySpec{Name: "probe"}); err != nil {
		t.Fatal(err)
	}
	s.task = s.finishedVideo(t)
	return s
}

// finishedVideo makes a video task of the env's account and waits for its end, so no poll
// or download of it runs while the cases count upstream calls and stored files.
func (s *suite) finishedVideo(t *testing.T) string {
	s.env.Sim.SetBehavior("v", simulator.Behavior{VideoDuration: 100 * time.Millisecond})
	defer s.env.Sim.SetBehavior("v", simulator.Behavior{})
	resp := s.env.Post("/v1/videos", s.env.Key, `{"model":"vid","prompt":"waves","mode":"text","seconds":"4"}`)
	raw := nodetest.Read(t, resp)
	var task struct{ ID, Status string }
	if err := json.Unmarshal(raw, &task); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the video of another account: %d %s", resp.StatusCode, raw)
	}
	for deadline := time.Now().Add(20 * time.Second); task.Status != "completed"; {
		if time.Now().After(deadline) {
			t.Fatalf("the video of another account is still %s", task.Status)
		}
		time.Sleep(50 * time.Millisecond)
		resp := s.env.Do(http.MethodGet, "/v1/videos/"+task.ID+"?model=vid", s.env.Key, "")
		json.Unmarshal(nodetest.Read(t, resp), &task)
	}
	for open := 1; open > 0; { // its settle ends the task's work
		tasks, err := s.env.Node.Store.ListOpenTasks()
		if err != nil {
			t.Fatal(err)
		}
		open = len(tasks)
		time.Sleep(10 * time.Millisecond)
	}
	return task.ID
}

// account makes the case's account on plan and the credential kind asks for.
func (s *suite) account(t *testing.T, plan string, kind keyKind) *caseAccount {
	t.Helper()
	if plan == "" {
		plan = "roomy"
	}
	s.seq++
	store := s.env.Node.Store
	acct, err := store.CreateAccount(fmt.Sprintf("case%d@example.com", s.seq), plan)
	if err != nil {
		t.Fatal(err)
	}
	k, secret, err := store.CreateKey(acct.ID, persistence.KeySpec{Name: "main"})
	if err != nil {
		t.Fatal(err)
	}
	c := &caseAccount{acct: acct, key: secret, keyID: k.ID, secret: secret}
	switch kind {
	case keyRestricted:
		_, c.secret, err = store.CreateKey(acct.ID, persistence.KeySpec{Name: "img only", Models: []string{"img"}})
	case keyZDR:
		_, c.secret, err = store.CreateKey(acct.ID, persistence.KeySpec{Name: "zdr", ZDR: true})
	case keyRevoked:
		var rk persistence.Key
		if rk, c.secret, err = store.CreateKey(acct.ID, persistence.KeySpec{Name: "revoked"}); err == nil {
			_, err = store.RevokeKey(rk.ID)
		}
	case keyAdmin:
		c.secret = nodetest.AdminToken
	case keyNone:
		c.secret = ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// expand fills a case's placeholders.
func (c *caseAccount) expand(s string, task string) string {
	return strings.NewReplacer("{acct}", c.acct.ID, "{key}", c.key, "{keyid}", c.keyID, "{task}", task,
		"{EMAIL}", strings.ToUpper(c.acct.Email)).Replace(s)
}

// send makes the case's request as its client would.
func (s *suite) send(t *testing.T, bc badCase, c *caseAccount) (*http.Response, []byte) {
	t.Helper()
	base := s.env.Node.URL
	if bc.admin {
		base = s.env.Node.AdminURL
	}
	req, err := http.NewRequest(bc.method, base+c.expand(bc.path, s.task), strings.NewReader(c.expand(bc.body, s.task)))
	if err != nil {
		t.Fatal(err)
	}
	if bc.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.secret != "" {
		req.Header.Set("Authorization", "Bearer "+c.secret)
	}
	for i := 0; i+1 < len(bc.headers); i += 2 {
		req.Header.Set(bc.headers[i], c.expand(bc.headers[i+1], s.task))
	}
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h // Go's client sends req.Host, not a Host header
	}
	if bc.over != nil {
		return bc.over(t, req, strings.TrimPrefix(base, "http://"))
	}
	resp, err := s.clientFrom(bc.from).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", bc.method, bc.path, err)
	}
	return resp, nodetest.Read(t, resp)
}

// run makes one case and checks everything it must do and not do.
func (s *suite) run(t *testing.T, bc badCase) {
	c := s.account(t, bc.plan, bc.key)
	if bc.prepare != nil {
		bc.prepare(t, s, c)
	}
	before := s.measure(t, c)
	resp, raw := s.send(t, bc, c)
	after := s.measure(t, c)
	s.checkAnswer(t, bc, c, resp, raw)
	s.checkEffect(t, bc.eff, resp, before, after)
	if bc.check != nil {
		bc.check(t, s, c, raw)
	}
	s.stillServes(t)
}

// checkAnswer: the exact status, the request id, the envelope of the client's format, and the
// rate headers of a known key.
func (s *suite) checkAnswer(t *testing.T, bc badCase, c *caseAccount, resp *http.Response, raw []byte) {
	t.Helper()
	w := bc.want
	w.msg = c.expand(w.msg, s.task)
	if resp.StatusCode != w.status {
		t.Fatalf("status %d, want %d: %.500s", resp.StatusCode, w.status, raw)
	}
	if w.format == "bare" {
		return
	}
	id := resp.Header.Get("X-Request-Id")
	if !requestID.MatchString(id) {
		t.Errorf("X-Request-Id %q", id)
	}
	if got, want := resp.Header.Get("X-RateLimit-Limit"), rateLimit(bc); got != want {
		t.Errorf("X-RateLimit-Limit %q, want %q", got, want)
	}
	if w.format == "" {
		return
	}
	e, err := nodetest.ReadEnvelope(raw)
	if err != nil {
		t.Fatal(err)
	}
	got := answer{status: resp.StatusCode, format: e.Format, typ: e.Type, code: e.Code, param: e.Param, msg: w.msg}
	if got != w {
		t.Errorf("\n got %+v\nwant %+v\nbody %.500s", got, w, raw)
	}
	if e.RequestID != id {
		t.Errorf("request id %q in the body, %q in the header", e.RequestID, id)
	}
	if e.Format == "google" && e.Status != resp.StatusCode {
		t.Errorf("Google's error.code %d, HTTP status %d", e.Status, resp.StatusCode)
	}
	if !strings.Contains(e.Message, w.msg) {
		t.Errorf("message %q does not say %q", e.Message, w.msg)
	}
	for _, goWords := range []string{"persistence:", "json: ", "strconv.", "*ir.", "codec/", "%!"} {
		if strings.Contains(e.Message, goWords) {
			t.Errorf("message %q holds %q: no Go package prefixes or type names", e.Message, goWords)
		}
	}
}

// rateLimit is the X-RateLimit-Limit an answer carries: every answer of an API endpoint to a
// known, valid key has its plan's per-minute cap; unrouted paths, assets, the admin API and
// answers to no known key have none.
func rateLimit(bc badCase) string {
	switch {
	case bc.key != keyMain && bc.key != keyRestricted && bc.key != keyZDR && !bc.known,
		bc.want.code == "unknown_url", bc.want.code == "method_not_allowed",
		strings.HasPrefix(bc.path, "/admin/"), strings.HasPrefix(bc.path, "/assets/"):
		return ""
	}
	return "1000"
}

// stillServes: a good call of another account is answered after the case.
func (s *suite) stillServes(t *testing.T) {
	t.Helper()
	resp := s.env.Post("/v1/chat/completions", s.probe, `{"model":"chat","messages":[{"role":"user","content":"still there?"}]}`)
	raw := nodetest.Read(t, resp)
	if resp.StatusCode != 200 || !strings.Contains(string(raw), `"finish_reason":"stop"`) {
		t.Fatalf("the gateway no longer serves a good call: %d %.300s", resp.StatusCode, raw)
	}
}

// assetFiles counts the files of the asset store.
func assetFiles(t *testing.T, dataDir string) int {
	n := 0
	err := filepath.WalkDir(filepath.Join(dataDir, "assets"), func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		if os.IsNotExist(err) {
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

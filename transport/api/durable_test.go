package api_test

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// holdingStore holds the quota writes that carry log entries while hold is set, until the
// test lets each through: the disk is "slow".
type holdingStore struct {
	quota.Store
	hold atomic.Bool
	held chan func()
}

func (h *holdingStore) SubmitQuota(w persistence.QuotaWrite, done func(error)) {
	if h.hold.Load() && len(w.Log) > 0 {
		h.held <- func() { h.Store.SubmitQuota(w, done) }
		return
	}
	h.Store.SubmitQuota(w, done)
}

// partial is an answer as the client has received it so far.
type partial struct {
	mu      sync.Mutex
	status  int
	body    bytes.Buffer
	done    bool
	headers chan struct{}
	ended   chan struct{}
}

func (p *partial) read(client *http.Client, req *http.Request) {
	resp, err := client.Do(req)
	if err != nil {
		close(p.ended)
		return
	}
	p.mu.Lock()
	p.status = resp.StatusCode
	p.mu.Unlock()
	close(p.headers)
	buf := make([]byte, 256)
	for {
		n, err := resp.Body.Read(buf)
		p.mu.Lock()
		p.body.Write(buf[:n])
		p.mu.Unlock()
		if err != nil {
			break
		}
	}
	resp.Body.Close()
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
	close(p.ended)
}

// begun says whether, within wait, the status line and some of the body have arrived.
func (p *partial) begun(wait time.Duration) bool {
	select {
	case <-p.headers:
	case <-time.After(wait):
		return false
	}
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		p.mu.Lock()
		n := p.body.Len()
		p.mu.Unlock()
		if n > 0 {
			return true
		}
	}
	return false
}

func (p *partial) has(end string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done || bytes.Contains(p.body.Bytes(), []byte(end))
}

// TestNoAnswerEndsBeforeItIsRecorded: while the account's write is held
// (a slow disk), a whole answer has not begun — no status line — and a stream has not ended:
// no data: [DONE], message_stop, response.completed or gemini finish chunk; the answer ends
// only once its charge, counters and log entry are on disk. So a crash can never take back an
// answer a client has in full. Refusals and the gateway's own errors wait the same way.
func TestNoAnswerEndsBeforeItIsRecorded(t *testing.T) {
	hs := &holdingStore{held: make(chan func(), 4)}
	env := nodetest.Start(t, countingCatalog, nodetest.Options{Plan: "counting",
		QuotaStore: func(s quota.Store) quota.Store { hs.Store = s; return hs }})
	cases := []struct {
		name, plan, path, body string
		end                    string // the answer's end; "" for a whole answer (nothing may arrive)
		status                 int
	}{
		{"chat", "counting", "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`, "", 200},
		{"chat stream", "counting", "/v1/chat/completions", `{"model":"chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "data: [DONE]", 200},
		{"chat stream of a gemini route", "counting", "/v1/chat/completions", `{"model":"gem","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "data: [DONE]", 200},
		{"chat stream of a messages route", "counting", "/v1/chat/completions", `{"model":"msg","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "data: [DONE]", 200},
		{"messages stream", "counting", "/v1/messages", `{"model":"msg","stream":true,"max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, "message_stop", 200},
		{"messages stream of a chat route", "counting", "/v1/messages", `{"model":"chat","stream":true,"max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, "message_stop", 200},
		{"responses stream", "counting", "/v1/responses", `{"model":"resp","stream":true,"input":"hi"}`, "response.completed", 200},
		{"responses stream of a chat route", "counting", "/v1/responses", `{"model":"chat","stream":true,"input":"hi"}`, "response.completed", 200},
		{"gemini stream", "counting", "/v1beta/models/gem:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, "finishReason", 200},
		{"gemini stream of a chat route", "counting", "/v1beta/models/chat:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, "finishReason", 200},
		{"gemini array stream", "counting", "/v1beta/models/gem:streamGenerateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, "finishReason", 200},
		{"embeddings", "counting", "/v1/embeddings", `{"model":"embed","input":["one"]}`, "", 200},
		{"image", "counting", "/v1/images/generations", `{"model":"img","prompt":"a fox"}`, "", 200},
		{"the gateway's 400", "counting", "/v1/chat/completions", `{"model":"chat","messages":"hi"}`, "", 400},
		{"a 402", "spent", "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`, "", 402},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCountingCtx(t, env, countedEndpoint{}, tc.plan)
			if tc.status == 402 { // the window's one call, not held
				nodetest.Read(t, env.Post(tc.path, c.key, tc.body))
			}
			hs.hold.Store(true)
			defer hs.hold.Store(false)
			req, _ := http.NewRequest(http.MethodPost, env.Node.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer "+c.key)
			p := &partial{headers: make(chan struct{}), ended: make(chan struct{})}
			go p.read(env.Client, req)
			var release func()
			select {
			case release = <-hs.held:
			case <-time.After(10 * time.Second):
				t.Fatal("the call's write never came")
			}
			time.Sleep(50 * time.Millisecond) // the time an early end would take to arrive
			if tc.end == "" {
				select {
				case <-p.headers:
					t.Fatalf("the answer began (%d) before its write was on disk", p.status)
				default:
				}
			} else {
				if p.has(tc.end) {
					t.Fatalf("the stream ended before its write was on disk:\n%s", p.body.String())
				}
				// What came before the end is not held for the record: the status line and
				// the answer's frames so far are out while the write waits.
				if !p.begun(5 * time.Second) {
					t.Fatal("while its write was held, the stream had not begun: its frames before the end waited for the record")
				}
			}
			release()
			<-p.ended
			if p.status != tc.status || !p.done || tc.end != "" && !p.has(tc.end) {
				t.Fatalf("after the write: %d, complete %v:\n%s", p.status, p.done, p.body.String())
			}
			logs, _ := env.Node.Store.ListLog(c.acct.ID, time.Time{}, time.Time{}, 0)
			if n := len(logs); n == 0 || logs[n-1].Status != tc.status {
				t.Fatalf("log = %+v", logs)
			}
		})
	}
}

// failingStore fails the quota writes that carry log entries while fail is set.
type failingStore struct {
	quota.Store
	fail atomic.Bool
}

func (f *failingStore) SubmitQuota(w persistence.QuotaWrite, done func(error)) {
	if f.fail.Load() && len(w.Log) > 0 {
		done(errors.New("no space left on device"))
		return
	}
	f.Store.SubmitQuota(w, done)
}

// TestAnAnswerThatCannotBeRecordedIsNotGiven: when the call's write fails, the client does not
// get the answer as if it were done: a whole answer is a 503 in its envelope, a stream ends
// with an error event instead of its end; nothing is logged or charged.
func TestAnAnswerThatCannotBeRecordedIsNotGiven(t *testing.T) {
	fs := &failingStore{}
	env := nodetest.Start(t, countingCatalog, nodetest.Options{Plan: "counting",
		QuotaStore: func(s quota.Store) quota.Store { fs.Store = s; return fs }})
	cases := []struct {
		name, path, body string
		status           int
		want, never      string
	}{
		{"chat", "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`, 503, `"code":"cannot_record"`, `"choices"`},
		{"messages", "/v1/messages", `{"model":"msg","max_tokens":32,"messages":[{"role":"user","content":"hi"}]}`, 503, `"type":"overloaded_error"`, `"content"`},
		{"chat stream", "/v1/chat/completions", `{"model":"chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`, 200, `"code":"cannot_record"`, "[DONE]"},
		{"messages stream", "/v1/messages", `{"model":"msg","stream":true,"max_tokens":32,"messages":[{"role":"user","content":"hi"}]}`, 200, "event: error", "message_stop"},
		{"the gateway's 400", "/v1/chat/completions", `{"model":"chat","messages":"hi"}`, 503, `"code":"cannot_record"`, "invalid_request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCountingCtx(t, env, countedEndpoint{}, "counting")
			fs.fail.Store(true)
			resp := env.Post(tc.path, c.key, tc.body)
			raw := nodetest.Read(t, resp)
			fs.fail.Store(false)
			if resp.StatusCode != tc.status || !bytes.Contains(raw, []byte(tc.want)) || bytes.Contains(raw, []byte(tc.never)) {
				t.Fatalf("%d %s; want %d with %s, without %s", resp.StatusCode, raw, tc.status, tc.want, tc.never)
			}
			if m := c.measure(t, resp.Header.Get("X-Request-Id")); m.logged || m.units != 0 || m.cost != 0 {
				t.Fatalf("recorded anyway: %+v", m)
			}
		})
	}
}

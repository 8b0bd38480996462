package main

// The load of the kill -9 tests: workers send every kind of call (whole answers and streams of
// every client format, images, bad bodies) to every account, and note each answer the client
// received in full — a status line and a complete body: a JSON document, or a stream up to its
// format's end — by the request id the gateway gave it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ktKind is one kind of call of the load.
type ktKind struct {
	name   string
	weight int
	path   string
	body   func(rng *rand.Rand) string
	whole  func(status int, body []byte) bool // the body is complete
}

func ktPrompt(rng *rand.Rand) string {
	return fmt.Sprintf("reply with %d words%s", rng.IntN(40), strings.Repeat(" pad", rng.IntN(20)))
}

func jsonComplete(_ int, b []byte) bool { return json.Valid(b) }

// streamComplete: a 200 stream ends with end; an error is a JSON document.
func streamComplete(end string) func(int, []byte) bool {
	return func(status int, b []byte) bool {
		if status != http.StatusOK {
			return json.Valid(b)
		}
		return bytes.HasSuffix(bytes.TrimRight(b, "\n"), []byte(end))
	}
}

// lastEventIs: a 200 stream's last event starts with prefix; an error is a JSON document.
func lastEventIs(prefix string) func(int, []byte) bool {
	return func(status int, b []byte) bool {
		if status != http.StatusOK {
			return json.Valid(b)
		}
		events := bytes.Split(bytes.TrimSpace(b), []byte("\n\n"))
		return bytes.HasPrefix(events[len(events)-1], []byte(prefix))
	}
}

// geminiComplete: Gemini streams have no end marker; the last chunk carries the finish.
func geminiComplete(status int, b []byte) bool {
	if status != http.StatusOK {
		return json.Valid(b)
	}
	events := bytes.Split(bytes.TrimSpace(b), []byte("\n\n"))
	return bytes.Contains(events[len(events)-1], []byte(`"finishReason"`))
}

var ktKinds = []ktKind{
	{"chat", 3, "/v1/chat/completions", func(rng *rand.Rand) string {
		return `{"model":"kt-chat","messages":[{"role":"user","content":"` + ktPrompt(rng) + `"}]}`
	}, jsonComplete},
	{"chat stream", 2, "/v1/chat/completions", func(rng *rand.Rand) string {
		usage := []string{"", `,"stream_options":{"include_usage":true}`}[rng.IntN(2)]
		return `{"model":"kt-chat","stream":true` + usage + `,"messages":[{"role":"user","content":"` + ktPrompt(rng) + `"}]}`
	}, streamComplete("data: [DONE]")},
	{"messages stream", 1, "/v1/messages", func(rng *rand.Rand) string {
		return `{"model":"kt-msg","stream":true,"max_tokens":200,"messages":[{"role":"user","content":"` + ktPrompt(rng) + `"}]}`
	}, streamComplete(`data: {"type":"message_stop"}`)},
	{"responses stream (converted)", 1, "/v1/responses", func(rng *rand.Rand) string {
		return `{"model":"kt-chat","stream":true,"input":"` + ktPrompt(rng) + `"}`
	}, lastEventIs("event: response.completed")},
	{"gemini stream", 1, "/v1beta/models/kt-gem:streamGenerateContent?alt=sse", func(rng *rand.Rand) string {
		return `{"contents":[{"role":"user","parts":[{"text":"` + ktPrompt(rng) + `"}]}]}`
	}, geminiComplete},
	{"image", 1, "/v1/images/generations", func(rng *rand.Rand) string {
		return `{"model":"kt-image","prompt":"` + ktPrompt(rng) + `"}`
	}, jsonComplete},
	{"bad body", 1, "/v1/chat/completions", func(*rand.Rand) string { return `{"model":"kt-chat","messages":"none"}` }, jsonComplete},
}

// ktAnswer is an answer a client received in full.
type ktAnswer struct {
	rid    string
	status int
	kind   string
}

// ktLoad is the load of one round, until stop.
type ktLoad struct {
	stop     atomic.Bool
	sent     atomic.Int64
	complete atomic.Int64
	cut      atomic.Int64 // requests the kill cut: transport errors, incomplete answers
	mu       sync.Mutex
	answers  map[string][]ktAnswer // by account id
	odd      []string              // complete answers whose status the load does not expect
	wg       sync.WaitGroup
}

// run starts workers that call as accounts until stopped.
func (l *ktLoad) run(c *ktClient, accounts []*ktAccount, workers int) {
	l.answers = map[string][]ktAnswer{}
	total := 0
	for _, k := range ktKinds {
		total += k.weight
	}
	for w := 0; w < workers; w++ {
		l.wg.Add(1)
		go func(w int) {
			defer l.wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for !l.stop.Load() {
				a := accounts[rng.IntN(len(accounts))]
				n := rng.IntN(total)
				k := ktKinds[0]
				for _, kind := range ktKinds {
					if n < kind.weight {
						k = kind
						break
					}
					n -= kind.weight
				}
				l.sent.Add(1)
				status, rid, body, err := c.call(a.key, k.path, k.body(rng))
				if err != nil || !k.whole(status, body) {
					l.cut.Add(1) // the gateway is gone (an incomplete answer has no other cause here)
					return
				}
				l.complete.Add(1)
				l.mu.Lock()
				l.answers[a.id] = append(l.answers[a.id], ktAnswer{rid, status, k.name})
				if !a.expects(status) {
					l.odd = append(l.odd, fmt.Sprintf("%s %s: %d %s", a.plan, k.name, status, body))
				}
				l.mu.Unlock()
			}
		}(w)
	}
}

// halt stops the workers and waits for them.
func (l *ktLoad) halt() {
	l.stop.Store(true)
	l.wg.Wait()
}

// call sends one request and reads its whole answer.
func (c *ktClient) call(key, path, body string) (int, string, []byte, error) {
	req, _ := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("X-Request-Id"), raw, err
}

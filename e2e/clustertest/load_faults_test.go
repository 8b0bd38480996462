//go:build faults

package clustertest

// The load of the cluster fault suite: workers bound to every node send chat calls (whole
// answers and streams) as every account of the run, a top-up loop credits the paid
// accounts through whichever node answers, and each answer the client received in full is
// noted by the request id the gateway gave it, with how long the client waited for it.

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
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
)

// loadAccount is one account of a run and what its clients know of it.
type loadAccount struct {
	id, key, plan string
	mu            sync.Mutex
	topUps        money.Amount // every acknowledged top-up, each idempotency key once
	answers       []answer     // every answer received in full
}

func (a *loadAccount) note(ans answer) {
	a.mu.Lock()
	a.answers = append(a.answers, ans)
	a.mu.Unlock()
}

// answer is a call's answer received in full.
type answer struct {
	rid    string
	status int
	node   uint64
	stream bool
}

// sample is one call's wait: from sending it until the answer's status line arrived. For a
// stream that is its admission (the simulator's first byte takes no time); a 503 with
// Retry-After is the gateway giving up on an admission (or a record) it could not get.
type sample struct {
	start   time.Time
	wait    time.Duration
	stream  bool
	refused bool // 503 with Retry-After
	node    uint64
}

// load drives calls at every node of c until halt.
type load struct {
	t        testing.TB
	c        *Cluster
	accounts []*loadAccount
	stop     atomic.Bool
	wg       sync.WaitGroup
	mu       sync.Mutex
	samples  []sample
	odd      []string // complete answers the run does not expect
	sent     atomic.Int64
	complete atomic.Int64
	cut      atomic.Int64 // transport errors and incomplete answers: the node died or was down
	topUpSeq atomic.Int64
	perNode  int
	topUps   bool
	// retryOn503 makes a worker wait Retry-After and resend the same call to the next node,
	// as an SDK does; otherwise it notes the 503 and goes on.
	retryOn503 bool
}

// startLoad starts perNode workers on every node and, when topUps, the top-up loop.
func startLoad(t testing.TB, c *Cluster, accounts []*loadAccount, perNode int, topUps bool) *load {
	l := &load{t: t, c: c, accounts: accounts, perNode: perNode, topUps: topUps}
	l.resume()
	return l
}

// resume starts the workers (again, after halt); the figures go on adding up.
func (l *load) resume() {
	l.stop.Store(false)
	for _, n := range l.c.Nodes {
		for w := range l.perNode {
			l.wg.Go(func() { l.worker(n, uint64(w)) })
		}
	}
	if l.topUps {
		l.wg.Go(l.topUpLoop)
	}
}

// halt stops the workers and the top-up loop and waits for their last calls.
func (l *load) halt() {
	l.stop.Store(true)
	l.wg.Wait()
}

var loadHTTP = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

func (l *load) worker(n *Node, seed uint64) {
	rng := rand.New(rand.NewPCG(n.ID, seed^uint64(time.Now().UnixNano())))
	healthy := false
	for !l.stop.Load() {
		// As behind a load balancer: a node gets calls once its /readyz says so (its
		// replicas caught up), and again after a call to it was cut only once it says so.
		if !healthy {
			if healthy = readyOK(n); !healthy {
				time.Sleep(50 * time.Millisecond)
				continue
			}
		}
		a := l.accounts[rng.IntN(len(l.accounts))]
		healthy = l.call(n, a, rng.IntN(2) == 0)
	}
}

// call sends one chat call as a to n (and, with retryOn503, on to the next healthy node after
// a 503) and notes what the client got; false when n should get no more calls until its
// /readyz says so: its answer was cut, or it refused with 503.
func (l *load) call(n *Node, a *loadAccount, stream bool) bool {
	first := n
	body := `{"model":"` + Model + `","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	if stream {
		body = `{"model":"` + Model + `","max_tokens":5,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	}
	for {
		l.sent.Add(1)
		start := time.Now()
		status, h, raw, waited, err := post(n.URL()+"/v1/chat/completions", a.key, body)
		if err != nil || !complete(status, raw, stream) {
			l.cut.Add(1)
			if l.retryOn503 { // as an SDK: an error it does not retry is the client's
				l.mu.Lock()
				l.odd = append(l.odd, fmt.Sprintf("node %d, %s account, stream %v: %d %q %v", n.ID, a.plan, stream, status, raw, err))
				l.mu.Unlock()
			}
			return false
		}
		l.complete.Add(1)
		refused := status == http.StatusServiceUnavailable && h.Get("Retry-After") != ""
		l.mu.Lock()
		l.samples = append(l.samples, sample{start: start, wait: waited, stream: stream, refused: refused, node: n.ID})
		if status != http.StatusOK && !refused {
			l.odd = append(l.odd, fmt.Sprintf("node %d, %s account, stream %v: %d %s", n.ID, a.plan, stream, status, raw))
		}
		l.mu.Unlock()
		a.note(answer{rid: h.Get("X-Request-Id"), status: status, node: n.ID, stream: stream})
		if !refused || !l.retryOn503 || l.stop.Load() {
			return !refused && n == first
		}
		time.Sleep(time.Second) // Retry-After: 1
		n = l.nextHealthy(n)
	}
}

// nextHealthy is the first node after n, in id order, whose /readyz says ready (n itself
// when none does).
func (l *load) nextHealthy(n *Node) *Node {
	for i := range len(l.c.Nodes) {
		next := l.c.Nodes[(int(n.ID)+i)%len(l.c.Nodes)]
		if next.Running() && readyOK(next) {
			return next
		}
	}
	return n
}

// readyOK says the node answers /readyz with 200 "ok".
func readyOK(n *Node) bool {
	resp, err := loadHTTP.Get(n.URL() + "/readyz")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return err == nil && resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte(`"status":"ok"`))
}

// post sends one call and reads its whole answer; waited is the time until the status line.
func post(url, bearer, body string) (int, http.Header, []byte, time.Duration, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := loadHTTP.Do(req)
	if err != nil {
		return 0, nil, nil, 0, err
	}
	waited := time.Since(start)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw, waited, err
}

// complete says the body is all of an answer: a JSON document, or a 200 stream up to its
// data: [DONE].
func complete(status int, raw []byte, stream bool) bool {
	if stream && status == http.StatusOK {
		return bytes.HasSuffix(bytes.TrimRight(raw, "\n"), []byte("data: [DONE]"))
	}
	return json.Valid(raw)
}

// topUpLoop credits a random paid account every 200–400 ms with a fresh idempotency key,
// re-sending that key to the next node until one acknowledges it, so each is applied once.
func (l *load) topUpLoop() {
	var paid []*loadAccount
	for _, a := range l.accounts {
		if a.plan == PaidPlan {
			paid = append(paid, a)
		}
	}
	if len(paid) == 0 {
		return
	}
	for i := 0; !l.stop.Load(); i++ {
		a := paid[i%len(paid)]
		l.topUp(a, "0.01", fmt.Sprintf("load-%d", l.topUpSeq.Add(1)), i)
		time.Sleep(time.Duration(200+rand.IntN(200)) * time.Millisecond)
	}
}

// topUp sends a top-up until a node acknowledges it (for at most a minute: the cluster
// must come back) and adds it to the account's top-ups.
func (l *load) topUp(a *loadAccount, amount, key string, first int) {
	body := fmt.Sprintf(`{"amount_usd":%q,"idempotency_key":%q}`, amount, key)
	deadline := time.Now().Add(time.Minute)
	for try := first; time.Now().Before(deadline); try++ {
		n := l.c.Nodes[try%len(l.c.Nodes)]
		status, _, raw, _, err := post(n.AdminURL()+"/admin/v1/accounts/"+a.id+"/credits", AdminToken, body)
		if err == nil && status == http.StatusOK {
			a.mu.Lock()
			a.topUps += mustParse(amount)
			a.mu.Unlock()
			return
		}
		if err == nil && status != http.StatusServiceUnavailable && status != http.StatusInternalServerError {
			l.mu.Lock()
			l.odd = append(l.odd, fmt.Sprintf("top-up %s on node %d: %d %s", key, n.ID, status, raw))
			l.mu.Unlock()
		}
		time.Sleep(100 * time.Millisecond)
	}
	l.mu.Lock()
	l.odd = append(l.odd, fmt.Sprintf("top-up %s: no node acknowledged it in a minute", key))
	l.mu.Unlock()
}

func mustParse(s string) money.Amount {
	m, err := money.Parse(s)
	if err != nil {
		panic(err)
	}
	return m
}

// newLoadAccounts creates paid accounts (topped up with start through node 1, idempotently)
// and accounts within a roomy plan.
func newLoadAccounts(t *testing.T, c *Cluster, paid, inPlan int, start string) []*loadAccount {
	t.Helper()
	var out []*loadAccount
	for i := range paid + inPlan {
		plan := Plan
		if i < paid {
			plan = PaidPlan
		}
		id, key := newAccountKey(t, c.Nodes[i%len(c.Nodes)], plan)
		a := &loadAccount{id: id, key: key, plan: plan}
		if plan == PaidPlan {
			status, b := c.Nodes[0].Admin(http.MethodPost, "/admin/v1/accounts/"+id+"/credits",
				map[string]any{"amount_usd": start, "idempotency_key": "start"})
			if status != http.StatusOK {
				t.Fatalf("top-up: %d %s", status, b)
			}
			a.topUps = mustParse(start)
		}
		out = append(out, a)
	}
	return out
}

//go:build faults

package clustertest

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestClusterFaultTenPerSlidingMinuteAcrossNodes holds a key to its exact limit across nodes: a
// key on a 10 rpm plan hammered from all three nodes at once for 70 s of real time (the burst
// window is a sliding minute; no plan knob shortens it). Counted on the client's side:
//
//   - never more than 10: any 11 successes span at least 60 s — the 11th's answer came at
//     least a minute after the 1st was sent (each was admitted between its send and its
//     answer, so this holds whatever the clocks of the three processes);
//   - not fewer: the first 10 are admitted at once, and once they age out 10 more, so 70 s
//     hold exactly 20; every other answer is a 429 with Retry-After.
func TestClusterFaultTenPerSlidingMinuteAcrossNodes(t *testing.T) {
	const run = 70 * time.Second
	c := New(t, Options{Nodes: 3, Shards: 8})
	c.StartAll()
	_, key := newAccountKey(t, c.Nodes[0], RPM10Plan)
	type ok struct{ sent, answered time.Time }
	var (
		mu   sync.Mutex
		oks  []ok
		odd  []string
		sent int
		wg   sync.WaitGroup
	)
	began := time.Now()
	body := `{"model":"` + Model + `","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	for _, n := range c.Nodes {
		for range 2 {
			wg.Go(func() {
				for time.Since(began) < run {
					start := time.Now()
					status, h, raw, _, err := post(n.URL()+"/v1/chat/completions", key, body)
					answered := time.Now()
					mu.Lock()
					sent++
					switch {
					case err == nil && status == http.StatusOK:
						oks = append(oks, ok{start, answered})
					case err == nil && status == http.StatusTooManyRequests && h.Get("Retry-After") != "":
					default:
						odd = append(odd, string(raw))
					}
					mu.Unlock()
					time.Sleep(50 * time.Millisecond) // ~20 calls a second a worker: far more than 10 a minute
				}
			})
		}
	}
	wg.Wait()
	for _, o := range odd {
		t.Errorf("an answer neither 200 nor 429 with Retry-After: %s", o)
	}
	slices.SortFunc(oks, func(a, b ok) int { return a.sent.Compare(b.sent) })
	for i := 0; i+10 < len(oks); i++ {
		if span := oks[i+10].answered.Sub(oks[i].sent); span < time.Minute {
			t.Errorf("11 successes within %v: the %d-th sent at +%v, the %d-th answered at +%v", span.Round(time.Millisecond),
				i+1, oks[i].sent.Sub(began).Round(time.Millisecond), i+11, oks[i+10].answered.Sub(began).Round(time.Millisecond))
		}
	}
	if len(oks) != 20 {
		t.Errorf("%d successes in %v of calls from every node; want 20 (10 at once, 10 more a minute later)", len(oks), run)
	}
	var at []time.Duration
	for _, o := range oks {
		at = append(at, o.answered.Sub(began).Round(100*time.Millisecond))
	}
	t.Logf("%d calls through 3 nodes in %v, %d answered 200 at %v, the rest 429", sent, run, len(oks), at)
}

package api_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// flakyCatalog is model chat on two simulator routes, good and flaky, weighted good:flaky,
// and a plan without limits, so a soak is never refused by the quota.
func flakyCatalog(good, flaky int) string {
	return `
server: {first_byte_timeout: 5s, idle_stream_timeout: 5s}
models:
  - id: chat
    kind: chat
    pricing: {prompt: "0.000001", completion: "0.000002"}
    routes:
      - {id: good, format: chat, base_url: "{{SIM}}/r/good/v1", credential_env: NODETEST_SIM_KEY, weight: ` + strconv.Itoa(good) + `}
      - {id: flaky, format: chat, base_url: "{{SIM}}/r/flaky/v1", credential_env: NODETEST_SIM_KEY, weight: ` + strconv.Itoa(flaky) + `}
plans:
  - {name: demo, allow_automated: true}
`
}

// soak is what a load on model chat came to.
type soak struct {
	calls, failed   int   // client calls, and those not answered 200
	attempts, flaky int64 // upstream attempts, and those that reached the flaky route
	duration        time.Duration
}

// second is the calls that needed a second attempt: each route is tried once per call, so
// with two routes every attempt beyond the first of its call is one.
func (s soak) second() int64 { return s.attempts - int64(s.calls) }

// share is the flaky route's share of the upstream attempts.
func (s soak) share() float64 { return float64(s.flaky) / float64(s.attempts) }

// call is one timed chat call.
type timedCall struct {
	start, end time.Time
	status     int
}

// load sends chat calls from workers goroutines, each call after the previous answer and a
// pause, until stop is closed or calls have been sent (0: no limit).
func load(env *nodetest.Env, workers, calls int, pause time.Duration, stop <-chan struct{}) []timedCall {
	var mu sync.Mutex
	var out []timedCall
	var wg sync.WaitGroup
	sent := make(chan struct{}, max(calls, 1))
	for i := 0; i < calls; i++ {
		sent <- struct{}{}
	}
	body := `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if calls > 0 {
					select {
					case <-sent:
					default:
						return
					}
				}
				c := timedCall{start: time.Now()}
				req, _ := http.NewRequest(http.MethodPost, env.Node.URL+"/v1/chat/completions", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+env.Key)
				req.Header.Set("Content-Type", "application/json")
				if resp, err := env.Client.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					c.status = resp.StatusCode
				}
				c.end = time.Now()
				mu.Lock()
				out = append(out, c)
				mu.Unlock()
				time.Sleep(pause)
			}
		}()
	}
	wg.Wait()
	return out
}

// runSoak sends calls chat calls from workers goroutines and counts what they came to.
func runSoak(t *testing.T, env *nodetest.Env, calls, workers int) soak {
	t.Helper()
	start := time.Now()
	done := load(env, workers, calls, 0, nil)
	s := soak{calls: len(done), duration: time.Since(start), flaky: env.Sim.Calls("flaky")}
	s.attempts = s.flaky + env.Sim.Calls("good")
	for _, c := range done {
		if c.status != http.StatusOK {
			s.failed++
		}
	}
	return s
}

// recovery is how traffic came back after every route of model chat healed.
type recovery struct {
	firstOK  time.Duration // from the heal to the first 200 of a call sent after it
	lastFail time.Duration // from the heal to the end of the last call sent after it not answered 200 (0: none)
	refused  int           // calls sent after the heal not answered 200
	after    int           // calls sent after the heal
}

// runOutage keeps a paced load on model chat while both routes fail every call for outage,
// then heals both and keeps the load on for the following span.
func runOutage(t *testing.T, env *nodetest.Env, outage, following time.Duration, workers int, pause time.Duration) recovery {
	t.Helper()
	env.Sim.SetBehavior("good", simulator.Behavior{FailStatus: 500})
	env.Sim.SetBehavior("flaky", simulator.Behavior{FailStatus: 500})
	stop := make(chan struct{})
	var calls []timedCall
	finished := make(chan struct{})
	go func() {
		calls = load(env, workers, 0, pause, stop)
		close(finished)
	}()
	time.Sleep(outage)
	env.Sim.SetBehavior("good", simulator.Behavior{})
	env.Sim.SetBehavior("flaky", simulator.Behavior{})
	healed := time.Now()
	time.Sleep(following)
	close(stop)
	<-finished
	r := recovery{firstOK: -1}
	for _, c := range calls {
		if c.start.Before(healed) {
			continue
		}
		r.after++
		if c.status == http.StatusOK {
			if d := c.end.Sub(healed); r.firstOK < 0 || d < r.firstOK {
				r.firstOK = d
			}
			continue
		}
		r.refused++
		r.lastFail = max(r.lastFail, c.end.Sub(healed))
	}
	return r
}

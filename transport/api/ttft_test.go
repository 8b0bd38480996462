package api_test

import (
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// Route health measures each successful attempt's time to first byte, what the
// lowest_latency route policy picks by: a whole answer's when its headers arrived, a stream's
// when its answer began (its first content), not when the upstream's headers came.
func TestRouteHealthMeasuresTimeToFirstByte(t *testing.T) {
	cases := []struct {
		name     string
		behavior simulator.Behavior
		body     string
		// the time to first byte is at least min, and at least gap below the whole latency
		min, gap time.Duration
	}{
		{"whole answer: its headers, after a slow first byte", simulator.Behavior{FirstByteDelay: 150 * time.Millisecond},
			chatBody("open-only"), 150 * time.Millisecond, 0},
		{"stream: its first content, a tenth of a second after the role chunk", simulator.Behavior{TokensPerSecond: 10},
			`{"model":"open-only","stream":true,"messages":[{"role":"user","content":"reply with 8 words"}]}`,
			100 * time.Millisecond, 500 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := nodetest.Start(t, "", nodetest.Options{})
			env.Sim.SetBehavior("c", c.behavior)
			resp := env.Post("/v1/chat/completions", env.Key, c.body)
			nodetest.Read(t, resp)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			st := waitState(t, env, "c", func(s *routehealth.State) bool { return s.Successes == 1 && s.InFlight == 0 })
			if st.TTFT < c.min || st.TTFT > st.Latency-c.gap {
				t.Fatalf("time to first byte %v, latency %v: want at least %v, and %v below the latency", st.TTFT, st.Latency, c.min, c.gap)
			}
		})
	}
}

package routehealth

import (
	"testing"
	"time"
)

const ms = time.Millisecond

// A route's time to first byte is the moving average (1/8 the newest) of its
// successful attempts' FirstByte; an attempt that failed, or whose first byte is unknown
// (0: the client left before it), leaves it as it was.
func TestTimeToFirstByteIsMeasured(t *testing.T) {
	cases := []struct {
		name     string
		outcomes []Outcome
		ttft     time.Duration
		latency  time.Duration
	}{
		{"first answer", []Outcome{{Result: Succeeded, FirstByte: 80 * ms, Latency: 200 * ms}}, 80 * ms, 200 * ms},
		{"moving average", []Outcome{{Result: Succeeded, FirstByte: 80 * ms, Latency: 200 * ms},
			{Result: Succeeded, FirstByte: 160 * ms, Latency: 400 * ms}}, 90 * ms, 225 * ms},
		{"a failure is not measured", []Outcome{{Result: Succeeded, FirstByte: 80 * ms, Latency: 200 * ms},
			{Result: Failed, FirstByte: 5 * ms, Latency: 5 * ms}}, 80 * ms, 200 * ms},
		{"unknown first byte", []Outcome{{Result: Succeeded, FirstByte: 80 * ms, Latency: 200 * ms},
			{Result: Succeeded, Latency: 40 * ms}}, 80 * ms, 180 * ms},
		{"nothing measured yet", []Outcome{{Result: Succeeded, Latency: 40 * ms}}, 0, 40 * ms},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, clk := newBoard(t, routes(1))
			var s *State
			for _, o := range c.outcomes {
				o.Started = clk.Now()
				if s = b.Settle("a", o); s == nil {
					t.Fatal("Settle got no state")
				}
			}
			if s.TTFT != c.ttft || s.Latency != c.latency {
				t.Fatalf("ttft %v latency %v, want %v %v", s.TTFT, s.Latency, c.ttft, c.latency)
			}
		})
	}
}

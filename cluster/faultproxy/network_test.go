package faultproxy

import (
	"testing"
	"time"
)

// A chunk under Network is due after the delay with its jitter, one retransmission time-out
// later when it is lost, and never before the chunk read ahead of it.
func TestNetworkDueTimes(t *testing.T) {
	now := time.Unix(1000, 0)
	cases := []struct {
		name  string
		f     Fault
		rnd   []float64 // the random draws, in order: jitter, then loss
		prev  time.Time
		after time.Duration // due − now
	}{
		{"delay only", Network(5*time.Millisecond, 0, 0), nil, time.Time{}, 5 * time.Millisecond},
		{"jitter at its low end", Network(5*time.Millisecond, time.Millisecond, 0), []float64{0}, time.Time{}, 4 * time.Millisecond},
		{"jitter at its high end", Network(5*time.Millisecond, time.Millisecond, 0), []float64{1}, time.Time{}, 6 * time.Millisecond},
		{"a chunk lost", Network(5*time.Millisecond, time.Millisecond, 0.01), []float64{0.5, 0.005}, time.Time{}, 5*time.Millisecond + RetransmitTimeout},
		{"a chunk kept", Network(5*time.Millisecond, time.Millisecond, 0.01), []float64{0.5, 0.5}, time.Time{}, 5 * time.Millisecond},
		{"behind a lost one", Network(5*time.Millisecond, 0, 0), nil, now.Add(150 * time.Millisecond), 150 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			draws := tc.rnd
			rnd := func() float64 {
				if len(draws) == 0 {
					t.Fatal("more random draws than the case gives")
				}
				v := draws[0]
				draws = draws[1:]
				return v
			}
			if got := tc.f.due(now, tc.prev, rnd).Sub(now); got != tc.after {
				t.Fatalf("due after %v, want %v", got, tc.after)
			}
			if len(draws) != 0 {
				t.Fatalf("%d random draws left unused", len(draws))
			}
		})
	}
	if Network(0, 0, 0) != Pass {
		t.Error("a network with no delay, jitter or loss is not Pass")
	}
}

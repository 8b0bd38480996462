package harness

import (
	"context"
	"testing"
	"time"
)

func TestBusyFraction(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name string
		d    SystemCPU
		want float64
	}{
		{"idle", SystemCPU{Idle: 100 * ms}, 0},
		{"busy", SystemCPU{Busy: 100 * ms}, 1},
		{"steal counts as occupied", SystemCPU{Busy: 5 * ms, Steal: 5 * ms, Idle: 90 * ms}, 0.1},
		{"no time passed", SystemCPU{}, 0},
	}
	for _, tc := range cases {
		if got := busyFraction(tc.d); got != tc.want {
			t.Errorf("%s: busyFraction = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSettleWithoutPinnedCPUsDoesNotWait(t *testing.T) {
	if d := settle(context.Background(), nil); d != 0 {
		t.Fatalf("settle(nil) waited %v", d)
	}
}

func TestSettleStopsWithItsContext(t *testing.T) {
	cpus, err := Allowed()
	if err != nil {
		t.Skip("no CPU affinity here:", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d := settle(ctx, cpus); d > settleWaitMax/2 {
		t.Fatalf("settle with a cancelled context waited %v", d)
	}
}

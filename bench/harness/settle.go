package harness

// Between runs the targets share the server CPUs: a peer that drains a queue after its
// run (Bifrost's request log writes its SQLite rows after the answers) would bill its
// work to whichever target runs next. Each run starts once those CPUs are idle.

import (
	"context"
	"time"
)

const (
	settleSample  = 100 * time.Millisecond
	settleBusyMax = 0.10 // of the server CPUs over one sample
	settleWaitMax = 20 * time.Second
)

// settle waits until the server CPUs were at most settleBusyMax busy over one sample, or
// settleWaitMax has passed, and says how long it waited (0 when not pinned).
func settle(ctx context.Context, cpus CPUSet) time.Duration {
	if len(cpus) == 0 {
		return 0
	}
	start := time.Now()
	prev, err := ReadStat(cpus)
	if err != nil {
		return 0
	}
	for time.Since(start) < settleWaitMax {
		select {
		case <-ctx.Done():
			return time.Since(start)
		case <-time.After(settleSample):
		}
		cur, err := ReadStat(cpus)
		if err != nil {
			break
		}
		if busyFraction(cur.Server.Sub(*prev.Server)) <= settleBusyMax {
			break
		}
		prev = cur
	}
	return time.Since(start)
}

// busyFraction is the share of d's time the CPUs were occupied.
func busyFraction(d SystemCPU) float64 {
	total := d.Occupied() + d.Idle
	if total <= 0 {
		return 0
	}
	return float64(d.Occupied()) / float64(total)
}

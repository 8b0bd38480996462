package routehealth

import "time"

// windowSteps is how many steps the error-rate window moves in: ErrorWindow/windowSteps is
// the finest it tells time (3 s for the default 30 s window). A fixed array keeps a State's
// copy cheap: every outcome publishes a new snapshot.
const windowSteps = 10

// step is one slice of the window: the attempts that ended in it.
type step struct {
	slot          int64 // which step of time it counts: the time divided by the step length
	calls, failed uint32
}

// window counts a route's attempts over the last ErrorWindow, judged and failed.
type window [windowSteps]step

// add counts one attempt that ended at now.
func (w *window) add(length time.Duration, now time.Time, failed bool) {
	if length <= 0 {
		return
	}
	slot := now.UnixNano() / int64(length)
	s := &w[slot%windowSteps]
	if s.slot != slot {
		*s = step{slot: slot}
	}
	s.calls++
	if failed {
		s.failed++
	}
}

// counts is the attempts, and the failed ones among them, in the steps that still cover now.
func (w *window) counts(length time.Duration, now time.Time) (calls, failed int) {
	if length <= 0 {
		return 0, 0
	}
	slot := now.UnixNano() / int64(length)
	for _, s := range w {
		if s.calls > 0 && s.slot > slot-windowSteps && s.slot <= slot {
			calls += int(s.calls)
			failed += int(s.failed)
		}
	}
	return calls, failed
}

package quota

import (
	"slices"
	"time"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// Fixed schedules, in unix seconds UTC.
const (
	day         = 86400
	week        = 7 * day
	firstMonday = 4 * day // 1970-01-05T00:00:00Z; 1970-01-01 was a Thursday
	burstSpan   = int64(60 * time.Second)
	actBuckets  = 20 // the throttle's load history: Throttle.Window in 20 buckets
)

// periodStart is the start of the period of length n seconds, aligned to anchor, that
// holds t (all unix seconds): anchor + floor((t-anchor)/n)·n.
func periodStart(t, anchor, n int64) int64 {
	d := t - anchor
	k := d / n
	if d < 0 && d%n != 0 {
		k--
	}
	return anchor + k*n
}

// windowSchedule returns the plan's window length and anchor in seconds. A hand-built
// Plan without a window gets the default.
func windowSchedule(p *catalog.Plan) (length, anchor int64) {
	length = int64(p.Window / time.Second)
	if length <= 0 {
		length = int64(catalog.DefaultWindow / time.Second)
	}
	return length, p.WindowAnchor.Unix()
}

func weekStart(t int64) int64 { return periodStart(t, firstMonday, week) }
func dayStart(t int64) int64  { return periodStart(t, 0, day) }

// floorSec is t's unix second, rounded down (times before 1970 never occur here).
func floorSec(ns int64) int64 { return ns / int64(time.Second) }

// slide is a true sliding 60 s window: the admission times (unix ns, ascending) of the
// most recent calls. A call at t occupies the window until t+60 s exactly. It keeps only
// as many times as the largest limit it is checked against needs.
type slide struct{ ts []int64 }

func (s *slide) prune(now int64) {
	i := 0
	for i < len(s.ts) && s.ts[i]+burstSpan <= now {
		i++
	}
	if i == len(s.ts) {
		s.ts = s.ts[:0]
	} else if i > 0 {
		s.ts = s.ts[i:]
	}
}

// wait is how long until a call may be admitted under limit: 0 when it may be now, else
// until the call that holds the limit-th most recent slot leaves the window.
func (s *slide) wait(limit, now int64) time.Duration {
	s.prune(now)
	n := int64(len(s.ts))
	if n < limit {
		return 0
	}
	return time.Duration(s.ts[n-limit] + burstSpan - now)
}

// add records a call at t, keeping the newest keep times. Calls are mostly added in order;
// one that arrived before a call admitted earlier (a slower request body) is put in its place.
func (s *slide) add(t, keep int64) {
	if keep <= 0 {
		return
	}
	i := len(s.ts)
	for i > 0 && s.ts[i-1] > t {
		i--
	}
	s.ts = slices.Insert(s.ts, i, t)
	if over := int64(len(s.ts)) - keep; over > 0 {
		s.ts = s.ts[over:]
	}
}

// remove takes out one admission at t (a refunded call), if the window still holds it.
func (s *slide) remove(t int64) {
	for i := len(s.ts) - 1; i >= 0 && s.ts[i] >= t; i-- {
		if s.ts[i] == t {
			s.ts = append(s.ts[:i], s.ts[i+1:]...)
			return
		}
	}
}

// budget is the header view of the window under limit.
func (s *slide) budget(limit, now int64) Budget {
	s.prune(now)
	b := Budget{Limit: limit, Remaining: max(0, limit-int64(len(s.ts))), Reset: time.Unix(0, now).UTC()}
	if len(s.ts) > 0 {
		b.Reset = time.Unix(0, s.ts[0]+burstSpan).UTC()
	}
	return b
}

// activity counts a key's admitted calls over the throttle window in actBuckets buckets.
type activity struct {
	width int64 // ns per bucket
	last  int64 // bucket index of the newest bucket
	n     [actBuckets]uint32
}

// add counts a call at now and returns the calls in the window that ends with now's bucket.
func (a *activity) add(now, width int64) int64 {
	a.advance(now, width)
	a.n[a.last%actBuckets]++
	return a.sum()
}

// advance moves the window to now's bucket, forgetting buckets that left it.
func (a *activity) advance(now, width int64) {
	b := now / width
	if a.width != width {
		*a = activity{width: width, last: b}
		return
	}
	if b <= a.last {
		return // same bucket (or a clock step back: count into the newest)
	}
	if b-a.last >= actBuckets {
		a.n = [actBuckets]uint32{}
	} else {
		for i := a.last + 1; i <= b; i++ {
			a.n[i%actBuckets] = 0
		}
	}
	a.last = b
}

// remove uncounts a call at t if its bucket is still in the window; false when it was not.
func (a *activity) remove(t int64) bool {
	if a.width == 0 {
		return false
	}
	b := t / a.width
	if b <= a.last && a.last-b < actBuckets && a.n[b%actBuckets] > 0 {
		a.n[b%actBuckets]--
		return true
	}
	return false
}

func (a *activity) sum() int64 {
	var s int64
	for _, c := range a.n {
		s += int64(c)
	}
	return s
}

// throttleWidth is one bucket of the plan's throttle window.
func throttleWidth(t catalog.Throttle) int64 {
	w := t.Window
	if w <= 0 {
		w = catalog.DefaultThrottleWindow
	}
	return max(1, int64(w)/actBuckets)
}

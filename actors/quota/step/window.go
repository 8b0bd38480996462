package step

import (
	"slices"
	"time"
)

// Fixed schedules, in unix seconds UTC.
const (
	Day         = 86400
	Week        = 7 * Day
	firstMonday = 4 * Day // 1970-01-05T00:00:00Z; 1970-01-01 was a Thursday
	// BurstSpan is the sliding window of the burst limit and the throttle cap, in ns.
	BurstSpan  = int64(60 * time.Second)
	actBuckets = 20 // the throttle's load history: Throttle.Window in 20 buckets
)

// PeriodStart is the start of the period of length n seconds, aligned to anchor, that
// holds t (all unix seconds): anchor + floor((t-anchor)/n)·n.
func PeriodStart(t, anchor, n int64) int64 {
	d := t - anchor
	k := d / n
	if d < 0 && d%n != 0 {
		k--
	}
	return anchor + k*n
}

func weekStart(t int64) int64 { return PeriodStart(t, firstMonday, Week) }
func dayStart(t int64) int64  { return PeriodStart(t, 0, Day) }

// floorSec is t's unix second, rounded down (times before 1970 never occur here).
func floorSec(ns int64) int64 { return ns / int64(time.Second) }

// Slide is a true sliding 60 s window: the admission times (unix ns, ascending) of the
// most recent calls. A call at t occupies the window until t+60 s exactly. It keeps only
// as many times as the largest limit it is checked against needs.
type Slide []int64

func (s *Slide) prune(now int64) {
	ts, i := *s, 0
	for i < len(ts) && ts[i]+BurstSpan <= now {
		i++
	}
	if i == len(ts) {
		*s = ts[:0]
	} else if i > 0 {
		*s = ts[i:]
	}
}

// wait is how long until a call may be admitted under limit: 0 when it may be now, else
// until the call that holds the limit-th most recent slot leaves the window.
func (s *Slide) wait(limit, now int64) int64 {
	s.prune(now)
	ts := *s
	n := int64(len(ts))
	if n < limit {
		return 0
	}
	return ts[n-limit] + BurstSpan - now
}

// add records a call at t, keeping the newest keep times. Calls are mostly added in order;
// one that arrived before a call admitted earlier (a slower request body) is put in its place.
func (s *Slide) add(t, keep int64) {
	if keep <= 0 {
		return
	}
	ts := *s
	i := len(ts)
	for i > 0 && ts[i-1] > t {
		i--
	}
	ts = slices.Insert(ts, i, t)
	if over := int64(len(ts)) - keep; over > 0 {
		ts = ts[over:]
	}
	*s = ts
}

// remove takes out one admission at t (a refunded call), if the window still holds it.
func (s *Slide) remove(t int64) {
	ts := *s
	for i := len(ts) - 1; i >= 0 && ts[i] >= t; i-- {
		if ts[i] == t {
			*s = append(ts[:i], ts[i+1:]...)
			return
		}
	}
}

// budget is the header view of the window under limit.
func (s *Slide) budget(limit, now int64) Budget {
	s.prune(now)
	ts := *s
	b := Budget{Limit: limit, Remaining: max(0, limit-int64(len(ts))), Reset: now}
	if len(ts) > 0 {
		b.Reset = ts[0] + BurstSpan
	}
	return b
}

// Activity counts a key's admitted calls over the throttle window in 20 buckets.
type Activity struct {
	Width int64              `msgpack:"w,omitempty"` // ns per bucket
	Last  int64              `msgpack:"l,omitempty"` // bucket index of the newest bucket
	N     [actBuckets]uint32 `msgpack:"n"`
}

// add counts a call at now and returns the calls in the window that ends with now's bucket.
func (a *Activity) add(now, width int64) int64 {
	a.advance(now, width)
	a.N[a.Last%actBuckets]++
	return a.sum()
}

// advance moves the window to now's bucket, forgetting buckets that left it.
func (a *Activity) advance(now, width int64) {
	b := now / width
	if a.Width != width {
		*a = Activity{Width: width, Last: b}
		return
	}
	if b <= a.Last {
		return // same bucket (or an arrival before the newest: count into the newest)
	}
	if b-a.Last >= actBuckets {
		a.N = [actBuckets]uint32{}
	} else {
		for i := a.Last + 1; i <= b; i++ {
			a.N[i%actBuckets] = 0
		}
	}
	a.Last = b
}

// remove uncounts a call at t if its bucket is still in the window; false when it was not.
func (a *Activity) remove(t int64) bool {
	if a.Width == 0 {
		return false
	}
	b := t / a.Width
	if b <= a.Last && a.Last-b < actBuckets && a.N[b%actBuckets] > 0 {
		a.N[b%actBuckets]--
		return true
	}
	return false
}

func (a *Activity) sum() int64 {
	var s int64
	for _, c := range a.N {
		s += int64(c)
	}
	return s
}

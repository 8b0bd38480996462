package step

import (
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// Plan is the part of a catalog.Plan the step reads, by value: a command carries it, so
// every replica applies the limits the proposer saw, whatever its own catalog says.
type Plan struct {
	WindowRequests    int64        `msgpack:"wr,omitempty"` // calls per window (0: unlimited)
	WindowSeconds     int64        `msgpack:"wl,omitempty"` // window length; 0: catalog.DefaultWindow
	WindowAnchor      int64        `msgpack:"wa,omitempty"` // unix s
	WeeklyRequests    int64        `msgpack:"wk,omitempty"` // calls per week (0: unlimited)
	BurstRPM          int64        `msgpack:"b,omitempty"`  // 0: no burst limit
	BurstPerKey       bool         `msgpack:"bk,omitempty"` // catalog.BurstScopeKey
	ImageDailyLimit   int64        `msgpack:"img,omitempty"`
	VideoDailySeconds int64        `msgpack:"vid,omitempty"`
	Overdraft         money.Amount `msgpack:"od,omitempty"`
	Throttle          Throttle     `msgpack:"thr"`
}

// Throttle is the plan's abuse rule (catalog.Throttle), in the units the step counts in.
type Throttle struct {
	RPM      int64 `msgpack:"rpm,omitempty"`  // 0: off
	Trigger  int64 `msgpack:"trig,omitempty"` // calls in the window that throttle a key
	Width    int64 `msgpack:"w,omitempty"`    // ns per bucket: the window / 20, at least 1
	Duration int64 `msgpack:"d,omitempty"`    // ns a throttle lasts
}

// PlanOf copies what the step needs from p.
func PlanOf(p *catalog.Plan) Plan {
	w := p.Throttle.Window
	if w <= 0 {
		w = catalog.DefaultThrottleWindow
	}
	return Plan{
		WindowRequests: p.WindowRequests, WindowSeconds: int64(p.Window / time.Second), WindowAnchor: p.WindowAnchor.Unix(),
		WeeklyRequests: p.WeeklyRequests, BurstRPM: p.BurstRPM, BurstPerKey: p.BurstScope == catalog.BurstScopeKey,
		ImageDailyLimit: p.ImageDailyLimit, VideoDailySeconds: p.VideoDailySeconds, Overdraft: p.Overdraft,
		Throttle: Throttle{RPM: p.Throttle.RPM, Trigger: p.Throttle.Trigger, Width: max(1, int64(w)/actBuckets), Duration: int64(p.Throttle.Duration)},
	}
}

func (t Throttle) enabled() bool { return t.RPM > 0 }

// NeedsWindows reports whether p reads the sliding windows (a burst limit or a throttle).
func (p *Plan) NeedsWindows() bool { return p.BurstRPM > 0 || p.Throttle.enabled() }

// windowSchedule returns the window's length and anchor in seconds.
func (p *Plan) windowSchedule() (length, anchor int64) {
	length = p.WindowSeconds
	if length <= 0 {
		length = int64(catalog.DefaultWindow / time.Second)
	}
	return length, p.WindowAnchor
}

// keyWindowKeep is how many slots a key's own window keeps under p: its burst limit when the
// burst is per key, and the throttle's cap.
func (p *Plan) keyWindowKeep() int64 {
	var keep int64
	if p.BurstPerKey {
		keep = p.BurstRPM
	}
	if p.Throttle.enabled() {
		keep = max(keep, p.Throttle.RPM)
	}
	return keep
}

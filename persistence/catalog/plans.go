package catalog

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/modelgate/modelgate/codec/money"
)

// Burst scopes (decisions.md, "Keys, accounts, plans").
const (
	BurstScopeAccount = "account" // every key of the account shares one burst budget
	BurstScopeKey     = "key"     // each key has its own burst budget
)

// Plan defaults. A field left out of a plan takes these values.
const (
	DefaultWindow            = 5 * time.Hour
	DefaultImageDailyLimit   = 10
	DefaultVideoDailySeconds = 500

	DefaultThrottleWindow      = 10 * time.Minute
	DefaultThrottleMaxShare    = 0.5
	DefaultThrottleMinRequests = 200
	DefaultThrottleDuration    = 10 * time.Minute
)

// Plan is what an account may use: a window allowance, a weekly cap, a burst limit, an
// abuse throttle, daily image and video limits, and how far credits may go negative.
// Request counts are whole calls; a call of a model with quota_multiplier m uses m of them
// (the quota actors count in exact thousandths). 0 means unlimited for every count.
type Plan struct {
	Name string
	// WindowRequests is the allowance per window (0 = unlimited). It resets in full at
	// WindowAnchor + k·Window for every integer k (a fixed schedule, not a rolling one).
	WindowRequests int64
	Window         time.Duration // default 5h; whole seconds
	WindowAnchor   time.Time     // default 1970-01-01T00:00:00Z (UTC, whole seconds)
	// WeeklyRequests is the weekly cap (0 = unlimited); it resets Monday 00:00 UTC.
	WeeklyRequests int64
	// BurstRPM caps admitted calls in any sliding 60 s (0 = unlimited), shared by the whole
	// account or per key (BurstScope). Credits never bypass it.
	BurstRPM   int64
	BurstScope string // BurstScopeAccount (default) or BurstScopeKey
	// AllowAutomated admits clients that are not interactive coding clients.
	AllowAutomated bool
	// ImageDailyLimit and VideoDailySeconds reset 00:00 UTC (0 = unlimited).
	ImageDailyLimit   int64 // default 10 images
	VideoDailySeconds int64 // default 500 seconds of output
	// Overdraft is how far below zero a credit balance may go (default 0: never).
	Overdraft     money.Amount
	OverdraftText string // the operator's string, e.g. "5.00"
	Throttle      Throttle
	// StripePrice, when set, sells the plan as a Stripe subscription to this recurring price
	// (price_…); it needs billing.stripe.
	StripePrice string
}

// Throttle is the abuse rule: a temporary lower per-minute cap on one key that sustains
// disproportionate load.
//
// Rule: at each admitted call of a key, the key's admitted calls over the trailing Window
// (counted in 20 buckets of Window/20, so the edge is exact to a bucket) are compared with
// Trigger = max(MinRequests, ceil(MaxShare × BurstRPM × Window/1m)), that is, the key has
// used more than MaxShare of what the burst limit would let it do over the whole Window,
// and at least MinRequests calls. When the count reaches Trigger the key is throttled for
// Duration: its calls are capped at RPM in any sliding 60 s (a 429 whose Retry-After is
// when the 60 s window frees a slot: always under a minute) and its load history starts
// over. Credits never bypass it. The other keys of the account are not affected.
//
// Defaults: Window 10m, MaxShare 0.5, MinRequests 200, Duration 10m, RPM a quarter of the
// plan's burst_rpm (at least 1; 0 for a burst_rpm of 1, as no lower cap exists). So a pro key (burst 60) that averages 30 calls a minute
// for ten minutes is held to 15 a minute for the next ten; a free key (burst 10) can never
// reach 200 calls in ten minutes and is never throttled. RPM 0 turns the throttle off; it
// is the default of a plan without a burst limit (nothing to measure the load against),
// which gets a throttle only by setting throttle.rpm (then Trigger is MinRequests).
type Throttle struct {
	Window      time.Duration
	MaxShare    float64
	MinRequests int64
	RPM         int64 // 0 = off
	Duration    time.Duration
	Trigger     int64 // derived: calls in Window that throttle the key
}

// Enabled reports whether the plan throttles at all.
func (t Throttle) Enabled() bool { return t.RPM > 0 }

// Plan returns a plan by name: the file's plans, or DefaultPlans when the file has none.
func (c *Catalog) Plan(name string) (*Plan, bool) {
	p, ok := c.planSet().byName[name]
	return p, ok
}

// Plans returns every plan, sorted by name.
func (c *Catalog) Plans() []*Plan { return c.planSet().list }

// DefaultPlans is the set a catalog without a plans: section serves:
//
//	free: 100 calls per 5 h, 500 a week, burst 10/min, interactive coding clients only
//	pro:  1000 calls per 5 h, 10000 a week, burst 60/min, interactive coding clients only
//	demo: 10000 calls per 5 h, no weekly cap, burst 600/min, automated clients admitted
//
// All three reset their window every 5 h counted from 1970-01-01T00:00:00Z (a continuous
// schedule: as 24 is not a multiple of 5, the reset times of day move by one hour a day; on
// 2026-03-04 they are 01:00, 06:00, 11:00, 16:00 and 21:00 UTC), and have account-wide
// burst, 10 images and 500 video seconds a day, no overdraft, and the default throttle.
func DefaultPlans() []*Plan {
	mk := func(name string, window, weekly, burst int64, automated bool) *Plan {
		p := &Plan{
			Name: name, WindowRequests: window, Window: DefaultWindow, WindowAnchor: time.Unix(0, 0).UTC(),
			WeeklyRequests: weekly, BurstRPM: burst, BurstScope: BurstScopeAccount, AllowAutomated: automated,
			ImageDailyLimit: DefaultImageDailyLimit, VideoDailySeconds: DefaultVideoDailySeconds, OverdraftText: "0",
		}
		p.Throttle = defaultThrottle(burst)
		return p
	}
	return []*Plan{
		mk("demo", 10000, 0, 600, true),
		mk("free", 100, 500, 10, false),
		mk("pro", 1000, 10000, 60, false),
	}
}

func defaultThrottle(burst int64) Throttle {
	t := Throttle{
		Window: DefaultThrottleWindow, MaxShare: DefaultThrottleMaxShare,
		MinRequests: DefaultThrottleMinRequests, Duration: DefaultThrottleDuration,
	}
	if burst > 1 { // a burst of 1 has no lower cap to throttle to
		t.RPM = max(1, burst/4)
	}
	t.Trigger = trigger(t, burst)
	return t
}

func trigger(t Throttle, burst int64) int64 {
	share := int64(math.Ceil(t.MaxShare*float64(burst)*t.Window.Minutes() - 1e-9))
	return max(t.MinRequests, share)
}

// planDoc is the YAML layout of one entry of plans:.
type planDoc struct {
	Name              string      `yaml:"name"`
	WindowRequests    int64       `yaml:"window_requests"`
	Window            string      `yaml:"window"`
	WindowAnchor      string      `yaml:"window_anchor"`
	WeeklyRequests    int64       `yaml:"weekly_requests"`
	BurstRPM          int64       `yaml:"burst_rpm"`
	BurstScope        string      `yaml:"burst_scope"`
	AllowAutomated    bool        `yaml:"allow_automated"`
	ImageDailyLimit   *int64      `yaml:"image_daily_limit"`
	VideoDailySeconds *int64      `yaml:"video_daily_seconds"`
	OverdraftUSD      string      `yaml:"overdraft_usd"`
	Throttle          throttleDoc `yaml:"throttle"`
	StripePrice       string      `yaml:"stripe_price"`
}

type throttleDoc struct {
	Window      string   `yaml:"window"`
	MaxShare    *float64 `yaml:"max_share"`
	MinRequests *int64   `yaml:"min_requests"`
	RPM         *int64   `yaml:"rpm"`
	Duration    string   `yaml:"duration"`
}

// maxCount bounds every request count so that counts in thousandths never overflow.
const maxCount = 1_000_000_000_000

var planNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// plans validates the plans: section and attaches the result to c.
func (v *validator) plans(c *Catalog, docs []planDoc) {
	set := &planSet{byName: map[string]*Plan{}}
	if len(docs) == 0 {
		set.list = DefaultPlans()
	}
	for i := range docs {
		p := v.plan(i, &docs[i])
		if p == nil {
			continue
		}
		if _, dup := set.byName[p.Name]; dup {
			v.failPlan(p.Name, "name", fmt.Sprintf("%q is used by more than one plan", p.Name))
			continue
		}
		set.byName[p.Name] = p
		set.list = append(set.list, p)
	}
	for _, p := range set.list {
		set.byName[p.Name] = p
	}
	sort.Slice(set.list, func(i, j int) bool { return set.list[i].Name < set.list[j].Name })
	attachPlans(c, set)
}

func (v *validator) failPlan(plan, field, msg string) {
	v.errs = append(v.errs, fmt.Sprintf("%s: plan %s: %s: %s", v.path, plan, field, msg))
}

func (v *validator) plan(i int, d *planDoc) *Plan {
	name := d.Name
	if !planNamePattern.MatchString(name) {
		v.failPlan(fmt.Sprintf("#%d", i+1), "name", fmt.Sprintf("%q must be 1-64 letters, digits or ._-", name))
		return nil
	}
	fail := func(field, msg string) { v.failPlan(name, field, msg) }
	count := func(field string, n int64) int64 {
		if n < 0 || n > maxCount {
			fail(field, fmt.Sprintf("%d must be between 0 (unlimited) and %d", n, int64(maxCount)))
			return 0
		}
		return n
	}
	p := &Plan{
		Name:            name,
		WindowRequests:  count("window_requests", d.WindowRequests),
		WeeklyRequests:  count("weekly_requests", d.WeeklyRequests),
		BurstRPM:        count("burst_rpm", d.BurstRPM),
		BurstScope:      d.BurstScope,
		AllowAutomated:  d.AllowAutomated,
		Window:          v.planDuration(name, "window", d.Window, DefaultWindow),
		WindowAnchor:    time.Unix(0, 0).UTC(),
		ImageDailyLimit: DefaultImageDailyLimit, VideoDailySeconds: DefaultVideoDailySeconds,
		OverdraftText: d.OverdraftUSD,
	}
	if p.BurstRPM > 1_000_000 {
		fail("burst_rpm", fmt.Sprintf("%d must be at most 1000000", p.BurstRPM))
		p.BurstRPM = 0
	}
	if d.WindowAnchor != "" {
		t, err := parseTime(d.WindowAnchor)
		switch {
		case err != nil:
			fail("window_anchor", fmt.Sprintf("%q is not an RFC 3339 time such as 2026-01-05T00:00:00Z", d.WindowAnchor))
		case t.Nanosecond() != 0:
			fail("window_anchor", fmt.Sprintf("%q must be a whole second", d.WindowAnchor))
		default:
			p.WindowAnchor = t.UTC()
		}
	}
	switch p.BurstScope {
	case "":
		p.BurstScope = BurstScopeAccount
	case BurstScopeAccount, BurstScopeKey:
	default:
		fail("burst_scope", fmt.Sprintf("%q must be account or key", p.BurstScope))
	}
	if d.ImageDailyLimit != nil {
		p.ImageDailyLimit = count("image_daily_limit", *d.ImageDailyLimit)
	}
	if d.VideoDailySeconds != nil {
		p.VideoDailySeconds = count("video_daily_seconds", *d.VideoDailySeconds)
	}
	if p.OverdraftText == "" {
		p.OverdraftText = "0"
	}
	od, err := money.Parse(p.OverdraftText)
	if err != nil {
		fail("overdraft_usd", fmt.Sprintf("%v (write USD as a decimal string, e.g. \"5.00\")", err))
	}
	p.Overdraft = od
	p.Throttle = v.throttle(name, p.BurstRPM, &d.Throttle)
	if p.StripePrice = d.StripePrice; p.StripePrice != "" && !stripePricePattern.MatchString(p.StripePrice) {
		fail("stripe_price", fmt.Sprintf("%q is not a Stripe price id (price_ and letters or digits)", p.StripePrice))
	}
	return p
}

var stripePricePattern = regexp.MustCompile(`^price_[A-Za-z0-9_]{1,200}$`)

// planDuration parses a positive whole-second duration of at least a minute.
func (v *validator) planDuration(plan, field, s string, def time.Duration) time.Duration {
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Minute || d%time.Second != 0 {
		v.failPlan(plan, field, fmt.Sprintf("%q is not a whole-second duration of at least 1m, such as 5h", s))
		return def
	}
	return d
}

func (v *validator) throttle(plan string, burst int64, d *throttleDoc) Throttle {
	t := defaultThrottle(burst)
	fail := func(field, msg string) { v.failPlan(plan, "throttle."+field, msg) }
	t.Window = v.planDuration(plan, "throttle.window", d.Window, t.Window)
	t.Duration = v.planDuration(plan, "throttle.duration", d.Duration, t.Duration)
	if d.MaxShare != nil {
		t.MaxShare = *d.MaxShare
		if !(t.MaxShare > 0 && t.MaxShare <= 1) {
			fail("max_share", fmt.Sprintf("%v must be above 0 and at most 1 (a share of what burst_rpm allows over throttle.window)", t.MaxShare))
			t.MaxShare = DefaultThrottleMaxShare
		}
	}
	if d.MinRequests != nil {
		t.MinRequests = *d.MinRequests
		if t.MinRequests < 1 || t.MinRequests > maxCount {
			fail("min_requests", fmt.Sprintf("%d must be at least 1", t.MinRequests))
			t.MinRequests = DefaultThrottleMinRequests
		}
	}
	if d.RPM != nil {
		t.RPM = *d.RPM
		switch {
		case t.RPM < 0:
			fail("rpm", fmt.Sprintf("%d must be 0 (throttle off) or more", t.RPM))
			t.RPM = 0
		case burst > 0 && t.RPM >= burst:
			fail("rpm", fmt.Sprintf("%d must be below burst_rpm %d: a throttle lowers the cap", t.RPM, burst))
		}
	}
	t.Trigger = trigger(t, burst)
	return t
}

// planSet is the validated plans of one catalog.
type planSet struct {
	byName map[string]*Plan
	list   []*Plan
}

var (
	defaultSet  *planSet
	defaultOnce sync.Once
)

func attachPlans(c *Catalog, set *planSet) { c.plans = set }

func (c *Catalog) planSet() *planSet {
	if c.plans != nil {
		return c.plans
	}
	// A Catalog not built by Parse (tests, tools) serves the defaults.
	defaultOnce.Do(func() {
		defaultSet = &planSet{byName: map[string]*Plan{}, list: DefaultPlans()}
		for _, p := range defaultSet.list {
			defaultSet.byName[p.Name] = p
		}
	})
	return defaultSet
}

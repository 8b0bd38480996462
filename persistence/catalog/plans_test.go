package catalog

import (
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
)

const planBase = "models:\n  - id: m1\n    kind: chat\n    routes: [{id: r1, format: chat, base_url: 'http://x'}]\n"

func TestPlansParsed(t *testing.T) {
	yaml := planBase + `plans:
  - name: team
    window_requests: 300
    window: 8h
    window_anchor: 2026-01-05T02:00:00+02:00
    weekly_requests: 2000
    burst_rpm: 40
    burst_scope: key
    allow_automated: true
    image_daily_limit: 0
    video_daily_seconds: 120
    overdraft_usd: "2.5"
    throttle: {window: 20m, max_share: 0.25, min_requests: 50, rpm: 5, duration: 30m}
  - name: basic
`
	c, err := Parse("f.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := c.Plan("team")
	if !ok {
		t.Fatal("plan team missing")
	}
	b, _ := c.Plan("basic")
	checks := []struct {
		name      string
		got, want any
	}{
		{"window requests", p.WindowRequests, int64(300)},
		{"window", p.Window, 8 * time.Hour},
		{"anchor in UTC", p.WindowAnchor, time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)},
		{"weekly", p.WeeklyRequests, int64(2000)},
		{"burst", p.BurstRPM, int64(40)},
		{"scope", p.BurstScope, BurstScopeKey},
		{"automated", p.AllowAutomated, true},
		{"images 0 = unlimited", p.ImageDailyLimit, int64(0)},
		{"video", p.VideoDailySeconds, int64(120)},
		{"overdraft", p.Overdraft, money.Amount(2_500_000_000_000)},
		{"throttle window", p.Throttle.Window, 20 * time.Minute},
		{"throttle share", p.Throttle.MaxShare, 0.25},
		{"throttle min", p.Throttle.MinRequests, int64(50)},
		{"throttle rpm", p.Throttle.RPM, int64(5)},
		{"throttle duration", p.Throttle.Duration, 30 * time.Minute},
		{"throttle trigger = max(50, ceil(0.25*40*20))", p.Throttle.Trigger, int64(200)},
		{"basic window default", b.Window, DefaultWindow},
		{"basic anchor default", b.WindowAnchor, time.Unix(0, 0).UTC()},
		{"basic unlimited window", b.WindowRequests, int64(0)},
		{"basic scope default", b.BurstScope, BurstScopeAccount},
		{"basic images default", b.ImageDailyLimit, int64(10)},
		{"basic video default", b.VideoDailySeconds, int64(500)},
		{"basic overdraft default", b.Overdraft, money.Amount(0)},
		{"basic throttle off without burst", b.Throttle.Enabled(), false},
		{"basic trigger without burst", b.Throttle.Trigger, int64(DefaultThrottleMinRequests)},
		{"plans sorted", c.Plans()[0].Name + "," + c.Plans()[1].Name, "basic,team"},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
	if _, ok := c.Plan("free"); ok {
		t.Error("a file with plans must not also serve the defaults")
	}
}

func TestDefaultPlans(t *testing.T) {
	c, err := Parse("f.yaml", []byte(planBase))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name                      string
		window, weekly, burst     int64
		automated                 bool
		throttleRPM, throttleTrig int64
	}{
		{"demo", 10000, 0, 600, true, 150, 3000},
		{"free", 100, 500, 10, false, 2, 200},
		{"pro", 1000, 10000, 60, false, 15, 300},
	}
	for _, tc := range cases {
		p, ok := c.Plan(tc.name)
		if !ok {
			t.Fatalf("default plan %s missing", tc.name)
		}
		got := []any{p.WindowRequests, p.WeeklyRequests, p.BurstRPM, p.AllowAutomated, p.Throttle.RPM, p.Throttle.Trigger, p.Window, p.BurstScope, p.ImageDailyLimit, p.VideoDailySeconds}
		want := []any{tc.window, tc.weekly, tc.burst, tc.automated, tc.throttleRPM, tc.throttleTrig, 5 * time.Hour, BurstScopeAccount, int64(10), int64(500)}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s field %d = %v, want %v", tc.name, i, got[i], want[i])
			}
		}
	}
	// A Catalog not built by Parse serves the defaults too.
	if _, ok := (&Catalog{}).Plan("pro"); !ok {
		t.Error("zero catalog has no default plans")
	}
}

func TestPlanValidationErrorsNameFilePlanAndField(t *testing.T) {
	cases := []struct {
		name, plan, want string
	}{
		{"bad name", "{name: 'a b'}", `f.yaml: plan #1: name: "a b" must be`},
		{"dup", "{name: p}\n  - {name: p}", `f.yaml: plan p: name: "p" is used by more than one plan`},
		{"negative window", "{name: p, window_requests: -1}", "f.yaml: plan p: window_requests: -1 must be between 0 (unlimited)"},
		{"short window", "{name: p, window: 30s}", `f.yaml: plan p: window: "30s" is not a whole-second duration of at least 1m`},
		{"fractional window", "{name: p, window: 90.5s}", `f.yaml: plan p: window: "90.5s"`},
		{"bad anchor", "{name: p, window_anchor: monday}", `f.yaml: plan p: window_anchor: "monday" is not an RFC 3339 time`},
		{"fractional anchor", "{name: p, window_anchor: '2026-01-01T00:00:00.5Z'}", "window_anchor: \"2026-01-01T00:00:00.5Z\" must be a whole second"},
		{"bad scope", "{name: p, burst_scope: team}", `f.yaml: plan p: burst_scope: "team" must be account or key`},
		{"bad overdraft", "{name: p, overdraft_usd: '-1'}", "f.yaml: plan p: overdraft_usd: amount \"-1\" is not a plain non-negative decimal number"},
		{"negative images", "{name: p, image_daily_limit: -2}", "f.yaml: plan p: image_daily_limit: -2 must be between 0"},
		{"throttle share", "{name: p, throttle: {max_share: 1.5}}", "f.yaml: plan p: throttle.max_share: 1.5 must be above 0 and at most 1"},
		{"throttle rpm above burst", "{name: p, burst_rpm: 10, throttle: {rpm: 10}}", "f.yaml: plan p: throttle.rpm: 10 must be below burst_rpm 10"},
		{"throttle min", "{name: p, throttle: {min_requests: 0}}", "f.yaml: plan p: throttle.min_requests: 0 must be at least 1"},
		{"throttle duration", "{name: p, throttle: {duration: soon}}", `f.yaml: plan p: throttle.duration: "soon"`},
		{"unknown field", "{name: p, colour: red}", `plans[0]: unknown field "colour"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(planBase+"plans:\n  - "+c.plan+"\n"))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

func TestThrottleOnAndOff(t *testing.T) {
	c, err := Parse("f.yaml", []byte(planBase+"plans:\n  - {name: off, burst_rpm: 60, throttle: {rpm: 0}}\n  - {name: on, throttle: {rpm: 5}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := c.Plan("off"); p.Throttle.Enabled() {
		t.Fatal("rpm 0 must turn the throttle off")
	}
	if p, _ := c.Plan("on"); !p.Throttle.Enabled() || p.Throttle.RPM != 5 || p.Throttle.Trigger != DefaultThrottleMinRequests {
		t.Fatalf("explicit throttle without burst = %+v", p.Throttle)
	}
}

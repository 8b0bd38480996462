package quota

import (
	"context"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// The window allowance resets in full on the plan's fixed schedule, exactly at the second.
func TestWindowResetsOnScheduleToTheSecond(t *testing.T) {
	cases := []struct {
		name  string
		plan  string
		reset string // the boundary under test
	}{
		{"default anchor, 5h", "{name: p, window_requests: 1}", "2026-03-04T06:00:00Z"},
		{"anchor with offset, 8h", "{name: p, window_requests: 1, window: 8h, window_anchor: '2026-01-05T02:00:00+02:00'}", "2026-03-04T16:00:00Z"},
		{"future anchor, 5h", "{name: p, window_requests: 1, window_anchor: '2030-01-01T02:00:00Z'}", "2026-03-04T08:00:00Z"},
		{"half-hour anchor, 1h", "{name: p, window_requests: 1, window: 1h, window_anchor: '2026-03-04T10:30:00Z'}", "2026-03-04T12:30:00Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			p := plan(t, c.plan)
			reset, _ := time.Parse(time.RFC3339, c.reset)
			e.clk.Set(reset.Add(-time.Second))
			admitted(t, e.call("acct_w", "k", p))
			d := e.admit("acct_w", "k", p, 0, 0)
			refused(t, d, LimitWindow, time.Second)
			if !d.ResetsAt.Equal(reset) || d.Refused.Status() != 402 {
				t.Fatalf("resets_at = %v, status %d; want %v, 402", d.ResetsAt, d.Refused.Status(), reset)
			}
			e.clk.Set(reset)
			admitted(t, e.call("acct_w", "k", p))
			if st := e.state("acct_w", p); st.Window.Used != 1000 || !st.Window.ResetsAt.Equal(reset.Add(p.Window)) {
				t.Fatalf("new window = %+v", st.Window)
			}
		})
	}
}

// The weekly cap resets Monday 00:00 UTC; the daily image and video counters at 00:00 UTC.
func TestWeeklyAndDailyResets(t *testing.T) {
	e := newEnv(t, Config{})
	p := plan(t, "{name: p, weekly_requests: 2, image_daily_limit: 1, video_daily_seconds: 30}")
	monday := time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)
	e.clk.Set(monday.Add(-time.Second)) // Sunday 23:59:59
	admitted(t, e.call("acct_k", "k", p))
	admitted(t, e.call("acct_k", "k", p))
	d := e.admit("acct_k", "k", p, 0, 0)
	refused(t, d, LimitWeekly, time.Second)
	if !d.ResetsAt.Equal(monday) {
		t.Fatalf("weekly resets_at = %v", d.ResetsAt)
	}
	ctx := context.Background()
	img, err := e.svc.ReserveImages(ctx, "acct_k", p, 1)
	if err != nil || !img.Admitted {
		t.Fatalf("first image: %+v, %v", img, err)
	}
	vid, err := e.svc.ReserveVideoSeconds(ctx, "acct_k", p, 30)
	if err != nil || !vid.Admitted {
		t.Fatalf("video: %+v, %v", vid, err)
	}
	for _, c := range []struct {
		name  string
		do    func() (MediaDecision, error)
		limit Limit
	}{
		{"image", func() (MediaDecision, error) { return e.svc.ReserveImages(ctx, "acct_k", p, 1) }, LimitImages},
		{"video", func() (MediaDecision, error) { return e.svc.ReserveVideoSeconds(ctx, "acct_k", p, 1) }, LimitVideo},
	} {
		md, err := c.do()
		if err != nil || md.Admitted || md.Refused != c.limit || md.RetryAfter != time.Second || !md.ResetsAt.Equal(monday) || md.Refused.Status() != 429 {
			t.Fatalf("%s over the daily limit: %+v, %v", c.name, md, err)
		}
	}
	if err := e.svc.CommitImages(ctx, img.Reservation, 1); err != nil {
		t.Fatal(err)
	}
	e.clk.Set(monday)
	admitted(t, e.call("acct_k", "k", p))
	for _, c := range []func() (MediaDecision, error){
		func() (MediaDecision, error) { return e.svc.ReserveImages(ctx, "acct_k", p, 1) },
		func() (MediaDecision, error) { return e.svc.ReserveVideoSeconds(ctx, "acct_k", p, 30) },
	} {
		if md, err := c(); err != nil || !md.Admitted {
			t.Fatalf("after 00:00 UTC: %+v, %v", md, err)
		}
	}
	// Yesterday's video reservation commits to nothing: that day's counter is gone.
	if err := e.svc.CommitVideoSeconds(ctx, vid.Reservation, 30); err != nil {
		t.Fatal(err)
	}
	st := e.state("acct_k", p)
	if st.Images.Used != 0 || st.Images.Reserved != 1 || st.Video.Used != 0 || st.Video.Reserved != 30 || st.Weekly.Used != 1000 {
		t.Fatalf("new day state: images %+v video %+v weekly %+v", st.Images, st.Video, st.Weekly)
	}
}

// A true sliding window: a call at t holds its slot until t+60 s exactly.
func TestBurstSlidingWindowEdge(t *testing.T) {
	e := newEnv(t, Config{})
	p := plan(t, "{name: p, burst_rpm: 3}")
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	steps := []struct {
		at        time.Duration
		admit     bool
		retry     time.Duration
		remaining int64
		reset     time.Duration
	}{
		{0, true, 0, 2, 60 * time.Second},
		{10 * time.Second, true, 0, 1, 60 * time.Second},
		{20 * time.Second, true, 0, 0, 60 * time.Second},
		{30 * time.Second, false, 30 * time.Second, 0, 60 * time.Second},
		{59*time.Second + 999*time.Millisecond, false, time.Millisecond, 0, 60 * time.Second},
		{60 * time.Second, true, 0, 0, 70 * time.Second},
		{60 * time.Second, false, 10 * time.Second, 0, 70 * time.Second},
		{70 * time.Second, true, 0, 0, 80 * time.Second},
		{141 * time.Second, true, 0, 2, 201 * time.Second},
	}
	for i, s := range steps {
		e.clk.Set(at(s.at))
		d := e.call("acct_b", "k", p)
		if d.Admitted != s.admit || d.RetryAfter != s.retry || d.Burst.Limit != 3 || d.Burst.Remaining != s.remaining || !d.Burst.Reset.Equal(at(s.reset)) || d.MaxRPM != 3 {
			t.Fatalf("step %d at +%v: %+v", i, s.at, d)
		}
		if !s.admit && (d.Refused != LimitBurst || d.Refused.Status() != 429) {
			t.Fatalf("step %d refused by %q", i, d.Refused)
		}
	}
}

func TestBurstScope(t *testing.T) {
	cases := []struct {
		scope      string
		otherAdmit bool
	}{
		{catalog.BurstScopeAccount, false},
		{catalog.BurstScopeKey, true},
	}
	for _, c := range cases {
		t.Run(c.scope, func(t *testing.T) {
			e := newEnv(t, Config{})
			p := plan(t, "{name: p, burst_rpm: 2, burst_scope: "+c.scope+"}")
			admitted(t, e.call("acct_s", "key_a", p))
			admitted(t, e.call("acct_s", "key_a", p))
			refused(t, e.admit("acct_s", "key_a", p, 0, 0), LimitBurst, 60*time.Second)
			if d := e.call("acct_s", "key_b", p); d.Admitted != c.otherAdmit {
				t.Fatalf("other key admitted = %v, want %v (%+v)", d.Admitted, c.otherAdmit, d)
			}
			// Another account is never affected.
			admitted(t, e.call("acct_t", "key_a", p))
		})
	}
}

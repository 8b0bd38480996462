package api_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// limitsCatalog has a plan per kind of 429: the burst (2 a minute), the abuse throttle (the
// first call throttles the key to 1 a minute) and the daily media limits.
var limitsCatalog = nodetest.DefaultCatalog + `
plans:
  - {name: demo, allow_automated: true}
  - {name: burst2, burst_rpm: 2, allow_automated: true}
  - {name: throttled, burst_rpm: 10, allow_automated: true,
     throttle: {window: 1m, max_share: 0.1, min_requests: 1, rpm: 1, duration: 10m}}
  - {name: daily, burst_rpm: 100, image_daily_limit: 1, video_daily_seconds: 4, allow_automated: true}
`

// TestLimitRefusalsCarryTheirFields: a 429 body carries retry_after_seconds (equal to
// Retry-After) and, where a per-minute rate applies, max_rpm; a daily-limit 429 carries
// resets_at instead of max_rpm. In every client envelope.
func TestLimitRefusalsCarryTheirFields(t *testing.T) {
	clk := testutil.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	health := routehealth.DefaultPolicy()
	health.Now = clk.Now
	env := nodetest.Start(t, limitsCatalog, nodetest.Options{Health: health, Quota: quota.Config{Now: clk.Now}})
	keyOn := func(plan string) string {
		acct, err := env.Node.Store.CreateAccount(plan+"@example.com", plan)
		if err != nil {
			t.Fatal(err)
		}
		_, secret, err := env.Node.Store.CreateKey(acct.ID, persistence.KeySpec{Name: plan})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	burst, throttled, daily := keyOn("burst2"), keyOn("throttled"), keyOn("daily")
	hello := `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`
	// Fill each budget: the clock stands still, so nothing leaves the minute or the day.
	fill := []struct{ key, path, body string }{
		{burst, "/v1/chat/completions", hello}, {burst, "/v1/chat/completions", hello},
		{throttled, "/v1/chat/completions", hello},
		{daily, "/v1/images/generations", `{"model":"img","prompt":"a fox"}`},
	}
	for _, f := range fill {
		if resp := env.Post(f.path, f.key, f.body); resp.StatusCode != 200 {
			t.Fatalf("filling %s: %d %s", f.path, resp.StatusCode, nodetest.Read(t, resp))
		} else {
			nodetest.Read(t, resp)
		}
	}
	const minute, untilMidnight, midnight = "60", "43200", "2026-11-23T00:00:00Z"
	cases := []struct {
		name, key, path, body string
		format, code          string
		retryAfter            string
		fields                map[string]string
	}{
		{"burst, chat", burst, "/v1/chat/completions", hello, "chat", "burst_limit_exceeded", minute,
			map[string]string{"retry_after_seconds": minute, "max_rpm": "2"}},
		{"burst, messages", burst, "/v1/messages", `{"model":"chat","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, "messages", "burst_limit_exceeded", minute,
			map[string]string{"retry_after_seconds": minute, "max_rpm": "2"}},
		{"burst, responses", burst, "/v1/responses", `{"model":"chat","input":"hi"}`, "chat", "burst_limit_exceeded", minute,
			map[string]string{"retry_after_seconds": minute, "max_rpm": "2"}},
		{"burst, gemini", burst, "/v1beta/models/chat:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, "google", "burst_limit_exceeded", minute,
			map[string]string{"retry_after_seconds": minute, "max_rpm": "2"}},
		{"burst, embeddings", burst, "/v1/embeddings", `{"model":"embed","input":"x"}`, "chat", "burst_limit_exceeded", minute,
			map[string]string{"retry_after_seconds": minute, "max_rpm": "2"}},
		{"throttle, chat", throttled, "/v1/chat/completions", hello, "chat", "key_throttled", minute,
			map[string]string{"retry_after_seconds": minute, "max_rpm": "1"}},
		{"throttle, messages", throttled, "/v1/messages", `{"model":"chat","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, "messages", "key_throttled", minute,
			map[string]string{"retry_after_seconds": minute, "max_rpm": "1"}},
		{"daily images", daily, "/v1/images/generations", `{"model":"img","prompt":"a fox"}`, "chat", "image_daily_limit_exceeded", untilMidnight,
			map[string]string{"retry_after_seconds": untilMidnight, "resets_at": midnight}},
		{"daily video seconds", daily, "/v1/videos", `{"model":"vid","prompt":"a fox","mode":"text","seconds":"8"}`, "chat", "video_daily_limit_exceeded", untilMidnight,
			map[string]string{"retry_after_seconds": untilMidnight, "resets_at": midnight}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Post(c.path, c.key, c.body)
			raw := nodetest.Read(t, resp)
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != c.retryAfter {
				t.Fatalf("%d Retry-After %q, want 429 and %s: %s", resp.StatusCode, resp.Header.Get("Retry-After"), c.retryAfter, raw)
			}
			e := readEnvelope(t, raw)
			if e.Format != c.format || e.Code != c.code || !reflect.DeepEqual(e.Fields, c.fields) {
				t.Fatalf("%s envelope, code %q, fields %v; want %s, %q, %v: %s", e.Format, e.Code, e.Fields, c.format, c.code, c.fields, raw)
			}
		})
	}
}

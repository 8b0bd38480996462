package simulator

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Each refusal kind, in each format, as that provider writes it: status, retry headers (never
// Retry-After) and exact body.
func TestRefusalKindsInEachFormat(t *testing.T) {
	s, base := startSim(t)
	geminiQuota := func(quotaID, retry string) string {
		details := `{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests",` +
			`"quotaId":"` + quotaID + `","quotaDimensions":{"location":"global","model":"sim-model"},"quotaValue":"10"}]}`
		if retry != "" {
			details += `,{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"` + retry + `"}`
		}
		return `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details (simulated).",` +
			`"status":"RESOURCE_EXHAUSTED","details":[` + details + `]}}`
	}
	openAIRateLimit := `{"error":{"message":"Rate limit reached for requests (simulated). Please try again later.","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`
	openAIQuota := `{"error":{"message":"You exceeded your current quota, please check your plan and billing details (simulated).","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
	cases := []struct {
		format string
		kind   FailKind
		delay  time.Duration
		retry  int // RetryAfter seconds, used when delay is 0
		status int
		header map[string]string // expected headers ("" = absent)
		body   string
	}{
		{"gemini", FailRetryHint, 34400 * time.Millisecond, 0, 429, nil, geminiQuota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "34.4s")},
		{"gemini", FailRetryHint, 0, 3, 429, nil, geminiQuota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "3s")},
		{"gemini", FailQuota, 0, 0, 429, nil, geminiQuota("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "")},
		{"gemini", FailQuota, 47 * time.Second, 0, 429, nil, geminiQuota("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "47s")},
		{"chat", FailRetryHint, 2500 * time.Millisecond, 0, 429, map[string]string{"Retry-After-Ms": "2500"}, openAIRateLimit},
		{"responses", FailRetryHint, 0, 0, 429, map[string]string{"Retry-After-Ms": ""}, openAIRateLimit},
		{"chat", FailQuota, 0, 0, 429, nil, openAIQuota},
		{"responses", FailQuota, 0, 0, 429, nil, openAIQuota},
		{"messages", FailRetryHint, 4 * time.Second, 0, 429, map[string]string{"Anthropic-Ratelimit-Requests-Remaining": "0"},
			`{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit (simulated). Please try again later."}}`},
		{"messages", FailQuota, 0, 0, 400, nil,
			`{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits. (simulated)"}}`},
	}
	byName := map[string]formatCase{}
	for _, f := range formats {
		byName[f.name] = f
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s/%v", c.format, c.kind, c.delay), func(t *testing.T) {
			f := byName[c.format]
			s.SetBehavior("r", Behavior{FailKind: c.kind, RetryDelay: c.delay, RetryAfter: c.retry, FailStatus: 500})
			sent := time.Now()
			resp, data := callHeaders(t, http.MethodPost, base+"/r/r"+f.path, f.body(turn{user: "hi"}), f.headers)
			if resp.StatusCode != c.status || resp.Header.Get("Retry-After") != "" {
				t.Fatalf("status %d Retry-After %q, want %d and none", resp.StatusCode, resp.Header.Get("Retry-After"), c.status)
			}
			for k, v := range c.header {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			want := c.body
			if c.format == "messages" {
				want = strings.TrimSuffix(want, "}") + `,"request_id":"` + resp.Header.Get("request-id") + `"}`
			}
			assertJSON(t, data, want)
			if c.format == "messages" && c.kind == FailRetryHint {
				// The reset is a whole second, never earlier than the delay asked for.
				reset, err := time.Parse(time.RFC3339, resp.Header.Get("Anthropic-Ratelimit-Requests-Reset"))
				if err != nil || reset.Before(sent.Add(c.delay)) || reset.After(time.Now().Add(c.delay+time.Second)) {
					t.Errorf("reset %q (%v) not at sent+%v rounded up", resp.Header.Get("Anthropic-Ratelimit-Requests-Reset"), err, c.delay)
				}
			}
		})
	}
	// FailFraction applies to a kind as to a status.
	s.SetBehavior("half", Behavior{FailKind: FailQuota, FailFraction: 0.5})
	var statuses []int
	for i := 0; i < 4; i++ {
		resp, _ := post(t, base+"/r/half/v1/chat/completions", hiChat)
		statuses = append(statuses, resp.StatusCode)
	}
	if fmt.Sprint(statuses) != "[200 429 200 429]" {
		t.Errorf("statuses %v, want every second call refused", statuses)
	}
}

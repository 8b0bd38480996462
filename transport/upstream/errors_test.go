package upstream

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	if name == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "upstream_errors", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each provider answer → what the gateway does with the route (kind), how long the provider
// asked it to wait, and the provider's message kept for the operator.
func TestClassifyProviderAnswers(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		header  map[string]string
		body    string // a file in testdata/upstream_errors
		kind    Kind
		wait    time.Duration
		message string
	}{
		// Plain statuses.
		{"429 bare", 429, nil, "", RateLimited, 0, ""},
		{"500", 500, nil, "", ServerError, 0, ""},
		{"502", 502, nil, "", ServerError, 0, ""},
		{"503", 503, nil, "", ServerError, 0, ""},
		{"529 overloaded", 529, nil, "anthropic_overloaded.json", ServerError, 0, ""},
		{"401: the route's credential is wrong", 401, nil, "", ServerError, 0, ""},
		{"403", 403, nil, "", ServerError, 0, ""},
		{"404", 404, nil, "", ServerError, 0, ""},
		{"408", 408, nil, "", ServerError, 0, ""},
		{"400", 400, nil, "openai_context_length.json", ClientError, 0, ""},
		{"413", 413, nil, "", ClientError, 0, ""},
		{"422", 422, nil, "", ClientError, 0, ""},
		{"gemini 400 INVALID_ARGUMENT", 400, nil, "gemini_invalid_argument.json", ClientError, 0, ""},

		// Retry hints in headers.
		{"Retry-After seconds", 429, map[string]string{"Retry-After": "7"}, "", RateLimited, 7 * time.Second, ""},
		{"Retry-After fractional seconds", 429, map[string]string{"Retry-After": "1.5"}, "", RateLimited, 1500 * time.Millisecond, ""},
		{"Retry-After HTTP date", 429, map[string]string{"Retry-After": testNow.Add(90 * time.Second).Format(http.TimeFormat)}, "", RateLimited, 90 * time.Second, ""},
		{"Retry-After date in the past", 429, map[string]string{"Retry-After": testNow.Add(-time.Minute).Format(http.TimeFormat)}, "", RateLimited, 0, ""},
		{"Retry-After garbage", 429, map[string]string{"Retry-After": "soon"}, "", RateLimited, 0, ""},
		{"Retry-After negative", 429, map[string]string{"Retry-After": "-5"}, "", RateLimited, 0, ""},
		{"Retry-After absurd is capped", 429, map[string]string{"Retry-After": "99999999999"}, "", RateLimited, 24 * time.Hour, ""},
		{"OpenAI retry-after-ms", 429, map[string]string{"retry-after-ms": "2500"}, "openai_rate_limit.json", RateLimited, 2500 * time.Millisecond,
			"Rate limit reached for gpt-4o in organization org-simulated on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms."},
		{"OpenAI retry-after-ms fraction rounds up", 429, map[string]string{"retry-after-ms": "20.2"}, "", RateLimited, 21 * time.Millisecond, ""},
		{"the longer of Retry-After and retry-after-ms", 429, map[string]string{"Retry-After": "3", "retry-after-ms": "2500"}, "", RateLimited, 3 * time.Second, ""},
		{"OpenAI exhausted token limit resets", 429, map[string]string{
			"x-ratelimit-remaining-requests": "4999", "x-ratelimit-reset-requests": "12ms",
			"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "6m0s"}, "", RateLimited, 6 * time.Minute, ""},
		{"OpenAI reset of a limit not exhausted is no hint", 429, map[string]string{
			"x-ratelimit-remaining-requests": "3", "x-ratelimit-reset-requests": "20s"}, "", RateLimited, 0, ""},
		{"Anthropic exhausted request limit resets", 429, map[string]string{
			"anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": "2026-11-22T12:00:42Z",
			"anthropic-ratelimit-tokens-remaining": "9000", "anthropic-ratelimit-tokens-reset": "2026-11-22T12:05:00Z"},
			"anthropic_rate_limit.json", RateLimited, 42 * time.Second,
			"This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits."},
		{"Anthropic retry-after wins when longer", 429, map[string]string{"retry-after": "60",
			"anthropic-ratelimit-input-tokens-remaining": "0", "anthropic-ratelimit-input-tokens-reset": "2026-11-22T12:00:10Z"},
			"anthropic_rate_limit.json", RateLimited, 60 * time.Second,
			"This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits."},

		// Retry hints in the body (Gemini RetryInfo, rounded up to whole seconds).
		{"Gemini RetryInfo, no header", 429, nil, "gemini_rate_limit_retry_info.json", RateLimited, 35 * time.Second,
			"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. * Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, model: gemini-2.…"}, // clipped at 300 bytes
		{"Gemini RetryInfo longer than Retry-After", 429, map[string]string{"Retry-After": "5"}, "gemini_rate_limit_retry_info.json", RateLimited, 35 * time.Second, "*"},
		{"Retry-After longer than Gemini RetryInfo", 429, map[string]string{"Retry-After": "40"}, "gemini_rate_limit_retry_info.json", RateLimited, 40 * time.Second, "*"},
		{"Gemini stream array, whole-second delay", 429, nil, "gemini_stream_rate_limit.json", RateLimited, 2 * time.Second, "Resource has been exhausted (e.g. check quota)."},

		// Billing refusals: the operator's problem, whatever the status.
		{"OpenAI insufficient_quota", 429, nil, "openai_insufficient_quota.json", Refused, 0,
			"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."},
		{"Anthropic credit balance, 400", 400, nil, "anthropic_credit_balance.json", Refused, 0,
			"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."},
		{"Anthropic credit balance, 403", 403, nil, "anthropic_credit_balance.json", Refused, 0, "*"},
		{"Anthropic billing_error 402", 402, nil, "anthropic_billing_error.json", Refused, 0, "This organization has been disabled for billing reasons."},
		{"Anthropic spend limit", 429, map[string]string{"retry-after": "30"}, "anthropic_spend_limit.json", Refused, 30 * time.Second,
			"You have reached your specified API usage limits. You will regain access on 2026-12-01 at 00:00 UTC."},
		{"any provider's 402", 402, nil, "deepseek_insufficient_balance.json", Refused, 0, "Insufficient Balance"},
		{"402 without a body", 402, nil, "", Refused, 0, ""},
		{"Gemini per-day quota, with a RetryInfo", 429, nil, "gemini_daily_quota.json", Refused, 47 * time.Second,
			"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."},
		{"Gemini quota of zero", 429, nil, "gemini_limit_zero.json", Refused, 11 * time.Second, "*"},
		{"Gemini per-day ErrorInfo, stream array", 429, nil, "gemini_per_day_error_info.json", Refused, 0,
			"Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per day per user per tier'."},
		{"Gemini FAILED_PRECONDITION billing", 400, nil, "gemini_billing_precondition.json", Refused, 0,
			"Gemini API free tier is not available in your country. Please enable billing on your project in Google AI Studio."},
		{"a billing body on a 5xx is a server error", 500, nil, "openai_insufficient_quota.json", ServerError, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: c.status, Header: http.Header{}}
			for k, v := range c.header {
				resp.Header.Set(k, v)
			}
			e := statusError(resp, fixture(t, c.body), testNow)
			if e.Kind != c.kind || e.RetryAfter != c.wait {
				t.Errorf("kind %v wait %v, want %v %v", e.Kind, e.RetryAfter, c.kind, c.wait)
			}
			if c.message != "*" && e.Message != c.message {
				t.Errorf("message %q\n want %q", e.Message, c.message)
			}
			if c.message == "*" && e.Message == "" {
				t.Error("no provider message kept")
			}
			if want := c.kind != ClientError; e.Retryable() != want {
				t.Errorf("retryable %v, want %v", e.Retryable(), want)
			}
		})
	}
}

func TestProtoDuration(t *testing.T) {
	cases := map[string]time.Duration{
		"34.4s": 35 * time.Second, "3s": 3 * time.Second, "3.000s": 3 * time.Second, "0.000001s": time.Second,
		"0s": 0, "-1s": 0, "34": 0, "": 0, "1.2.3s": 0, "abcs": 0, "99999999999s": 24 * time.Hour,
	}
	for in, want := range cases {
		if got := parseProtoDuration(in); got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}

func TestClipMessage(t *testing.T) {
	long := make([]byte, 400)
	for i := range long {
		long[i] = 'a'
	}
	cases := []struct{ in, want string }{
		{"  two\n\nlines\t here ", "two lines here"},
		{"bell\a and \x1b[31mcolour", "bell and [31mcolour"},
		{"bad \xff utf8", "bad utf8"},
		{string(long), string(long[:300]) + "…"},
		{string(long[:299]) + "é", string(long[:299]) + "…"}, // never cut inside a rune
	}
	for _, c := range cases {
		if got := clipMessage(c.in); got != c.want {
			t.Errorf("clipMessage(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A failed call tells a reader that cannot name this package (actors/video's UpstreamError)
// what a video task acts on: the status, whether it was a rate limit, and the retry hint.
func TestErrorDescribesItselfToAVideoTask(t *testing.T) {
	answered := func(status int, retryAfter string) *Error {
		resp := &http.Response{StatusCode: status, Header: http.Header{}}
		if retryAfter != "" {
			resp.Header.Set("Retry-After", retryAfter)
		}
		return statusError(resp, nil, testNow)
	}
	cases := []struct {
		name    string
		err     *Error
		status  int
		limited bool
		hint    time.Duration
	}{
		{"429 with Retry-After", answered(429, "7"), 429, true, 7 * time.Second},
		{"402 billing refusal with Retry-After", answered(402, "60"), 402, false, time.Minute},
		{"404: the job is gone", answered(404, ""), 404, false, 0},
		{"500", answered(500, "3"), 500, false, 0},
		{"no answer", &Error{Kind: Unreachable, Err: errors.New("connection refused")}, 0, false, 0},
	}
	for _, c := range cases {
		if c.err.HTTPStatus() != c.status || c.err.RateLimited() != c.limited || c.err.RetryHint() != c.hint {
			t.Errorf("%s: status %d rate-limited %v hint %v, want %d %v %v", c.name,
				c.err.HTTPStatus(), c.err.RateLimited(), c.err.RetryHint(), c.status, c.limited, c.hint)
		}
	}
}

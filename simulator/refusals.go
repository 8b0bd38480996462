package simulator

import (
	"net/http"
	"strconv"
	"time"
)

// FailKind is a provider refusal a route can be made to answer with (Behavior.FailKind):
// the cases a gateway must tell apart from an ordinary error, each written by every format
// as its provider does.
type FailKind string

const (
	// FailRetryHint is a 429 whose retry hint is not a Retry-After header but the provider's
	// other machine-readable place: Gemini's RetryInfo in the body, OpenAI's retry-after-ms
	// header, Anthropic's anthropic-ratelimit-requests-reset with -remaining 0.
	FailRetryHint FailKind = "retry_hint"
	// FailQuota is a billing refusal: the operator's quota or credit is gone at the
	// provider. OpenAI: 429 insufficient_quota. Gemini: 429 RESOURCE_EXHAUSTED for a per-day
	// quota (with the RetryInfo Google adds anyway when a delay is set). Anthropic: 400
	// "Your credit balance is too low…".
	FailQuota FailKind = "quota"
)

// failKinds are the kinds the control API accepts.
var failKinds = map[FailKind]bool{FailRetryHint: true, FailQuota: true}

// injectedFailure is the error a failing call answers with, with its headers set on w: the
// route's FailKind refusal, or FailStatus's ordinary error with Retry-After.
func injectedFailure(d dialect, w http.ResponseWriter, b Behavior) apiError {
	if b.FailKind != "" {
		delay := b.RetryDelay
		if delay <= 0 {
			delay = time.Duration(b.RetryAfter) * time.Second
		}
		return d.refusal(w, b.FailKind, delay)
	}
	e := d.failure(b.FailStatus)
	if b.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(b.RetryAfter))
		e.RetryAfter = b.RetryAfter
	}
	return e
}

// openAIRefusal is OpenAI's wording of a refusal kind.
func openAIRefusal(w http.ResponseWriter, kind FailKind, delay time.Duration) apiError {
	if kind == FailQuota {
		return apiError{Status: http.StatusTooManyRequests, Type: "insufficient_quota", Code: "insufficient_quota",
			Message: "You exceeded your current quota, please check your plan and billing details (simulated)."}
	}
	if delay > 0 {
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(delay.Milliseconds(), 10))
	}
	return openAIFailure(http.StatusTooManyRequests)
}

// messagesRefusal is Anthropic's wording of a refusal kind. The rate-limit reset is an RFC
// 3339 time in whole seconds, rounded up so it never promises a shorter wait.
func messagesRefusal(w http.ResponseWriter, kind FailKind, delay time.Duration) apiError {
	if kind == FailQuota {
		return apiError{Status: http.StatusBadRequest, Type: "invalid_request_error",
			Message: "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits. (simulated)"}
	}
	if delay > 0 {
		reset := time.Now().Add(delay)
		if t := reset.Truncate(time.Second); t.Before(reset) {
			reset = t.Add(time.Second)
		}
		w.Header().Set("Anthropic-Ratelimit-Requests-Remaining", "0")
		w.Header().Set("Anthropic-Ratelimit-Requests-Reset", reset.UTC().Format(time.RFC3339))
	}
	return messagesFailure(http.StatusTooManyRequests)
}

// geminiRefusal is Google's wording of a refusal kind: the hint only in the body.
func geminiRefusal(_ http.ResponseWriter, kind FailKind, delay time.Duration) apiError {
	e := apiError{Status: http.StatusTooManyRequests, Type: "RESOURCE_EXHAUSTED",
		Message: "You exceeded your current quota, please check your plan and billing details (simulated).",
		QuotaID: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}
	if kind == FailQuota {
		e.QuotaID = "GenerateRequestsPerDayPerProjectPerModel-FreeTier"
	}
	if delay > 0 {
		e.RetryDelay = strconv.FormatFloat(delay.Seconds(), 'f', -1, 64) + "s"
	}
	return e
}

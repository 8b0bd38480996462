package upstream

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRetryHint bounds any provider hint, so a garbled or hostile value cannot take a route
// out of rotation for years.
const maxRetryHint = 24 * time.Hour

// retryHint is the longest wait a provider's headers ask for (0: none): Retry-After (seconds
// or an HTTP date), retry-after-ms (OpenAI), and the reset time of every rate limit the
// answer reports as exhausted (OpenAI x-ratelimit-*, Anthropic anthropic-ratelimit-*). The
// longest wins: the route must not come back before the provider said it may.
func retryHint(h http.Header, now time.Time) time.Duration {
	d := max(parseRetryAfter(h.Get("Retry-After"), now), parseRetryAfterMS(h.Get("Retry-After-Ms")))
	for _, limit := range [...]string{"requests", "tokens", "input-tokens", "output-tokens"} {
		if h.Get("X-Ratelimit-Remaining-"+limit) == "0" {
			d = max(d, parseResetDuration(h.Get("X-Ratelimit-Reset-"+limit)))
		}
		if h.Get("Anthropic-Ratelimit-"+limit+"-Remaining") == "0" {
			d = max(d, parseResetTime(h.Get("Anthropic-Ratelimit-"+limit+"-Reset"), now))
		}
	}
	return min(d, maxRetryHint)
}

// parseRetryAfter reads delay-seconds (a fraction is rounded up to the millisecond) or an
// HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		return positiveMillis(n * 1000)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryHint)
	}
	return 0
}

// parseRetryAfterMS reads OpenAI's retry-after-ms: milliseconds, possibly fractional.
func parseRetryAfterMS(v string) time.Duration {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return 0
	}
	return positiveMillis(n)
}

// parseResetDuration reads OpenAI's x-ratelimit-reset-*: a duration such as "1s", "6m0s"
// or "12ms".
func parseResetDuration(v string) time.Duration {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < 0 {
		return 0
	}
	return min(d, maxRetryHint)
}

// parseResetTime reads Anthropic's anthropic-ratelimit-*-reset: an RFC 3339 time.
func parseResetTime(v string, now time.Time) time.Duration {
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(v))
	if err != nil || !t.After(now) {
		return 0
	}
	return min(t.Sub(now), maxRetryHint)
}

// positiveMillis turns a count of milliseconds into a duration, rounding a fraction up;
// negative and NaN values are no hint, absurd ones are capped.
func positiveMillis(ms float64) time.Duration {
	switch {
	case !(ms > 0):
		return 0
	case ms >= float64(maxRetryHint/time.Millisecond):
		return maxRetryHint
	}
	return time.Duration(math.Ceil(ms)) * time.Millisecond
}

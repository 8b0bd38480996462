package upstream

import (
	"fmt"
	"net/http"
	"time"
)

// Kind says what went wrong with an attempt and so what the gateway does next.
type Kind int

const (
	Unreachable   Kind = iota // connect or transport error: fail over
	TimedOut                  // no first byte in time: fail over
	ServerError               // 5xx, or 401/403/404 (the route's setup is wrong): fail over
	RateLimited               // 429: cool the route for at least the provider's hint, fail over
	ClientError               // other 4xx: the request itself is bad; pass it to the client
	Canceled                  // the client went away
	Misconfigured             // the route's URL cannot be used
	Refused                   // billing refusal: the operator's quota or credit is gone at the provider; long cooldown, fail over
)

// Error is a failed attempt.
type Error struct {
	Kind Kind
	// Status is the upstream's HTTP status (0 when it never answered).
	Status int
	// RetryAfter is the provider's retry hint (RateLimited, Refused): the longest of its
	// Retry-After, retry-after-ms, exhausted rate-limit resets and the body's retry info.
	RetryAfter time.Duration
	// Message is the provider's own error message (RateLimited, Refused), clipped: operator
	// information for logs and the route-health view, never shown to a client.
	Message string
	Header  http.Header
	Body    []byte // the upstream's error body, at most 64 KiB
	Err     error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("upstream answered %d", e.Status)
	}
	return fmt.Sprintf("upstream: %v", e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// HTTPStatus, RateLimited and RetryHint describe the failure to packages that read it
// through an interface of their own (actors/video's UpstreamError) instead of this type.
func (e *Error) HTTPStatus() int          { return e.Status }
func (e *Error) RateLimited() bool        { return e.Kind == RateLimited }
func (e *Error) RetryHint() time.Duration { return e.RetryAfter }

// Retryable reports whether another route may succeed where this one failed.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case Unreachable, TimedOut, ServerError, RateLimited, Misconfigured, Refused:
		return true
	}
	return false
}

// statusError classifies a non-2xx answer. A billing refusal wins over its status: it is
// the operator's problem even when the provider says 400 or 403, and a 429 for an exhausted
// quota will not end when a rate window rolls.
func statusError(resp *http.Response, body []byte, now time.Time) *Error {
	e := &Error{Status: resp.StatusCode, Header: resp.Header, Body: body}
	said := readErrorBody(body)
	switch s := resp.StatusCode; {
	case s < 500 && (s == http.StatusPaymentRequired || said.billing):
		e.Kind = Refused
	case s == http.StatusTooManyRequests:
		e.Kind = RateLimited
	case s >= 500, s == http.StatusUnauthorized, s == http.StatusForbidden, s == http.StatusNotFound, s == http.StatusRequestTimeout:
		e.Kind = ServerError
	default:
		e.Kind = ClientError
	}
	if e.Kind == RateLimited || e.Kind == Refused {
		e.RetryAfter = max(retryHint(resp.Header, now), said.retryDelay)
		e.Message = said.message
	}
	return e
}

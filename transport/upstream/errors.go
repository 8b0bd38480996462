package upstream

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Kind says what went wrong with an attempt and so what the gateway does next.
type Kind int

const (
	Unreachable   Kind = iota // connect or transport error: fail over
	TimedOut                  // no first byte in time: fail over
	ServerError               // 5xx, or 401/403/404 (the route's setup is wrong): fail over
	RateLimited               // 429: cool the route for Retry-After, fail over
	ClientError               // other 4xx: the request itself is bad; pass it to the client
	Canceled                  // the client went away
	Misconfigured             // the route's URL cannot be used
)

// Error is a failed attempt.
type Error struct {
	Kind       Kind
	Status     int
	RetryAfter time.Duration
	Header     http.Header
	Body       []byte // the upstream's error body, at most 64 KiB
	Err        error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("upstream answered %d", e.Status)
	}
	return fmt.Sprintf("upstream: %v", e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether another route may succeed where this one failed.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case Unreachable, TimedOut, ServerError, RateLimited, Misconfigured:
		return true
	}
	return false
}

func statusError(resp *http.Response, body []byte) *Error {
	e := &Error{Status: resp.StatusCode, Header: resp.Header, Body: body}
	switch s := resp.StatusCode; {
	case s == http.StatusTooManyRequests:
		e.Kind = RateLimited
		e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	case s >= 500, s == http.StatusUnauthorized, s == http.StatusForbidden, s == http.StatusNotFound, s == http.StatusRequestTimeout:
		e.Kind = ServerError
	default:
		e.Kind = ClientError
	}
	return e
}

// parseRetryAfter reads delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

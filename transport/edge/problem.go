package edge

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Problem is a refusal the edge decides and each API renders in its own envelope: the
// chat shape's type and code, a message for people, and the seconds of Retry-After.
type Problem struct {
	Status     int
	Type       string
	Code       string
	Message    string
	RetryAfter int // seconds; 0: none
	// Reason is the refusal's label in modelgate_edge_refusals_total.
	Reason string
}

func (p *Problem) Error() string { return p.Message }

// SetRetryAfter sets Retry-After for an API whose error renderer does not take it.
func (p *Problem) SetRetryAfter(w http.ResponseWriter) {
	if p.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(p.RetryAfter))
	}
}

// StatusClientClosed is the status of a request whose client went away before its body was
// in (nobody reads the answer; nginx's 499).
const StatusClientClosed = 499

// Reasons, the labels of modelgate_edge_refusals_total.
const (
	ReasonTooLarge    = "body_too_large"
	ReasonTimeout     = "body_timeout"
	ReasonSlow        = "body_too_slow"
	ReasonBudget      = "bodies_in_flight"
	ReasonConnCap     = "conns_per_ip"
	ReasonConnCeiling = "conns_per_ip_closed"
)

func tooLarge(limit int64) *Problem {
	return &Problem{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "request_too_large", Reason: ReasonTooLarge,
		Message: "the request body is larger than this gateway's limit of " + ByteSize(limit)}
}

// busy: the bodies in flight hold all the memory the node gives them. They free it within
// body_timeout at worst and usually at once, so a retry after a second is a fair guess.
func busy() *Problem {
	return &Problem{Status: http.StatusServiceUnavailable, Type: "overloaded_error", Code: "too_many_request_bodies", RetryAfter: 1, Reason: ReasonBudget,
		Message: "the gateway is holding as many request bodies as its memory allows (server.max_body_bytes_in_flight); retry shortly"}
}

// tooSlow is the 408 of a body that missed its deadline: body_timeout, or the minimum rate.
func tooSlow(st *request, got int64, announced int64, rateBound bool) *Problem {
	of := ""
	if announced >= 0 {
		of = " of " + strconv.FormatInt(announced, 10)
	}
	p := &Problem{Status: http.StatusRequestTimeout, Type: "invalid_request_error", Code: "request_timeout", Reason: ReasonTimeout,
		Message: fmt.Sprintf("the request body did not arrive within %s (%d%s bytes came); send the body with its headers", st.timeout, got, of)}
	if rateBound {
		p.Reason = ReasonSlow
		p.Message = fmt.Sprintf("the request body arrived slower than %d bytes a second (%d%s bytes in %s), the least this gateway takes after the first %s",
			st.minRate, got, of, time.Since(st.start).Round(100*time.Millisecond), st.grace)
	}
	return p
}

func clientGone() *Problem {
	return &Problem{Status: StatusClientClosed, Type: "invalid_request_error", Code: "client_closed_request",
		Message: "the client closed the connection before its request body was in"}
}

func unreadable(err error) *Problem {
	return &Problem{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_request",
		Message: "the request body could not be read: " + err.Error()}
}

// tooManyConns is the 429 of a connection over server.max_conns_per_ip.
func tooManyConns(limit int) *Problem {
	return &Problem{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "too_many_connections", RetryAfter: 1, Reason: ReasonConnCap,
		Message: fmt.Sprintf("this address has more connections open to the gateway than the %d one address may hold (server.max_conns_per_ip); reuse or close one, then retry", limit)}
}

// ByteSize writes n for people: "64 KiB", "32 MiB", else bytes.
func ByteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

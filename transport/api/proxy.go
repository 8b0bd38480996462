package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/upstream"
)

// attempt is one try of one route.
type attempt struct {
	route   *catalog.Route
	resp    *upstream.Response
	started time.Time // for the latency
	since   time.Time // the same moment on route health's clock
	// firstByte is the time to first byte: the headers of a whole answer, the first content
	// of a stream (answering), for route health's time to first token.
	firstByte time.Duration
	// reported says route health has the attempt's outcome (a panicking request reports
	// an attempt still open, so the route's in-flight count comes back down).
	reported bool
}

// finish reports the attempt's outcome to the route's health actor.
func (s *Server) finish(a *attempt, res routehealth.Result, status int) {
	a.reported = true
	s.Board.Report(a.route.ID, routehealth.Outcome{Result: res, Latency: time.Since(a.started), FirstByte: a.firstByte,
		Status: status, Started: a.since})
	s.Metrics.Attempt(a.route.ID, outcomeName(res))
}

// answering tells route health, once a stream's answer has begun, that the attempt is
// answering: a half-open route's probe passes then, not at the end of a long answer.
func (s *Server) answering(a *attempt) func() {
	return func() {
		a.firstByte = time.Since(a.started)
		s.Board.Answering(a.route.ID, a.since)
	}
}

func outcomeName(r routehealth.Result) string {
	switch r {
	case routehealth.Failed:
		return "failed"
	case routehealth.RateLimited:
		return "rate_limited"
	case routehealth.Refused:
		return "refused"
	}
	return "ok"
}

// upstreamCall builds the request for one route, or says the route cannot serve it.
type upstreamCall func(r *catalog.Route) (upstream.Request, bool)

// dial picks routes and fails over until one answers 2xx. It returns the open attempt, an
// upstream client error to hand to the client as it is, or the gateway's own error.
// tried counts attempts for the log.
func (s *Server) dial(ctx context.Context, c *call, m *catalog.Model, build upstreamCall, tried *[]string) (*attempt, *upstream.Error, *apiError) {
	var skipped []string
	deadline := c.start.Add(c.catalog.Server.MaxCallDuration)
	for {
		if time.Now().After(deadline) {
			return nil, nil, errCallTooLong(c.catalog.Server.MaxCallDuration)
		}
		route := s.Board.Pick(m, c.key.ZDR, append(skipped, *tried...))
		if route == nil {
			return nil, nil, s.exhausted(c, len(*tried), !c.failed, s.Board.Wait(m.Routes, c.key.ZDR, skipped))
		}
		req, ok := build(route)
		if !ok {
			s.Board.Release(route.ID)
			skipped = append(skipped, route.ID) // cannot carry this request: not the route's fault
			continue
		}
		req.Deadline = deadline
		*tried = append(*tried, route.ID)
		a := &attempt{route: route, started: time.Now(), since: s.Board.Now()}
		s.Board.Begin(route.ID)
		resp, err := s.Upstream.Do(ctx, req)
		if err == nil {
			a.resp, a.firstByte = resp, time.Since(a.started)
			c.live = a
			return a, nil, nil
		}
		var ue *upstream.Error
		if !errors.As(err, &ue) {
			ue = &upstream.Error{Kind: upstream.Unreachable, Err: err}
		}
		switch {
		case ue.Kind == upstream.ClientError:
			s.finish(a, routehealth.Succeeded, ue.Status)
			return nil, ue, nil
		case errors.Is(ue.Err, upstream.ErrCallTooLong):
			s.finish(a, routehealth.Succeeded, 0) // the call's limit, not the route's fault
			return nil, nil, errCallTooLong(c.catalog.Server.MaxCallDuration)
		case ue.Kind == upstream.Canceled || ctx.Err() != nil:
			s.finish(a, routehealth.Succeeded, 0) // the client left; the route is not to blame
			return nil, nil, &apiError{Status: 499, Type: "invalid_request_error", Code: "client_closed_request", Message: "the client closed the request"}
		case ue.Kind == upstream.RateLimited || ue.Kind == upstream.Refused:
			s.refused(c, a, ue) // the route now cools down: still "not now"
			continue
		case ue.Status != 529 && ue.Status != http.StatusServiceUnavailable:
			c.failed = true
		}
		s.finish(a, routehealth.Failed, ue.Status)
		s.Logger.Warn("upstream attempt failed; failing over", "request_id", c.id, "route", route.ID, "status", ue.Status, "err", ue.Err)
	}
}

// refused records a provider's refusal: the route cools down for at least the provider's
// hint (a billing refusal for the long cooldown), and the operator gets the provider's own
// words in the log, the route-health view and a metric; the client gets none of them. The
// outcome is settled rather than sent, so that when it leaves every route cooling the
// client's Retry-After is read from the new state.
func (s *Server) refused(c *call, a *attempt, ue *upstream.Error) {
	a.reported = true
	res, reason, msg := routehealth.RateLimited, routehealth.ReasonRateLimit, "the provider rate-limited the route; it cools down, failing over"
	if ue.Kind == upstream.Refused {
		res, reason, msg = routehealth.Refused, routehealth.ReasonBilling, "the provider refused the route for billing (quota or credit gone at the provider); it cools down for long, failing over"
	}
	st := s.Board.Settle(a.route.ID, routehealth.Outcome{Result: res, RetryAfter: ue.RetryAfter, Status: ue.Status,
		Latency: time.Since(a.started), Started: a.since, Message: ue.Message})
	s.Metrics.Attempt(a.route.ID, outcomeName(res))
	s.Metrics.Refusal(a.route.ID, reason)
	args := []any{"request_id", c.id, "route", a.route.ID, "format", a.route.Format, "status", ue.Status,
		"provider_message", ue.Message, "retry_hint", ue.RetryAfter}
	if st != nil {
		args = append(args, "cooldown_until", st.CooldownUntil)
	}
	s.Logger.Warn(msg, args...)
}

// exhausted is the answer when no route is left to try: overloaded when every route is
// cooling down, rate-limited or overloaded, with Retry-After = wait (the real end of the
// earliest cooldown, in whole seconds, at least 1); 502 when real attempts failed.
func (s *Server) exhausted(c *call, attempts int, onlyBusy bool, wait time.Duration) *apiError {
	if attempts == 0 || onlyBusy {
		secs := max(ceilSeconds(wait), 1)
		return &apiError{Status: overloadedStatus(c.endpoint), Type: "overloaded_error", Code: "overloaded", RetryAfter: secs,
			Message: "the model provider is temporarily unavailable: every route for this model is cooling down or rate-limited; retry in " + strconv.Itoa(secs) + " s"}
	}
	return &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_error",
		Message: "the upstream provider failed on every route tried; no charge was made"}
}

// overloadedStatus is the status of "every route is cooling down" for a client format: the
// spec's 529, or 503 for formats whose APIs have no 529 and whose SDKs retry a 503 (the
// Responses API; the Gemini API, whose overload is 503 UNAVAILABLE).
func overloadedStatus(endpoint string) int {
	switch endpoint {
	case codec.FormatResponses, codec.FormatGemini:
		return http.StatusServiceUnavailable
	}
	return 529
}

// errCallTooLong answers a call that reached server.max_call_duration before an upstream
// answered it.
func errCallTooLong(limit time.Duration) *apiError {
	return &apiError{Status: http.StatusGatewayTimeout, Type: "server_error", Code: "call_too_long",
		Message: "the call ran past the gateway's longest allowed call (" + limit.String() + ") before an upstream answered; nothing was charged"}
}

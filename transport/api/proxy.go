package api

import (
	"context"
	"errors"
	"math"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/upstream"
)

// attempt is one try of one route.
type attempt struct {
	route   *catalog.Route
	resp    *upstream.Response
	started time.Time
}

// finish reports the attempt's outcome to the route's health actor.
func (s *Server) finish(a *attempt, res routehealth.Result, status int) {
	s.Board.Report(a.route.ID, routehealth.Outcome{Result: res, Latency: time.Since(a.started), Status: status})
	s.Metrics.Attempt(a.route.ID, outcomeName(res))
}

func outcomeName(r routehealth.Result) string {
	switch r {
	case routehealth.Failed:
		return "failed"
	case routehealth.RateLimited:
		return "rate_limited"
	}
	return "ok"
}

// upstreamCall builds the request for one route, or says the route cannot serve it.
type upstreamCall func(r *catalog.Route) (upstream.Request, bool)

// dial picks routes and fails over until one answers 2xx. It returns the open attempt, an
// upstream client error to hand to the client as it is, or the gateway's own error.
// tried counts attempts for the log.
func (s *Server) dial(ctx context.Context, c *call, m *catalog.Model, build upstreamCall, tried *[]string) (*attempt, *upstream.Error, *apiError) {
	onlyBusy := true // every failure so far was the upstream saying "not now"
	var skipped []string
	for {
		route, wait := s.Board.Pick(m.Routes, c.key.ZDR, append(skipped, *tried...))
		if route == nil {
			return nil, nil, s.exhausted(len(*tried), onlyBusy, wait)
		}
		req, ok := build(route)
		if !ok {
			skipped = append(skipped, route.ID) // cannot carry this request: not the route's fault
			continue
		}
		*tried = append(*tried, route.ID)
		a := &attempt{route: route, started: time.Now()}
		s.Board.Begin(route.ID)
		resp, err := s.Upstream.Do(ctx, req)
		if err == nil {
			a.resp = resp
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
		case ue.Kind == upstream.Canceled || ctx.Err() != nil:
			s.finish(a, routehealth.Succeeded, 0) // the client left; the route is not to blame
			return nil, nil, &apiError{Status: 499, Type: "invalid_request_error", Code: "client_closed_request", Message: "the client closed the request"}
		case ue.Kind == upstream.RateLimited:
			s.Board.Report(route.ID, routehealth.Outcome{Result: routehealth.RateLimited, RetryAfter: ue.RetryAfter, Status: ue.Status, Latency: time.Since(a.started)})
			s.Metrics.Attempt(route.ID, "rate_limited")
		default:
			if ue.Status != 529 && ue.Status != http.StatusServiceUnavailable {
				onlyBusy = false
			}
			s.finish(a, routehealth.Failed, ue.Status)
		}
		s.Logger.Warn("upstream attempt failed; failing over", "request_id", c.id, "route", route.ID, "status", ue.Status, "err", ue.Err)
	}
}

// exhausted is the answer when no route is left to try: 529 when every route is cooling down
// or rate-limited, 502 when real attempts failed.
func (s *Server) exhausted(attempts int, onlyBusy bool, wait time.Duration) *apiError {
	if attempts == 0 || onlyBusy {
		secs := int(math.Ceil(wait.Seconds()))
		secs = min(max(secs, 1), 30) // short: a client should come back soon, not sleep out a long cooldown
		return &apiError{Status: 529, Type: "overloaded_error", Code: "overloaded", RetryAfter: secs,
			Message: "the model provider is temporarily unavailable: every route for this model is cooling down or rate-limited; retry shortly"}
	}
	return &apiError{Status: http.StatusBadGateway, Type: "upstream_error", Code: "upstream_error",
		Message: "the upstream provider failed on every route tried; no charge was made"}
}

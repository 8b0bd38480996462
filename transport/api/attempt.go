package api

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"log/slog"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/metrics"
	"github.com/modelgate/modelgate/transport/upstream"
)

// router is the upstream side of a call: it picks routes from the route board, opens
// attempts, fails over, and tells each route's health how its attempt went.
type router struct {
	board    *routehealth.Board
	upstream *upstream.Client
	metrics  *metrics.Metrics
	logger   *slog.Logger
}

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
func (ro *router) finish(a *attempt, res routehealth.Result, status int) {
	a.reported = true
	ro.board.Report(a.route.ID, routehealth.Outcome{Result: res, Latency: time.Since(a.started), FirstByte: a.firstByte,
		Status: status, Started: a.since})
	ro.metrics.Attempt(a.route.ID, outcomeName(res))
}

// answering tells route health, once a stream's answer has begun, that the attempt is
// answering: a half-open route's probe passes then, not at the end of a long answer.
func (ro *router) answering(a *attempt) func() {
	return func() {
		a.firstByte = time.Since(a.started)
		ro.board.Answering(a.route.ID, a.since)
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
func (ro *router) dial(x *exchange, m *catalog.Model, build upstreamCall) (*attempt, *upstream.Error, *apiError) {
	ctx, tried := x.clientCtx, &x.tried
	var skipped []string
	deadline := x.start.Add(x.catalog.Server.MaxCallDuration)
	for {
		if time.Now().After(deadline) {
			return nil, nil, errCallTooLong(x.catalog.Server.MaxCallDuration)
		}
		route := ro.board.Pick(m, x.key.ZDR, append(skipped, *tried...))
		if route == nil {
			return nil, nil, exhausted(x, len(*tried), !x.failed, ro.board.Wait(m.Routes, x.key.ZDR, skipped))
		}
		req, ok := build(route)
		if !ok {
			ro.board.Release(route.ID)
			skipped = append(skipped, route.ID) // cannot carry this request: not the route's fault
			continue
		}
		req.Deadline = deadline
		*tried = append(*tried, route.ID)
		a := &attempt{route: route, started: time.Now(), since: ro.board.Now()}
		ro.board.Begin(route.ID)
		resp, err := ro.upstream.Do(ctx, req)
		if err == nil {
			a.resp, a.firstByte = resp, time.Since(a.started)
			x.live = a
			return a, nil, nil
		}
		var ue *upstream.Error
		if !errors.As(err, &ue) {
			ue = &upstream.Error{Kind: upstream.Unreachable, Err: err}
		}
		switch {
		case ue.Kind == upstream.ClientError:
			ro.finish(a, routehealth.Succeeded, ue.Status)
			return nil, ue, nil
		case errors.Is(ue.Err, upstream.ErrCallTooLong):
			ro.finish(a, routehealth.Succeeded, 0) // the call's limit, not the route's fault
			return nil, nil, errCallTooLong(x.catalog.Server.MaxCallDuration)
		case ue.Kind == upstream.Canceled || ctx.Err() != nil:
			ro.finish(a, routehealth.Succeeded, 0) // the client left; the route is not to blame
			return nil, nil, &apiError{Status: 499, Type: "invalid_request_error", Code: "client_closed_request", Message: "the client closed the request"}
		case ue.Kind == upstream.RateLimited || ue.Kind == upstream.Refused:
			ro.refused(x, a, ue) // the route now cools down: still "not now"
			continue
		case ue.Status != 529 && ue.Status != http.StatusServiceUnavailable:
			x.failed = true
		}
		ro.finish(a, routehealth.Failed, ue.Status)
		ro.logger.Warn("upstream attempt failed; failing over", "request_id", x.id, "route", route.ID, "status", ue.Status, "err", ue.Err)
	}
}

// refused records a provider's refusal: the route cools down for at least the provider's
// hint (a billing refusal for the long cooldown), and the operator gets the provider's own
// words in the log, the route-health view and a metric; the client gets none of them. The
// outcome is settled rather than sent, so that when it leaves every route cooling the
// client's Retry-After is read from the new state.
func (ro *router) refused(x *exchange, a *attempt, ue *upstream.Error) {
	a.reported = true
	res, reason, msg := routehealth.RateLimited, routehealth.ReasonRateLimit, "the provider rate-limited the route; it cools down, failing over"
	if ue.Kind == upstream.Refused {
		res, reason, msg = routehealth.Refused, routehealth.ReasonBilling, "the provider refused the route for billing (quota or credit gone at the provider); it cools down for long, failing over"
	}
	st := ro.board.Settle(a.route.ID, routehealth.Outcome{Result: res, RetryAfter: ue.RetryAfter, Status: ue.Status,
		Latency: time.Since(a.started), Started: a.since, Message: ue.Message})
	ro.metrics.Attempt(a.route.ID, outcomeName(res))
	ro.metrics.Refusal(a.route.ID, reason)
	args := []any{"request_id", x.id, "route", a.route.ID, "format", a.route.Format, "status", ue.Status,
		"provider_message", ue.Message, "retry_hint", ue.RetryAfter}
	if st != nil {
		args = append(args, "cooldown_until", st.CooldownUntil)
	}
	ro.logger.Warn(msg, args...)
}

// exhausted is the answer when no route is left to try: overloaded when every route is
// cooling down, rate-limited or overloaded, with Retry-After = wait (the real end of the
// earliest cooldown, in whole seconds, at least 1); 502 when real attempts failed.
func exhausted(x *exchange, attempts int, onlyBusy bool, wait time.Duration) *apiError {
	if attempts == 0 || onlyBusy {
		secs := max(ceilSeconds(wait), 1)
		return &apiError{Status: overloadedStatus(x.endpoint), Type: "overloaded_error", Code: "overloaded", RetryAfter: secs,
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

// failOverEarly decides an error an upstream reported in its stream before the answer had
// any content, while the client has seen nothing (streamOut holds the opening frames). When
// it says "not now" (overloaded, rate-limited, a server error, a billing refusal) and another
// route may still take the request, the route is told (cooldown or failure, as for the same
// answer before the stream) and the request fails over invisibly: true. Otherwise — the
// request's own fault, or no route left — the client gets the error in its stream with the
// provider's words, as for an error later in the answer (streamDone tells the route).
func (ro *router) failOverEarly(x *exchange, a *attempt, e *ir.Error) bool {
	if e.Kind == ir.ErrInvalidRequest || e.Kind == ir.ErrTooLarge || !ro.anotherRoute(x, a) {
		return false
	}
	ro.tellRoute(x, a, e)
	if e.Kind != ir.ErrRateLimit && e.Kind != ir.ErrBilling && e.Kind != ir.ErrOverloaded {
		x.failed = true
	}
	ro.logger.Warn("upstream stream failed before its answer began; failing over", "request_id", x.id,
		"route", a.route.ID, "kind", string(e.Kind), "code", e.Code)
	return true
}

// anotherRoute reports whether a route of the model not tried yet may take a request now
// (a route resting for its error rate included: it is the last resort), or a model after it
// in the request's list is left to try.
func (ro *router) anotherRoute(x *exchange, a *attempt) bool {
	t := x.turn
	return ro.board.CanServe(t.model.Routes, x.key.ZDR, append(slices.Clip(x.tried), a.route.ID)) || t.more()
}

// tellRoute reports how an upstream's in-stream error judges its route: a rate limit cools it
// like a 429, a billing refusal rests it for long (the operator's problem), the request's own
// fault is no mark against it, anything else is a failure.
func (ro *router) tellRoute(x *exchange, a *attempt, e *ir.Error) {
	switch e.Kind {
	case ir.ErrInvalidRequest, ir.ErrTooLarge:
		ro.finish(a, routehealth.Succeeded, http.StatusOK)
	case ir.ErrRateLimit:
		ro.refused(x, a, &upstream.Error{Kind: upstream.RateLimited, Status: http.StatusTooManyRequests, Message: e.Message})
	case ir.ErrBilling:
		ro.refused(x, a, &upstream.Error{Kind: upstream.Refused, Status: e.Status, Message: e.Message})
	default:
		ro.finish(a, routehealth.Failed, http.StatusOK)
	}
}

// clientLeft settles an attempt whose client closed the request mid-answer: 499 in the log and
// the metrics, no mark against the route (it was answering), and the usage known so far
// counted and charged like any answer the client received (docs/decisions.md, "Money and the
// request log"). Nothing more is written: nobody is listening.
func (ro *router) clientLeft(x *exchange, a *attempt) bool {
	ro.finish(a, routehealth.Succeeded, a.resp.Status)
	x.status = 499 // nginx's "client closed request", as before the first byte
	return true
}

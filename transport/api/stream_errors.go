package api

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/transport/upstream"
)

// failOverEarly decides an error an upstream reported in its stream before the answer had
// any content, while the client has seen nothing (streamOut holds the opening frames). When
// it says "not now" (overloaded, rate-limited, a server error, a billing refusal) and another
// route may still take the request, the route is told (cooldown or failure, as for the same
// answer before the stream) and the request fails over invisibly: true. Otherwise — the
// request's own fault, or no route left — the client gets the error in its stream with the
// provider's words, as for an error later in the answer (streamDone tells the route).
func (s *Server) failOverEarly(rec *record, g *generation, a *attempt, e *ir.Error) bool {
	if e.Kind == ir.ErrInvalidRequest || e.Kind == ir.ErrTooLarge || !s.anotherRoute(rec, g, a) {
		return false
	}
	s.tellRoute(rec, a, e)
	if e.Kind != ir.ErrRateLimit && e.Kind != ir.ErrBilling && e.Kind != ir.ErrOverloaded {
		rec.c.failed = true
	}
	s.Logger.Warn("upstream stream failed before its answer began; failing over", "request_id", rec.c.id,
		"route", a.route.ID, "kind", string(e.Kind), "code", e.Code)
	return true
}

// anotherRoute reports whether a route of the model not tried yet may take a request now
// (a route resting for its error rate included: it is the last resort), or a model after it
// in the request's list is left to try.
func (s *Server) anotherRoute(rec *record, g *generation, a *attempt) bool {
	return s.Board.CanServe(g.model.Routes, rec.c.key.ZDR, append(slices.Clip(rec.tried), a.route.ID)) || g.more()
}

// tellRoute reports how an upstream's in-stream error judges its route: a rate limit cools it
// like a 429, a billing refusal rests it for long (the operator's problem), the request's own
// fault is no mark against it, anything else is a failure.
func (s *Server) tellRoute(rec *record, a *attempt, e *ir.Error) {
	switch e.Kind {
	case ir.ErrInvalidRequest, ir.ErrTooLarge:
		s.finish(a, routehealth.Succeeded, http.StatusOK)
	case ir.ErrRateLimit:
		s.refused(rec.c, a, &upstream.Error{Kind: upstream.RateLimited, Status: http.StatusTooManyRequests, Message: e.Message})
	case ir.ErrBilling:
		s.refused(rec.c, a, &upstream.Error{Kind: upstream.Refused, Status: e.Status, Message: e.Message})
	default:
		s.finish(a, routehealth.Failed, http.StatusOK)
	}
}

// billingNotice is what a client reads in place of a provider's billing refusal inside an
// answer that has begun: the refusal is the operator's problem (quota or credit gone at the
// provider), and its words would read as the client's own quota.
func billingNotice(requestID string) string {
	return "the upstream provider stopped this answer for a reason on the gateway operator's side; the answer is incomplete and costs nothing (request " + requestID + ")"
}

// hideBilling is e with a billing refusal's message replaced by billingNotice; other errors
// keep the provider's words.
func hideBilling(e ir.Event, requestID string) ir.Event {
	if e.Kind != ir.EvError || e.Err == nil || e.Err.Kind != ir.ErrBilling {
		return e
	}
	err := *e.Err
	err.Message = billingNotice(requestID)
	e.Err = &err
	return e
}

// errorMessagePaths are where the formats put an in-band error's message: chat, messages and
// gemini `error.message`, responses' error event `message` (flat) or `error.message` (nested)
// and response.failed's `response.error.message`.
var errorMessagePaths = [][]string{{"error", "message"}, {"message"}, {"response", "error", "message"}}

// hideBillingFrame replaces a relayed error frame's message with billingNotice, keeping every
// other byte (the error's type and code stay the provider's).
func hideBillingFrame(data []byte, requestID string) []byte {
	msg, _ := json.Marshal(billingNotice(requestID))
	out, _ := jsonscan.Replace(data, msg, errorMessagePaths...)
	return out
}

// finishes reports whether events hold the answer's finish.
func finishes(events []ir.Event) bool {
	for _, e := range events {
		if e.Kind == ir.EvFinish {
			return true
		}
	}
	return false
}

// finishingDecoder reports a decoder of a format without an end marker whose answer may end
// with any frame now (ir.FinishingDecoder).
func finishingDecoder(dec ir.StreamDecoder) bool {
	f, ok := dec.(ir.FinishingDecoder)
	return ok && f.Finishing()
}

// firstErr is the error among events, if any.
func firstErr(events []ir.Event) *ir.Error {
	for _, e := range events {
		if e.Kind == ir.EvError {
			return e.Err
		}
	}
	return nil
}

package api

import (
	"bytes"
	"io"
	"net/http"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonpatch"
	"github.com/modelgate/modelgate/codec/reasoning"
	"github.com/modelgate/modelgate/transport/upstream"
)

// A whole (non-streamed) answer: read in full, then relayed as it is with the client's model
// name (same format) or decoded and encoded in the client's format. Each relay returns false,
// having written nothing, when the upstream broke before its answer was complete: the next
// route is tried. The answer is written by deliver (settle.go), once the call is recorded.

// maxUpstreamBody bounds a whole (non-streamed) upstream answer held in memory.
const maxUpstreamBody = 64 << 20

// relayWhole relays a whole answer (chat, with t; embeddings, without) in the chat convention
// (chat.RelayAnswer, which reads the usage in the same scan).
func (s *Server) relayWhole(x *exchange, a *attempt, clientModel string, t *turn) bool {
	body, ok := s.readWhole(x, a)
	if !ok {
		return x.clientGone()
	}
	s.finish(a, routehealth.Succeeded, a.resp.Status)
	if t != nil {
		var u codec.Usage
		var ok bool
		if body, u, ok = chat.RelayAnswer(body, clientModel, &t.loss); ok {
			x.usage = u
		}
		t.announce(x.w)
	} else { // embeddings: a long answer, read in one scan
		m, _ := codec.Marshal(clientModel)
		var usage []byte
		body, usage = jsonpatch.Answer(body, "model", m, "usage")
		if u, ok := chat.UsageOf(usage); ok {
			x.usage = u
		}
	}
	s.deliver(x, http.StatusOK, "application/json", body)
	return true
}

// wholeConverted decodes a whole answer in the route's format and encodes it in the client's.
func (s *Server) wholeConverted(x *exchange, a *attempt) bool {
	t := x.turn
	body, ok := s.readWhole(x, a)
	if !ok {
		return x.clientGone()
	}
	resp, err := upstreamFormats[a.route.Format].DecodeResponse(body)
	if err != nil {
		s.finish(a, routehealth.Failed, a.resp.Status)
		x.failed = true
		s.Logger.Warn("upstream answer could not be decoded; failing over", "request_id", x.id, "route", a.route.ID, "err", err)
		return false
	}
	s.finish(a, routehealth.Succeeded, a.resp.Status)
	if t.decision.SplitInline {
		resp.Parts = reasoning.SplitParts(resp.Parts)
	}
	x.usage = resp.Usage
	t.answerLossParts(resp.Parts)
	t.announce(x.w)
	s.deliver(x, http.StatusOK, "application/json", encodeAnswer(t.spec.format, resp, t.req, t.clientModel))
	return true
}

// wholePass relays a same-format answer with the client's model name, reading its usage
// (passWhole: a scan, no decode).
func (s *Server) wholePass(x *exchange, a *attempt) bool {
	body, ok := s.readWhole(x, a)
	if !ok {
		return x.clientGone()
	}
	s.finish(a, routehealth.Succeeded, a.resp.Status)
	body, x.usage = passWhole(a.route.Format, body, x.turn.clientModel)
	s.deliver(x, http.StatusOK, "application/json", body)
	return true
}

// readWhole reads a whole upstream answer. When it cannot (ok false) nothing has been written:
// the request fails over, unless the read failed because the client left.
func (ro *router) readWhole(x *exchange, a *attempt) (body []byte, ok bool) {
	body, err := io.ReadAll(io.LimitReader(a.resp.Body, maxUpstreamBody))
	a.resp.Body.Close()
	switch {
	case err == nil:
		return body, true
	case x.clientGone():
		ro.clientLeft(x, a)
	default:
		ro.finish(a, routehealth.Failed, 0)
		x.failed = true
	}
	return nil, false
}

// passWhole readies a same-format whole answer: the client's model in place of the
// upstream's and the usage read, in one scan (ir.WholeRelayer), not a decode.
func passWhole(format string, body []byte, model string) ([]byte, codec.Usage) {
	if rw, ok := upstreamFormats[format].(ir.WholeRelayer); ok {
		return rw.RelayWhole(body, model)
	}
	return nameModel(format, body, model), codec.Usage{}
}

// nameModel names the client's model in a same-format answer or stream event, wherever the
// route's format puts it.
func nameModel(format string, data []byte, model string) []byte {
	if !mayNameModel(data) {
		return data
	}
	if rw, ok := upstreamFormats[format].(ir.ModelRewriter); ok {
		return rw.RewriteModel(data, model)
	}
	return data
}

// mayNameModel reports whether a stream frame can hold a member named model (or modelVersion):
// the word, or an escape that may spell it. A frame without either passes byte for byte
// without a scan (a content delta, most frames of a stream).
func mayNameModel(data []byte) bool {
	return bytes.Contains(data, []byte(`odel`)) || bytes.IndexByte(data, '\\') >= 0
}

// passUpstreamError hands an upstream's verdict on the request (a 4xx) to the client: as it
// is when the route speaks the client's format, else translated into the client's envelope.
func (s *Server) passUpstreamError(x *exchange, client *clientSpec, ue *upstream.Error) {
	route, ok := x.catalog.Route(x.tried[len(x.tried)-1])
	if !ok || route.Format == client.name {
		s.passError(x, ue)
		return
	}
	e := upstreamFormats[route.Format].DecodeError(ue.Status, ue.Body)
	s.deliver(x, ue.Status, "application/json", client.format.EncodeError(e))
}

// passError hands an upstream's verdict on the request (a 4xx) to the client unchanged: the
// route speaks the client's format, so its message is the most precise one available.
func (s *Server) passError(x *exchange, ue *upstream.Error) {
	ct := ue.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/json"
	}
	s.deliver(x, ue.Status, ct, ue.Body)
}

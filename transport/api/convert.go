package api

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/reasoning"
	"github.com/modelgate/modelgate/codec/sse"
	"github.com/modelgate/modelgate/transport/upstream"
)

// wholeConverted decodes a whole answer in the route's format and encodes it in the client's.
func (s *Server) wholeConverted(w http.ResponseWriter, rec *record, g *generation, a *attempt) bool {
	body, ok := s.readWhole(rec, a)
	if !ok {
		return rec.clientGone()
	}
	resp, err := upstreamFormats[a.route.Format].DecodeResponse(body)
	if err != nil {
		s.finish(a, routehealth.Failed, a.resp.Status)
		rec.c.failed = true
		s.Logger.Warn("upstream answer could not be decoded; failing over", "request_id", rec.c.id, "route", a.route.ID, "err", err)
		return false
	}
	s.finish(a, routehealth.Succeeded, a.resp.Status)
	if g.decision.SplitInline {
		resp.Parts = reasoning.SplitParts(resp.Parts)
	}
	rec.usage = resp.Usage
	g.answerLossParts(resp.Parts)
	g.announce(w)
	rec.deliver(w, http.StatusOK, "application/json", encodeAnswer(g.client.format, resp, g.req, g.clientModel))
	return true
}

// wholePass relays a same-format answer with the client's model name, reading its usage
// (passWhole: a scan, no decode).
func (s *Server) wholePass(w http.ResponseWriter, rec *record, g *generation, a *attempt) bool {
	body, ok := s.readWhole(rec, a)
	if !ok {
		return rec.clientGone()
	}
	s.finish(a, routehealth.Succeeded, a.resp.Status)
	body, rec.usage = passWhole(a.route.Format, body, g.clientModel)
	rec.deliver(w, http.StatusOK, "application/json", body)
	return true
}

// readWhole reads a whole upstream answer. When it cannot (ok false) nothing has been written:
// the request fails over, unless the read failed because the client left.
func (s *Server) readWhole(rec *record, a *attempt) (body []byte, ok bool) {
	body, err := io.ReadAll(io.LimitReader(a.resp.Body, maxUpstreamBody))
	a.resp.Body.Close()
	switch {
	case err == nil:
		return body, true
	case rec.clientGone():
		s.clientLeft(rec, a)
	default:
		s.finish(a, routehealth.Failed, 0)
		rec.c.failed = true
	}
	return nil, false
}

// streamConverted runs upstream events through the route format's decoder, the inline
// reasoning splitter when the model needs it, and the client format's encoder.
func (s *Server) streamConverted(w http.ResponseWriter, rec *record, g *generation, a *attempt) bool {
	defer a.resp.Body.Close()
	out := newStreamOut(w, rec, g, s.answering(a))
	var req *ir.Request
	if g.req != nil {
		req = g.req
	} else {
		req = &ir.Request{IncludeUsage: g.chatReq.IncludeUsage}
	}
	enc := g.client.format.NewStreamEncoder(out, req, g.clientModel)
	out.enc = enc
	dec := upstreamFormats[a.route.Format].NewStreamDecoder()
	var split *reasoning.Splitter
	if g.decision.SplitInline {
		split = &reasoning.Splitter{}
	}
	rd := sse.NewReader(out.upstreamBody(a.resp.Body))
	one := make([]ir.Event, 1) // filter's answer without a splitter, reused
	for {
		ev, err := rd.Next()
		var events []ir.Event
		done := false
		if err == nil {
			events, done, err = dec.Decode(ev.Name, ev.Data)
		}
		if err != nil {
			var finished bool
			if events, _, finished = endedEarly(dec); !finished {
				return s.streamEnded(rec, a, out, enc, err)
			}
			done = true
		}
		for _, e := range events {
			for _, e := range filter(split, e, one) {
				if e.Kind == ir.EvError && !out.started && s.failOverEarly(rec, g, a, e.Err) {
					return false
				}
				rec.observe(e)
				g.eventLoss(e) // too late for the header: counted in the metrics
				if (isContent(e) || e.Kind == ir.EvError) && out.commit() != nil {
					return s.clientLeft(rec, a)
				}
				if e.Kind == ir.EvFinish || e.Kind == ir.EvError {
					out.finishing()
				}
				if enc.Encode(hideBilling(e, rec.c.id)) != nil {
					return s.clientLeft(rec, a)
				}
			}
		}
		if done {
			if out.commit() != nil {
				return s.clientLeft(rec, a)
			}
			out.finishing()
			enc.Close()
			s.streamDone(rec, a, out)
			return true
		}
	}
}

// endedEarly asks the route format's decoder about a stream that stopped before its end
// marker: whether the answer had finished, and what completes it (ir.EndingDecoder).
func endedEarly(dec ir.StreamDecoder) ([]ir.Event, *ir.Frame, bool) {
	if e, ok := dec.(ir.EndingDecoder); ok {
		return e.End()
	}
	return nil, nil, false
}

// filter runs e through the splitter, if any; without one the answer is e in one, a slice of
// length 1 the caller reuses (an allocation per event otherwise).
func filter(split *reasoning.Splitter, e ir.Event, one []ir.Event) []ir.Event {
	if split == nil {
		one[0] = e
		return one
	}
	return split.Filter(e)
}

// streamPass relays a same-format stream frame by frame with the client's model name; the
// route format's decoder reads usage, the end and errors on the side, from every frame but
// the content deltas after the first byte (contentDelta).
func (s *Server) streamPass(w http.ResponseWriter, rec *record, g *generation, a *attempt) bool {
	defer a.resp.Body.Close()
	out := newStreamOut(w, rec, g, s.answering(a))
	dec := upstreamFormats[a.route.Format].NewStreamDecoder()
	rd := sse.NewReader(out.upstreamBody(a.resp.Body))
	for {
		ev, err := rd.Next()
		var events []ir.Event
		done := false
		if err == nil && !(out.started && contentDelta(a.route.Format, ev.Name, ev.Data)) {
			events, done, err = dec.Decode(ev.Name, ev.Data)
		}
		frame := &ir.Frame{Name: string(ev.Name), Data: ev.Data}
		if err != nil {
			var finished bool
			if events, frame, finished = endedEarly(dec); !finished {
				var enc ir.StreamEncoder // made only to end a broken stream in the client's format
				if out.started {
					enc = g.client.format.NewStreamEncoder(out, g.req, g.clientModel)
				}
				return s.streamEnded(rec, a, out, enc, err)
			}
			done = true // the upstream left out its end marker: it is sent in its place
		}
		failed := firstErr(events)
		if failed != nil && !out.started && s.failOverEarly(rec, g, a, failed) {
			return false
		}
		content := failed != nil
		for _, e := range events {
			rec.observe(e)
			content = content || isContent(e)
		}
		if content || done {
			if out.commit() != nil {
				return s.clientLeft(rec, a)
			}
		}
		if done || failed != nil || finishes(events) || finishingDecoder(dec) {
			out.finishing()
		}
		if frame != nil {
			data := nameModel(a.route.Format, frame.Data, g.clientModel)
			if failed != nil && failed.Kind == ir.ErrBilling {
				data = hideBillingFrame(data, rec.c.id)
			}
			if out.Write(frame.Name, data) != nil {
				return s.clientLeft(rec, a)
			}
		}
		if done {
			s.streamDone(rec, a, out)
			return true
		}
	}
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

// streamDone settles a stream that reached its end marker.
func (s *Server) streamDone(rec *record, a *attempt, out *streamOut) {
	e := rec.streamErr
	switch {
	case e == nil:
		s.finish(a, routehealth.Succeeded, http.StatusOK)
		return
	case e.Kind == ir.ErrInvalidRequest || e.Kind == ir.ErrTooLarge:
		// The upstream refused the request itself once it had begun to answer (a context
		// length found out while streaming): the client's fault, as the same refusal before
		// the first byte is, and no mark against the route.
		s.tellRoute(rec, a, e)
		rec.status = http.StatusBadRequest
		if e.Status >= 400 && e.Status < 500 {
			rec.status = e.Status
		}
		return
	}
	// The upstream reported an error in the stream: the route failed this request, was rate
	// limited or refused it for billing, and the call is refunded.
	s.tellRoute(rec, a, e)
	rec.status = rec.streamErr.Status
	if rec.status < 500 {
		rec.status = http.StatusBadGateway
	}
}

// streamEnded handles a stream that stopped without its end marker: before the first byte it
// is failed over (false); after, the client gets its format's error event. A stream that
// stopped because the client left is neither: the gateway cancelled the upstream read.
func (s *Server) streamEnded(rec *record, a *attempt, out *streamOut, enc ir.StreamEncoder, cause error) bool {
	if rec.clientGone() {
		return s.clientLeft(rec, a)
	}
	if !out.started {
		s.finish(a, routehealth.Failed, 0)
		rec.c.failed = true
		return false
	}
	s.finish(a, routehealth.Failed, http.StatusOK)
	rec.status = http.StatusBadGateway
	out.finishing()
	msg := "the upstream stream broke before it finished; the answer is incomplete"
	switch {
	case cause == upstream.ErrIdle:
		msg = "the upstream stream went silent past the idle time-out; the answer is incomplete"
	case errors.Is(cause, upstream.ErrCallTooLong):
		msg = "the call ran past the gateway's longest allowed call (" + rec.c.catalog.Server.MaxCallDuration.String() + "); the answer is incomplete"
	case errors.Is(cause, sse.ErrTooLong):
		msg = "the upstream stream sent a line over " + strconv.Itoa(sse.MaxLine>>20) + " MiB, more than the gateway reads; the answer is incomplete"
	}
	if enc != nil {
		enc.Encode(ir.Event{Kind: ir.EvError, Err: &ir.Error{Status: http.StatusBadGateway, Kind: ir.ErrServer, Code: "stream_interrupted", Message: msg + " (request " + rec.c.id + ")"}})
	}
	return true
}

// clientLeft settles an attempt whose client closed the request mid-answer: 499 in the log and
// the metrics, no mark against the route (it was answering), and the usage known so far
// counted and charged like any answer the client received (docs/decisions.md, "Money and the
// request log"). Nothing more is written: nobody is listening.
func (s *Server) clientLeft(rec *record, a *attempt) bool {
	s.finish(a, routehealth.Succeeded, a.resp.Status)
	rec.status = 499 // nginx's "client closed request", as before the first byte
	return true
}

// passUpstreamError hands an upstream's verdict on the request (a 4xx) to the client: as it
// is when the route speaks the client's format, else translated into the client's envelope.
func (s *Server) passUpstreamError(w http.ResponseWriter, rec *record, client *clientSpec, ue *upstream.Error) {
	route, ok := rec.c.catalog.Route(rec.tried[len(rec.tried)-1])
	if !ok || route.Format == client.name {
		rec.passError(w, ue)
		return
	}
	e := upstreamFormats[route.Format].DecodeError(ue.Status, ue.Body)
	rec.deliver(w, ue.Status, "application/json", client.format.EncodeError(e))
}

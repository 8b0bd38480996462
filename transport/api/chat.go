package api

import (
	"cmp"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonpatch"
	"github.com/modelgate/modelgate/codec/reasoning"
	"github.com/modelgate/modelgate/codec/sse"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/upstream"
)

// maxUpstreamBody bounds a whole (non-streamed) upstream answer held in memory.
const maxUpstreamBody = 64 << 20

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	s.generate(w, r, chatClient)
}

// generate serves one chat, messages or responses request: policy, route choice with
// failover, and the answer relayed as it is (same format) or converted through the IR.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, spec *clientSpec) {
	c := s.begin(w, spec.name)
	if spec.name != codec.FormatChat {
		c.client = spec.format
	}
	rec, body, ok := s.open(w, r, c, spec.name)
	defer s.done(rec)
	if !ok {
		return
	}
	g := &generation{client: spec, body: body, header: clientHeaders(r)}
	rec.gen = g
	if spec.target != nil {
		rec.named = spec.target.model // the Gemini API names it in the path
	} else {
		var e *apiError
		if g.listed, g.body, e = modelsField(body, c.catalog.Server.MaxRequestModels); e != nil {
			rec.fail(w, e)
			return
		}
		if rec.named == "" && len(g.listed) > 0 {
			rec.named = g.listed[0]
		}
	}
	if e := g.decode(); e != nil {
		rec.fail(w, e)
		return
	}
	rec.entry.Stream = g.stream
	if e := s.prepare(c, g); e != nil {
		if g.named != nil {
			rec.resolved(g.named) // a client error counts what the model it names counts
		}
		rec.fail(w, e)
		return
	}
	s.resolvedModel(rec, g)
	setDeprecation(w, g.named)
	var e *apiError
	if rec.adm, e = s.admitUnits(r, w, c, g.choice.units(), g.estimate()); e != nil {
		rec.fail(w, e)
		return
	}
	build := func(rt *catalog.Route) (upstream.Request, bool) { return g.build(c, rt) }
	var firstBuildErr *apiError
	for {
		a, ue, e := s.dial(r.Context(), c, g.model, build, &rec.tried)
		if e != nil && e.Status != 499 && g.next() {
			// Every route of that model failed before answering or is cooling down (or none
			// could carry the request): the next model of the list, in the client's format.
			firstBuildErr = cmp.Or(firstBuildErr, g.buildErr)
			g.buildErr = nil
			s.resolvedModel(rec, g)
			continue
		}
		switch {
		case e != nil && cmp.Or(firstBuildErr, g.buildErr) != nil && len(rec.tried) == 0:
			rec.fail(w, cmp.Or(firstBuildErr, g.buildErr)) // no route could take the request as it is
			return
		case e != nil:
			rec.fail(w, e)
			return
		case ue != nil:
			s.passUpstreamError(w, rec, g.client, ue)
			return
		}
		rec.route, rec.entry.UpstreamFormat = a.route.ID, a.route.Format
		if s.relay(w, rec, g, a) {
			return
		}
		// The attempt broke before the client saw a byte: try the next route.
	}
}

// prepare applies the catalog and the key's policy: the model the request names, the models
// that may serve it (choice.go), and the first of them set up for the request.
func (s *Server) prepare(c *call, g *generation) *apiError {
	m, e := s.resolveModel(c, g.clientModel, catalog.KindChat)
	if e != nil {
		return e
	}
	g.named, g.model = m, m
	if g.req != nil && g.req.PreviousResponseID != "" {
		return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "previous_response_not_found", Param: "previous_response_id",
			Message: "previous_response_id " + g.req.PreviousResponseID + " was not found: this gateway stores no responses; send the whole conversation in input"}
	}
	return s.choose(c, g, m)
}

// resolveThinking is the client's reasoning request resolved for model m.
func (g *generation) resolveThinking(m *catalog.Model) reasoning.Decision {
	return reasoning.Resolve(m.Reasoning.Model(), g.thinking())
}

// resolvedModel records the model about to serve: the log names it, its prices are the
// client's, and the answer names it where the client named another.
func (s *Server) resolvedModel(rec *record, g *generation) {
	rec.resolved(g.model)
	rec.units = g.choice.servedUnits(g.model)
	g.served()
}

// relay answers from an open attempt; false means it broke before anything was sent.
func (s *Server) relay(w http.ResponseWriter, rec *record, g *generation, a *attempt) bool {
	same := a.route.Format == g.client.name
	switch {
	case same && g.chatReq != nil && !g.decision.SplitInline:
		if g.stream {
			g.announce(w)
			return s.streamChat(w, rec, g, a)
		}
		return s.relayWhole(w, rec, a, g.clientModel, g)
	case same && !g.decision.SplitInline:
		g.announce(w)
		if g.stream {
			return s.streamPass(w, rec, g, a)
		}
		return s.wholePass(w, rec, g, a)
	case g.stream:
		return s.streamConverted(w, rec, g, a)
	}
	return s.wholeConverted(w, rec, g, a)
}

// relayWhole relays a whole answer (chat, with g; embeddings, without) in the chat convention
// (chat.RelayAnswer, which reads the usage in the same scan). It returns false, having written
// nothing, when the upstream broke before its answer was complete.
func (s *Server) relayWhole(w http.ResponseWriter, rec *record, a *attempt, clientModel string, g *generation) bool {
	body, ok := s.readWhole(rec, a)
	if !ok {
		return rec.clientGone()
	}
	s.finish(a, routehealth.Succeeded, a.resp.Status)
	if g != nil {
		var u codec.Usage
		var ok bool
		if body, u, ok = chat.RelayAnswer(body, clientModel, &g.loss); ok {
			rec.usage = u
		}
		g.announce(w)
	} else { // embeddings: a long answer, read in one scan
		m, _ := codec.Marshal(clientModel)
		var usage []byte
		body, usage = jsonpatch.Answer(body, "model", m, "usage")
		if u, ok := chat.UsageOf(usage); ok {
			rec.usage = u
		}
	}
	rec.deliver(w, http.StatusOK, "application/json", body)
	return true
}

// streamChat relays chunks as they arrive (chat.Relay: the client's model name, tool-call
// indexes counted per call, the chat convention, the billing usage chunk dropped). Headers
// wait for the first chunk, so a route that fails before it answers is failed over
// invisibly. A stream that stops after its finish_reason is whole: the client gets the
// data: [DONE] the upstream left out. One that breaks before ends with an error event, never
// a silent truncation.
func (s *Server) streamChat(w http.ResponseWriter, rec *record, g *generation, a *attempt) bool {
	defer a.resp.Body.Close()
	out := newStreamOut(w, rec, g, s.answering(a))
	relay := chat.NewRelay(g.clientModel, g.chatReq.IncludeUsage, &g.loss)
	rd := sse.NewReader(out.upstreamBody(a.resp.Body))
	for {
		ev, err := rd.Next()
		var data []byte
		done := false
		if err == nil {
			data, done, err = relay.Chunk(ev.Data)
		}
		if u, ok := relay.Usage(); ok {
			rec.usage = u
		}
		if err != nil {
			if !relay.Finished() {
				return s.streamEnded(rec, a, out, chat.NewStreamEncoder(out, nil, g.clientModel), err)
			}
			data, done = []byte("[DONE]"), true
		}
		if e := relay.Err(); e != nil && !out.started && s.failOverEarly(rec, g, a, e) {
			return false
		}
		if relay.Content() || done {
			if out.commit() != nil {
				return s.clientLeft(rec, a)
			}
		}
		if done || relay.Finished() || relay.Err() != nil {
			out.finishing()
		}
		if data != nil {
			if e := relay.Err(); e != nil && e.Kind == ir.ErrBilling {
				data = hideBillingFrame(data, rec.c.id)
			}
			if err := out.Write("", data); err != nil {
				return s.clientLeft(rec, a)
			}
		}
		if done {
			rec.streamErr = relay.Err()
			s.streamDone(rec, a, out)
			return true
		}
	}
}

func pricesOf(m *catalog.Model) codec.Prices { return pricesFrom(m.Pricing) }

func pricesFrom(p catalog.Pricing) codec.Prices {
	return codec.Prices{Input: p.Prompt, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite, Output: p.Completion}
}

// forwardHeaders are the headers every upstream attempt carries: the request id, so the
// provider's logs and ours can be matched.
func forwardHeaders(c *call) http.Header {
	return http.Header{"X-Request-Id": {c.id}}
}

// setDeprecation announces a model's retirement (RFC 9745 Deprecation, RFC 8594 Sunset).
func setDeprecation(w http.ResponseWriter, m *catalog.Model) {
	if m.DeprecatedAt == 0 {
		return
	}
	w.Header().Set("Deprecation", "@"+itoa(m.DeprecatedAt))
	w.Header().Set("Sunset", time.Unix(m.DeprecatedAt, 0).UTC().Format(http.TimeFormat))
	if m.Replacement != "" {
		w.Header().Set("Link", `</v1/models/`+m.Replacement+`>; rel="successor-version"`)
	}
}

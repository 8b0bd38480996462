package api

import (
	"cmp"
	"net/http"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/upstream"
)

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	s.generate(w, r, chatClient)
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	s.generate(w, r, messagesClient)
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	s.generate(w, r, responsesClient)
}

// generate serves one chat, messages, responses or gemini request, phase by phase: the key
// and the body (open), the request in the client's format (decode), the models that may
// serve it (choose), the account's admission (admit), then attempts on routes with failover
// (attempt) until one answers, relayed whole or as a stream. Every way out is settled in the
// account's ledger before the answer's last byte: deliver for a whole answer, the stream
// pump at a stream's end marker, done (deferred) for the rest.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, spec *clientSpec) {
	var envelope ir.ClientFormat
	if spec.name != codec.FormatChat {
		envelope = spec.format
	}
	x, body, ok := s.open(w, r, spec.name, spec.name, envelope)
	defer s.done(x)
	if !ok {
		return
	}
	t, e := decodeTurn(x, r, spec, body)
	if e != nil {
		s.fail(x, e)
		return
	}
	x.entry.Stream = t.stream
	if e := s.prepare(x, t); e != nil {
		if t.named != nil {
			x.resolved(t.named) // a client error counts what the model it names counts
		}
		s.fail(x, e)
		return
	}
	serving(x, t)
	setDeprecation(w, t.named)
	if x.adm, e = s.admitUnits(r, x, t.choice.units(), t.estimate()); e != nil {
		s.fail(x, e)
		return
	}
	build := func(rt *catalog.Route) (upstream.Request, bool) { return t.build(x, rt) }
	var firstBuildErr *apiError
	for {
		a, ue, e := s.dial(x, t.model, build)
		if e != nil && e.Status != 499 && t.next() {
			// Every route of that model failed before answering or is cooling down (or none
			// could carry the request): the next model of the list, in the client's format.
			firstBuildErr = cmp.Or(firstBuildErr, t.buildErr)
			t.buildErr = nil
			serving(x, t)
			continue
		}
		switch {
		case e != nil && cmp.Or(firstBuildErr, t.buildErr) != nil && len(x.tried) == 0:
			s.fail(x, cmp.Or(firstBuildErr, t.buildErr)) // no route could take the request as it is
			return
		case e != nil:
			s.fail(x, e)
			return
		case ue != nil:
			s.passUpstreamError(x, t.spec, ue)
			return
		}
		x.route, x.entry.UpstreamFormat = a.route.ID, a.route.Format
		if s.relay(x, a) {
			return
		}
		// The attempt broke before the client saw a byte: try the next route.
	}
}

// prepare applies the catalog and the key's policy: the model the request names, the models
// that may serve it (choose.go), and the first of them set up for the request.
func (s *Server) prepare(x *exchange, t *turn) *apiError {
	m, e := resolveModel(x, t.clientModel, catalog.KindChat)
	if e != nil {
		return e
	}
	t.named, t.model = m, m
	if t.req != nil && t.req.PreviousResponseID != "" {
		return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "previous_response_not_found", Param: "previous_response_id",
			Message: "previous_response_id " + t.req.PreviousResponseID + " was not found: this gateway stores no responses; send the whole conversation in input"}
	}
	return s.policyFor(t, m).choose(x, t, m)
}

// relay answers from an open attempt, whole or streamed; false means it broke before anything
// was sent. A route of the client's own format is relayed as it is (chat by its own relay,
// the others frame by frame); any other is converted through the IR.
func (s *Server) relay(x *exchange, a *attempt) bool {
	t := x.turn
	same := a.route.Format == t.spec.name && !t.decision.SplitInline
	if same && (t.chatReq == nil || t.stream) {
		t.announce(x.w) // a whole chat answer is announced once its losses are read (relayWhole)
	}
	switch {
	case t.stream:
		return s.relayStream(x, a, same)
	case same && t.chatReq != nil:
		return s.relayWhole(x, a, t.clientModel, t)
	case same:
		return s.wholePass(x, a)
	}
	return s.wholeConverted(x, a)
}

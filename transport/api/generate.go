package api

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonpatch"
	"github.com/modelgate/modelgate/codec/messages"
	"github.com/modelgate/modelgate/codec/reasoning"
	"github.com/modelgate/modelgate/codec/responses"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/upstream"
)

// generation is one chat, messages or responses request on its way to a route.
type generation struct {
	client      *clientSpec
	body        []byte
	clientModel string
	stream      bool
	chatReq     *chat.Request  // chat clients: the cheap pass-through view
	req         *ir.Request    // the canonical request (decoded lazily for chat clients)
	model       *catalog.Model // the model being tried
	named       *catalog.Model // the model the request names (an auto model, the first of a list)
	listed      []string       // the request's "models" fallback list, as sent
	choice      *choice        // the models that may serve it, in order (choice.go)
	decision    reasoning.Decision
	loss        ir.Loss
	header      http.Header // client headers a same-format route receives
	buildErr    *apiError   // why the last route could not take the request
	inputTokens int         // the input estimate
	windowCap   int         // an output cap the context window imposes (0 = none)
	clamped     int         // the client's max tokens cut to the model's max_output_tokens
}

// decode reads the body in the client's format. Chat clients get the light parse first: a
// chat route takes their body as it is, and the IR is only built when a route needs it.
func (g *generation) decode() *apiError {
	if g.client.name == codec.FormatChat {
		req, err := chat.ParseRequest(g.body)
		if err != nil {
			return irInvalid(err)
		}
		g.chatReq, g.clientModel, g.stream = req, req.Model, req.Stream
		return nil
	}
	req, err := g.client.format.DecodeRequest(g.body)
	if err != nil {
		return irInvalid(err)
	}
	if t := g.client.target; t != nil {
		req.Model, req.Stream = t.model, t.stream
	}
	g.req, g.clientModel, g.stream = req, req.Model, req.Stream
	return nil
}

// canonical returns the IR, decoding a chat body the first time it is needed.
func (g *generation) canonical() (*ir.Request, *apiError) {
	if g.req == nil {
		req, err := chat.DecodeIR(g.body)
		if err != nil {
			return nil, irInvalid(err)
		}
		g.req = req
	}
	return g.req, nil
}

func irInvalid(err error) *apiError {
	if e, ok := err.(*ir.Error); ok {
		return errInvalid(e.Param, e.Message)
	}
	return errInvalid("", err.Error())
}

// needsCanonical reports whether any route of the model speaks another format, so a chat
// body is fully validated before the first attempt rather than in the middle of failover.
func (g *generation) needsCanonical() bool {
	for _, r := range g.model.Routes {
		if r.Format != g.client.name {
			return true
		}
	}
	return false
}

// oneChoice refuses more than one choice (chat n, gemini candidateCount) for a model that
// has a route of another format: a converted answer has exactly one, and failover may reach
// such a route, so the client would silently get fewer answers than it asked for.
func (g *generation) oneChoice() *apiError {
	if g.req == nil || g.req.Choices <= 1 {
		return nil
	}
	param := "n"
	if g.client.name == codec.FormatGemini {
		param = "generationConfig.candidateCount"
	}
	return errInvalid(param, fmt.Sprintf("%s must be 1 for model %s: it is served by routes of another format, which answer with one choice; "+
		"send one request per answer", param, g.clientModel))
}

// hasImages reports an image in the request: a chat body's from its light parse, which read
// every content part, else the IR's.
func (g *generation) hasImages() bool {
	if g.chatReq != nil {
		return g.chatReq.Images
	}
	return g.req.HasImages()
}

// takesInput refuses images to a model whose catalog input_modalities lack image (the
// predicate an auto model's choice applies to its candidates), before any upstream is called.
func (g *generation) takesInput(m *catalog.Model) *apiError {
	if m.AcceptsImages() || !g.hasImages() {
		return nil
	}
	return errInvalid("model", fmt.Sprintf("model %s does not take images (its input_modalities: %s): send the request without images, or to a model that takes them",
		strconv.Quote(m.ID), strings.Join(m.Architecture.InputModalities, ", ")))
}

// thinking is what the client asked for, before the model's class is applied.
func (g *generation) thinking() ir.Thinking {
	if g.req != nil {
		return g.req.Thinking
	}
	return g.chatReq.Thinking()
}

// build makes the upstream request for one route.
func (g *generation) build(c *call, rt *catalog.Route) (upstream.Request, bool) {
	uf, ok := upstreamFormats[rt.Format]
	if !ok {
		return upstream.Request{}, false
	}
	req := upstream.Request{Route: rt, Timeouts: rt.Effective(c.catalog.Server), Path: uf.Path(rt.UpstreamModel, g.stream), Header: forwardHeaders(c)}
	var err error
	if rt.Format == g.client.name {
		req.Body, err = g.passBody(rt)
		for k, v := range g.header {
			req.Header[k] = v
		}
	} else {
		req.Body, err = g.convertBody(rt, uf)
	}
	if rt.Format == catalog.FormatMessages && req.Header.Get("anthropic-version") == "" {
		req.Header.Set("anthropic-version", "2023-06-01")
	}
	if err != nil {
		// The request cannot be expressed for this route (say, a tool result no call
		// names, for gemini). Another route may take it; if none does, the client hears why.
		g.buildErr = irInvalid(err)
		if ae, ok := err.(*apiError); ok {
			g.buildErr = ae
		}
	}
	return req, err == nil
}

// passBody is the client's own body with the route's model id and the parameter
// translations the model's catalog entry calls for: its reasoning controls in the model's
// native form (docs/conversion.md, "Same-format routes") and the output cap.
func (g *generation) passBody(rt *catalog.Route) ([]byte, error) {
	maxTokens := max(g.windowCap, g.clamped)
	switch {
	case g.chatReq != nil:
		return g.chatReq.UpstreamBody(rt.UpstreamModel, chat.Patch{Thinking: g.decision.Thinking, MaxTokens: maxTokens})
	case g.client.name == codec.FormatMessages:
		return messages.PassBody(g.body, rt.UpstreamModel, g.decision.Thinking, maxTokens)
	case g.client.name == codec.FormatResponses:
		return responses.PassBody(g.body, rt.UpstreamModel, g.decision.Thinking, maxTokens)
	case g.client.name == codec.FormatGemini:
		return g.body, nil // the route's model goes in the path (Path), not the body
	}
	m, _ := codec.Marshal(rt.UpstreamModel)
	return jsonpatch.Apply(g.body, jsonpatch.Set("model", m))
}

// convertBody renders the canonical request in the route's format.
func (g *generation) convertBody(rt *catalog.Route, uf ir.UpstreamFormat) ([]byte, error) {
	src, e := g.canonical()
	if e != nil {
		return nil, e
	}
	if g.model == nil {
		return nil, errInvalid("model", "no model")
	}
	req := *src
	req.Thinking = g.decision.Thinking
	if rt.Format != g.client.name {
		for name := range req.Extra { // fields of the client's format mean nothing to another
			g.loss.Drop(name)
		}
		req.Extra = nil
	}
	if req.MaxTokens == 0 || g.clamped > 0 {
		req.MaxTokens = g.maxTokensToSend(rt.Format)
	}
	return uf.EncodeRequest(&req, rt.UpstreamModel, &g.loss)
}

// forwardedHeaders are the client headers a same-format messages route must see.
var forwardedHeaders = []string{"anthropic-version", "anthropic-beta"}

func clientHeaders(r *http.Request) http.Header {
	h := http.Header{}
	for _, name := range forwardedHeaders {
		if v := r.Header.Values(name); len(v) > 0 {
			h[http.CanonicalHeaderKey(name)] = v
		}
	}
	return h
}

// announce sets the headers that describe the translation, before the status is written.
func (g *generation) announce(w http.ResponseWriter) {
	w.Header().Set("X-Modelgate-Model", g.model.ID) // the model that serves
	if d := g.loss.Fields(); len(d) > 0 {
		w.Header().Set("X-Modelgate-Dropped", strings.Join(d, ", "))
	}
	if g.decision.EffortUsed != "" {
		w.Header().Set("X-Reasoning-Effort", g.decision.EffortUsed)
	}
	if g.clamped > 0 {
		w.Header().Set("X-Max-Tokens", strconv.Itoa(g.clamped))
	}
}

// carriesSignature says which formats' reasoning and text signatures a client format can hand
// back to us (docs/conversion.md, "Signatures and other opaque reasoning state"). Gemini's
// signatures on function calls ride in tool-call ids in every format and are never lost.
var carriesSignature = map[string]map[string]bool{
	codec.FormatChat:      {"messages": true},
	codec.FormatMessages:  {"messages": true},
	codec.FormatResponses: {"responses": true},
	codec.FormatGemini:    {"gemini": true},
}

// answerLoss records a signature the client's format cannot carry back (field names what it
// was on), so the next turn cannot hand it to the upstream that issued it.
func (g *generation) answerLoss(field, sigFormat string) {
	if sigFormat == "" || carriesSignature[g.client.name][sigFormat] {
		return
	}
	g.loss.Drop(field)
}

const (
	lostReasoningSignature = "answer.reasoning.signature"
	lostTextSignature      = "answer.text.signature"
)

func (g *generation) answerLossParts(parts []ir.Part) {
	for _, p := range parts {
		switch {
		case p.Kind == ir.PartReasoning && (p.Reasoning.Signature != "" || p.Reasoning.Redacted != "" || p.Reasoning.Encrypted != ""):
			g.answerLoss(lostReasoningSignature, p.Reasoning.SignatureFormat)
		case p.Signature != "":
			g.answerLoss(lostTextSignature, p.SignatureFormat)
		}
	}
}

// eventLoss is answerLossParts for a stream's events; their headers are out, so the loss
// only reaches the dropped-fields counter.
func (g *generation) eventLoss(e ir.Event) {
	switch {
	case e.Kind == ir.EvSignature || e.Kind == ir.EvRedacted:
		g.answerLoss(lostReasoningSignature, e.Format)
	case e.Kind == ir.EvText && e.Signature != "":
		g.answerLoss(lostTextSignature, e.Format)
	}
}

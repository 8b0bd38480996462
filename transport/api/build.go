package api

import (
	"net/http"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonpatch"
	"github.com/modelgate/modelgate/codec/messages"
	"github.com/modelgate/modelgate/codec/responses"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/upstream"
)

// The request a route receives: the client's body as it is (same format) or rendered from the
// canonical request (another format), with the model's translations applied.

// build makes the upstream request for one route.
func (t *turn) build(x *exchange, rt *catalog.Route) (upstream.Request, bool) {
	uf, ok := upstreamFormats[rt.Format]
	if !ok {
		return upstream.Request{}, false
	}
	req := upstream.Request{Route: rt, Timeouts: rt.Effective(x.catalog.Server), Path: uf.Path(rt.UpstreamModel, t.stream), Stream: t.stream, Header: forwardHeaders(x)}
	var err error
	if rt.Format == t.spec.name {
		req.Body, err = t.passBody(rt)
		for k, v := range t.header {
			req.Header[k] = v
		}
	} else {
		req.Body, err = t.convertBody(rt, uf)
	}
	if rt.Format == catalog.FormatMessages && req.Header.Get("anthropic-version") == "" {
		req.Header.Set("anthropic-version", "2023-06-01")
	}
	if err != nil {
		// The request cannot be expressed for this route (say, a tool result no call
		// names, for gemini). Another route may take it; if none does, the client hears why.
		t.buildErr = irInvalid(err)
		if ae, ok := err.(*apiError); ok {
			t.buildErr = ae
		}
	}
	return req, err == nil
}

// passBody is the client's own body with the route's model id and the parameter
// translations the model's catalog entry calls for: its reasoning controls in the model's
// native form (docs/conversion.md, "Same-format routes") and the output cap.
func (t *turn) passBody(rt *catalog.Route) ([]byte, error) {
	maxTokens := max(t.windowCap, t.clamped)
	switch {
	case t.chatReq != nil:
		return t.chatReq.UpstreamBody(rt.UpstreamModel, chat.Patch{Thinking: t.decision.Thinking, MaxTokens: maxTokens})
	case t.spec.name == codec.FormatMessages:
		return messages.PassBody(t.body, rt.UpstreamModel, t.decision.Thinking, maxTokens)
	case t.spec.name == codec.FormatResponses:
		return responses.PassBody(t.body, rt.UpstreamModel, t.decision.Thinking, maxTokens)
	case t.spec.name == codec.FormatGemini:
		return t.body, nil // the route's model goes in the path (Path), not the body
	}
	m, _ := codec.Marshal(rt.UpstreamModel)
	return jsonpatch.Apply(t.body, jsonpatch.Set("model", m))
}

// convertBody renders the canonical request in the route's format.
func (t *turn) convertBody(rt *catalog.Route, uf ir.UpstreamFormat) ([]byte, error) {
	src, e := t.canonical()
	if e != nil {
		return nil, e
	}
	if t.model == nil {
		return nil, errInvalid("model", "no model")
	}
	req := *src
	req.Thinking = t.decision.Thinking
	if rt.Format != t.spec.name {
		for name := range req.Extra { // fields of the client's format mean nothing to another
			t.loss.Drop(name)
		}
		req.Extra = nil
	}
	if req.MaxTokens == 0 || t.clamped > 0 {
		req.MaxTokens = t.maxTokensToSend(rt.Format)
	}
	return uf.EncodeRequest(&req, rt.UpstreamModel, &t.loss)
}

// forwardHeaders are the headers every upstream attempt carries: the request id, so the
// provider's logs and ours can be matched.
func forwardHeaders(x *exchange) http.Header {
	return http.Header{"X-Request-Id": {x.id}}
}

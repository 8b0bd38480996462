package api

import (
	"net/http"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/upstream"
)

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	c := s.begin(w, "embeddings")
	rec, body, ok := s.open(w, r, c, codec.FormatEmbeddings)
	defer s.done(rec)
	if !ok {
		return
	}
	req, err := chat.ParseEmbeddingsRequest(body)
	if err != nil {
		rec.fail(w, irInvalid(err))
		return
	}
	m, ok := s.admitModel(w, r, c, rec, req.Model, catalog.KindEmbedding, nil, func(m *catalog.Model) money.Amount {
		return m.Pricing.Prompt.Times(int64(len(body)/4 + 1))
	})
	if !ok {
		return
	}
	build := func(rt *catalog.Route) (upstream.Request, bool) {
		if rt.Format != catalog.FormatChat { // the embeddings API of chat-completions providers
			return upstream.Request{}, false
		}
		return upstream.Request{Route: rt, Timeouts: rt.Effective(c.catalog.Server), Path: "/embeddings",
			Body: req.UpstreamBody(rt.UpstreamModel), Header: forwardHeaders(c)}, true
	}
	for {
		a, ue, e := s.dial(r.Context(), c, m, build, &rec.tried)
		switch {
		case e != nil:
			rec.fail(w, e)
			return
		case ue != nil:
			rec.passError(w, ue)
			return
		}
		rec.route, rec.entry.UpstreamFormat = a.route.ID, a.route.Format
		if s.relayWhole(w, rec, a, req.Model, nil) {
			return
		}
	}
}

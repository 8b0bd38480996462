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
	x, body, ok := s.open(w, r, "embeddings", codec.FormatEmbeddings, nil)
	defer s.done(x)
	if !ok {
		return
	}
	req, err := chat.ParseEmbeddingsRequest(body)
	if err != nil {
		s.fail(x, irInvalid(err))
		return
	}
	m, ok := s.admitModel(r, x, req.Model, catalog.KindEmbedding, nil, func(m *catalog.Model) money.Amount {
		return m.Pricing.Prompt.Times(int64(len(body)/4 + 1))
	})
	if !ok {
		return
	}
	build := func(rt *catalog.Route) (upstream.Request, bool) {
		if rt.Format != catalog.FormatChat { // the embeddings API of chat-completions providers
			return upstream.Request{}, false
		}
		return upstream.Request{Route: rt, Timeouts: rt.Effective(x.catalog.Server), Path: "/embeddings",
			Body: req.UpstreamBody(rt.UpstreamModel), Header: forwardHeaders(x)}, true
	}
	for {
		a, ue, e := s.dial(x, m, build)
		switch {
		case e != nil:
			s.fail(x, e)
			return
		case ue != nil:
			s.passError(x, ue)
			return
		}
		x.route, x.entry.UpstreamFormat = a.route.ID, a.route.Format
		if s.relayWhole(x, a, req.Model, nil) {
			return
		}
	}
}

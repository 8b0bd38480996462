package api

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/messages"
	"github.com/modelgate/modelgate/codec/tokens"
	"github.com/modelgate/modelgate/persistence/catalog"
)

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	s.generate(w, r, messagesClient)
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	s.generate(w, r, responsesClient)
}

// countTokens answers /v1/messages/count_tokens from the gateway's own estimate, so coding
// clients get an answer for every model whatever its route's format, at no upstream cost.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	c := s.begin(w, "count_tokens")
	c.client = messages.Format
	if e := s.authenticate(r, c); e != nil {
		render(w, c, e)
		return
	}
	body, e := s.readBody(w, r, c)
	if e != nil {
		render(w, c, e)
		return
	}
	// count_tokens takes a messages request without max_tokens.
	if !bytes.Contains(body, []byte(`"max_tokens"`)) {
		if b, err := codec.SetFields(body, map[string]any{"max_tokens": 1}); err == nil {
			body = b
		}
	}
	req, err := messages.Format.DecodeRequest(body)
	if err != nil {
		render(w, c, irInvalid(err))
		return
	}
	m, e := s.resolveModel(c, req.Model, catalog.KindChat)
	if e != nil {
		render(w, c, e)
		return
	}
	n := ir.EstimateTokens(req)
	if count, err := tokens.For(m.Tokenizer); err == nil && m.Tokenizer != "" {
		n = ir.CountTokens(req, count)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]int{"input_tokens": n})
}

package api

import (
	"bytes"
	"net/http"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonpatch"
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
	c, body, ok := s.openCount(w, r, "count_tokens", messages.Format)
	if !ok {
		return
	}
	// count_tokens takes a messages request without max_tokens.
	if !bytes.Contains(body, []byte(`"max_tokens"`)) {
		if b, err := jsonpatch.Apply(body, jsonpatch.Set("max_tokens", []byte("1"))); err == nil {
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
	c.answer(w, map[string]int{"input_tokens": countInput(req, m)})
}

// openCount starts a token count: a call rendering errors in client's format, the key, the
// body. False means the error was answered. Counts are answered from the gateway's own
// estimate, so they are neither admitted nor logged.
func (s *Server) openCount(w http.ResponseWriter, r *http.Request, endpoint string, client ir.ClientFormat) (*call, []byte, bool) {
	c := s.begin(w, endpoint)
	c.client = client
	if e := s.authenticate(r, c); e != nil {
		render(w, c, e)
		return nil, nil, false
	}
	body, e := s.readBody(w, r, c)
	if e != nil {
		render(w, c, e)
		return nil, nil, false
	}
	return c, body, true
}

// countInput is the request's input tokens: by the model's tokenizer where the catalog names
// one, else the estimate.
func countInput(req *ir.Request, m *catalog.Model) int {
	if count, err := tokens.For(m.Tokenizer); err == nil && m.Tokenizer != "" {
		return ir.CountTokens(req, count)
	}
	return ir.EstimateTokens(req)
}

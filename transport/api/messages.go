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

// countTokens answers /v1/messages/count_tokens from the gateway's own estimate, so coding
// clients get an answer for every model whatever its route's format, at no upstream cost.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	x, body, ok := s.openCount(w, r, "count_tokens", messages.Format)
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
		s.render(x, irInvalid(err))
		return
	}
	m, e := resolveModel(x, req.Model, catalog.KindChat)
	if e != nil {
		s.render(x, e)
		return
	}
	s.answer(x, map[string]int{"input_tokens": countInput(req, m)})
}

// openCount starts a token count: an exchange rendering errors in client's format, the key,
// the body. False means the error was answered. Counts are answered from the gateway's own
// estimate, so they are neither admitted nor logged.
func (s *Server) openCount(w http.ResponseWriter, r *http.Request, endpoint string, client ir.ClientFormat) (*exchange, []byte, bool) {
	x := s.begin(w, r, endpoint)
	x.envelope = client
	body, ok := s.openUnrecorded(w, r, x, true)
	return x, body, ok
}

// countInput is the request's input tokens: by the model's tokenizer where the catalog names
// one, else the estimate.
func countInput(req *ir.Request, m *catalog.Model) int {
	if count, err := tokens.For(m.Tokenizer); err == nil && m.Tokenizer != "" {
		return ir.CountTokens(req, count)
	}
	return ir.EstimateTokens(req)
}

package api

import (
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/internal/supervise"
)

// A panic in one request is that request's 500, never a dropped connection or a dead
// process. A recorded request (chat, messages, responses, gemini, embeddings, images,
// videos) recovers in done: its answer ends in the client's envelope — a 500 when nothing
// was sent yet, the format's in-band error when its stream had begun — its attempt is
// reported to route health, and it settles as a 500 (refunded, logged with status 500)
// before that answer's last byte, as every answer is (settle.go). Anything else reaches
// the node's recover middleware, which calls Recovered.

// recovered ends a recorded request whose handler panicked with v.
func (s *Server) recovered(x *exchange, v any) {
	stack := debug.Stack()
	x.status = http.StatusInternalServerError
	s.Metrics.Panic(x.endpoint)
	s.Logger.Error("request handler panicked; answered 500", append([]any{"request_id", x.id, "endpoint", x.endpoint},
		supervise.Attrs(v, stack)...)...)
	if a := x.live; a != nil {
		if !a.reported {
			s.finish(a, routehealth.Succeeded, 0) // the gateway failed, not the route
		}
		a.resp.Body.Close() // closing twice is harmless; a panic before the relay left it open
	}
	msg := internalMessage(x.id)
	switch {
	case x.out != nil && x.out.started:
		x.out.finishing() // the error ends the stream, sent once the call is recorded (done)
		enc := x.out.enc  // the stream's own encoder ends it where it is (same response id)
		if enc == nil {   // a relayed stream: one event in the client's format
			enc = x.turn.spec.format.NewStreamEncoder(x.out, x.turn.req, x.turn.clientModel)
		}
		enc.Encode(ir.Event{Kind: ir.EvError, Err: &ir.Error{Status: http.StatusInternalServerError, Kind: ir.ErrServer, Code: "internal_error", Message: msg}})
	case x.first.IsZero() && !headerWritten(x.w):
		x.out = nil // frames held before the stream began are dropped: the 500 is the answer
		s.fail(x, &apiError{Status: http.StatusInternalServerError, Type: "server_error", Code: "internal_error", Message: msg})
	}
}

// Recovered answers a panic that escaped a handler outside a recorded request (the node's
// recover middleware calls it, with the stack): a 500 in the envelope of the path's API when
// nothing was written yet, the stack in the log, the panic counted.
func (s *Server) Recovered(w http.ResponseWriter, r *http.Request, v any, stack []byte, written bool) {
	endpoint := endpointOf(r.URL.Path)
	id := w.Header().Get("X-Request-Id")
	if id == "" {
		id = newRequestID()
		if !written {
			w.Header().Set("X-Request-Id", id)
		}
	}
	s.Metrics.Panic(endpoint)
	s.Logger.Error("request handler panicked; answered 500", append([]any{"request_id", id, "endpoint", endpoint, "path", r.URL.Path,
		"written", written}, supervise.Attrs(v, stack)...)...)
	if !written {
		writeError(w, &exchange{id: id, endpoint: endpoint, envelope: formatOfPath(r.URL.Path)},
			&apiError{Status: http.StatusInternalServerError, Type: "server_error", Code: "internal_error", Message: internalMessage(id)})
	}
}

func internalMessage(id string) string {
	return "the gateway failed while answering this request; nothing was charged. The operator can find it in the log under request " + id
}

// headerWritten reports whether the response's status line went out, as the node's recover
// middleware tracks it (a writer with Written, found through Unwrap).
func headerWritten(w http.ResponseWriter) bool {
	for w != nil {
		if t, ok := w.(interface{ Written() bool }); ok {
			return t.Written()
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
	return false
}

// endpointOf is a bounded metric label for a path, named as the handlers name their endpoint.
func endpointOf(path string) string {
	for _, p := range [...]struct{ prefix, name string }{
		{"/v1/chat/completions", "chat"}, {"/v1/messages/count_tokens", "count_tokens"}, {"/v1/messages", "messages"},
		{"/v1/responses", "responses"}, {"/v1/embeddings", "embeddings"}, {"/v1/images", "images"},
		{"/v1/videos", "videos"}, {"/v1/models", "models"}, {"/v1beta/", "gemini"}, {"/admin/", "admin"},
		{"/assets/", "assets"}, {"/healthz", "healthz"}, {"/readyz", "readyz"}, {"/metrics", "metrics"},
	} {
		if strings.HasPrefix(path, p.prefix) {
			return p.name
		}
	}
	return "other"
}

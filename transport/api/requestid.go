package api

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
)

// WithRequestID gives every answer of next an X-Request-Id before anything else runs, so
// unknown paths, 405s, assets and the admin API carry one as the endpoints do; the endpoints
// read it back (requestIDOf) for their error bodies and log entries.
func WithRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", newRequestID())
		next.ServeHTTP(w, r)
	})
}

// requestIDOf is the answer's request id: the one WithRequestID set, or a new one.
func requestIDOf(w http.ResponseWriter) string {
	if id := w.Header().Get("X-Request-Id"); id != "" {
		return id
	}
	id := newRequestID()
	w.Header().Set("X-Request-Id", id)
	return id
}

func newRequestID() string {
	var b [12]byte
	rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

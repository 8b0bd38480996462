package respond

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestAnswersAreJSONNeverCachedUnlessTheHandlerSaidOtherwise: a value and an error each come
// with their status, the JSON type and no-store (a handler's own Cache-Control kept); HTML
// characters stay as they are, and an error carries the answer's request id.
func TestAnswersAreJSONNeverCachedUnlessTheHandlerSaidOtherwise(t *testing.T) {
	cases := []struct {
		name        string
		cache       string // set by the handler before; "" for none
		write       func(http.ResponseWriter)
		status      int
		body, store string
	}{
		{"a value", "", func(w http.ResponseWriter) { JSON(w, http.StatusOK, map[string]string{"a": "x->y<z>"}) },
			200, "{\"a\":\"x->y<z>\"}\n", "no-store"},
		{"a value, the handler's caching kept", "no-cache", func(w http.ResponseWriter) { JSON(w, http.StatusCreated, []int{1}) },
			201, "[1]\n", "no-cache"},
		{"an error", "", func(w http.ResponseWriter) {
			Error(w, http.StatusNotFound, "invalid_request_error", "not_found", "id", "no such key")
		}, 404, `{"error":{"message":"no such key","type":"invalid_request_error","param":"id","code":"not_found","request_id":"req_1"}}`, "no-store"},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		rec.Header().Set("X-Request-Id", "req_1")
		if c.cache != "" {
			rec.Header().Set("Cache-Control", c.cache)
		}
		c.write(rec)
		if rec.Code != c.status || rec.Body.String() != c.body || rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Cache-Control") != c.store {
			t.Errorf("%s: %d %q %v, want %d %q %s", c.name, rec.Code, rec.Body.String(), rec.Header(), c.status, c.body, c.store)
		}
	}
}

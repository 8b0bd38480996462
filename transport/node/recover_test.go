package node

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/api"
	"github.com/modelgate/modelgate/transport/metrics"
)

// The node's backstop against panics: a panic outside a recorded request (here a bare
// handler) is a 500 in the envelope of the path's API, counted and logged with its stack;
// once the status line went out the connection is cut rather than a half answer passing for
// a whole one; the server serves on.
func TestRecoverMiddlewareAnswersInThePathsEnvelope(t *testing.T) {
	var logs bytes.Buffer
	m := metrics.New()
	srv := api.New(api.Deps{Metrics: m, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	h := recoverPanics(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("after") != "" {
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(`{"partial":`))
			w.(http.Flusher).Flush()
		}
		if r.URL.Query().Get("abort") != "" {
			panic(http.ErrAbortHandler)
		}
		var m map[string]int
		m["boom"]++ // a runtime error: its text may be logged
	}), srv.Recovered)
	hs := httptest.NewServer(h)
	defer hs.Close()

	cases := []struct {
		path, want string
	}{
		{"/admin/v1/accounts", `{"error":{"message":"the gateway failed while answering this request; nothing was charged. The operator can find it in the log under request ID","type":"server_error","param":null,"code":"internal_error","request_id":"ID"}}`},
		{"/v1/models", `{"error":{"message":"the gateway failed while answering this request; nothing was charged. The operator can find it in the log under request ID","type":"server_error","param":null,"code":"internal_error","request_id":"ID"}}`},
		{"/v1/messages/count_tokens", `{"type":"error","error":{"type":"api_error","message":"the gateway failed while answering this request; nothing was charged. The operator can find it in the log under request ID","code":"internal_error"},"request_id":"ID"}`},
		{"/v1beta/models", `{"error":{"code":500,"message":"the gateway failed while answering this request; nothing was charged. The operator can find it in the log under request ID","status":"INTERNAL","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"modelgate","reason":"INTERNAL_ERROR"},{"@type":"type.googleapis.com/google.rpc.RequestInfo","requestId":"ID"}]}}`},
	}
	for _, c := range cases {
		resp, err := http.Get(hs.URL + c.path)
		if err != nil {
			t.Fatalf("%s: %v (a dropped connection)", c.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		id := resp.Header.Get("X-Request-Id")
		if resp.StatusCode != 500 || id == "" || string(body) != strings.ReplaceAll(c.want, "ID", id) {
			t.Errorf("%s: %d %q\n%s", c.path, resp.StatusCode, id, body)
		}
	}
	// After the status line: the connection is cut, the client sees no whole answer.
	for _, q := range []string{"after=1", "after=1&abort=1"} {
		resp, err := http.Get(hs.URL + "/v1/models?" + q)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if err == nil {
			t.Errorf("%s: a half-written answer ended as if whole", q)
		}
	}
	if resp, err := http.Get(hs.URL + "/healthz"); err != nil || resp.StatusCode != 500 {
		t.Fatalf("the server stopped serving: %v", err)
	}
	text := logs.String()
	if n := strings.Count(text, "request handler panicked"); n != 6 || !strings.Contains(text, `"panic":"assignment to entry in nil map"`) ||
		!strings.Contains(text, "recover_test.go") {
		t.Errorf("%d log lines, want 6 with the runtime error and the stack:\n%s", n, text)
	}
}

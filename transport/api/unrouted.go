package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/codec/gemini"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/messages"
	"github.com/modelgate/modelgate/codec/responses"
)

// NotFound answers a path no endpoint serves: 404, with the request id, in the envelope of
// the API the path is under (formatOfPath: messages under /v1/messages/, Google's under
// /v1beta/, else chat), as that API's clients read errors; a path with its version twice is
// judged without the base URL's. Its message says what to fix where the mistake is a known
// one: a base URL that already ends in the API version, to a client that adds it itself.
func (s *Server) NotFound(w http.ResponseWriter, r *http.Request) {
	x := &exchange{id: requestIDOf(w), catalog: s.Catalog.Load(), envelope: formatOfPath(r.URL.Path)}
	path := shortPath(r.URL.Path)
	msg := "no endpoint at " + path + "; the API lives under /v1 (the Gemini API under /v1beta)"
	if base, added, ok := doubledVersion(r.URL.Path); ok {
		x.envelope = formatOfPath(strings.TrimPrefix(r.URL.Path, "/"+base)) // the client's own path
		msg = "no endpoint at " + path + ": the base URL ends in /" + base + " and the client adds /" + added +
			" itself; drop /" + base + " from the base URL (use " + publicBase(r, x.catalog) + ")" + whoAdds[added]
	} else if r.URL.Path == "/metrics" {
		msg = "no endpoint at /metrics: metrics are served on the metrics address (server.metrics_addr), not the API's"
	} else if unclean(r.URL.Path) {
		msg = "no endpoint at " + path + ": paths are taken as sent, without empty, . or .. segments (a base URL ending in / adds an empty one)"
	}
	writeError(w, x, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "unknown_url", Message: msg})
}

// MethodNotAllowed answers a known path called with another method: 405 with Allow, in the
// envelope of the path's own format (formatOfPath), as its clients read errors.
func (s *Server) MethodNotAllowed(w http.ResponseWriter, r *http.Request, allow []string) {
	x := &exchange{id: requestIDOf(w), catalog: s.Catalog.Load(), envelope: formatOfPath(r.URL.Path)}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	writeError(w, x, &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error", Code: "method_not_allowed",
		Message: "method " + r.Method + " is not allowed on " + shortPath(r.URL.Path) + "; use " + strings.Join(allow, " or ")})
}

// unclean reports a path with an empty (but a trailing one), . or .. segment, which the router
// does not resolve.
func unclean(path string) bool {
	for _, seg := range strings.Split(strings.TrimSuffix(path, "/"), "/")[1:] {
		if seg == "" || seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// whoAdds names the clients known to add each version to their base URL.
var whoAdds = map[string]string{
	"v1":     "; Anthropic SDKs and Claude Code (ANTHROPIC_BASE_URL) add /v1 themselves",
	"v1beta": "; Google's SDKs and Gemini CLI (GOOGLE_GEMINI_BASE_URL) add /v1beta themselves",
}

// doubledVersion recognises /v1/v1/…, /v1/v1beta/… and /v1beta/v1beta/…: the first segment
// came from the base URL, the second from the client.
func doubledVersion(path string) (base, added string, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	if len(parts) < 2 || whoAdds[parts[0]] == "" || whoAdds[parts[1]] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// formatOfPath is the client format whose envelope the errors of a path use when no handler
// of that format answers it (unrouted paths, a panic outside a call): messages under
// /v1/messages, Google's under /v1beta, responses under /v1/responses; nil (chat) elsewhere.
func formatOfPath(path string) ir.ClientFormat {
	under := func(prefix string) bool { return path == prefix || strings.HasPrefix(path, prefix+"/") }
	switch {
	case under("/v1/messages"):
		return messages.Format
	case under("/v1beta"):
		return gemini.Format
	case under("/v1/responses"):
		return responses.Format
	}
	return nil
}

// shortPath quotes a path for a message, cut to a readable length.
func shortPath(p string) string {
	const max = 200
	if len(p) > max {
		p = p[:max] + "…"
	}
	q := strconv.Quote(p)
	return q[1 : len(q)-1]
}

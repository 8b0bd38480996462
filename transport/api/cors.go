package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// Browsers (docs/decisions.md, "Browsers (CORS)"): the API answers CORS for the
// origins server.cors_origins names, every origin by default — an API key is a bearer
// token, never a cookie, so a page can only spend the key it was given.

// exposedHeaders are the answer headers a page may read: the ones this gateway documents.
const exposedHeaders = "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, " +
	costHeader + ", X-Modelgate-Dropped, X-Reasoning-Effort, X-Max-Tokens, Deprecation, Sunset, Link"

// allowedHeaders are the request headers every preflight allows: the three formats' key
// headers, the messages format's version and beta headers, and the body's type. The
// headers a preflight asks for are allowed besides (SDKs send their own x-stainless-*).
var allowedHeaders = []string{"Authorization", "Content-Type", "x-api-key", "anthropic-version", "anthropic-beta", "x-goog-api-key"}

// preflightMaxAge is how long a browser may reuse a preflight's answer (Chromium caps it at
// two hours, Firefox at one day).
const preflightMaxAge = "7200"

// maxAllowHeaders bounds the request-header list a preflight gets echoed (a longer one is
// no SDK's: the browser then refuses the call).
const maxAllowHeaders = 4096

// CORS wraps the API's handler: an answer to an allowed origin carries
// Access-Control-Allow-Origin and the headers a page may read; a preflight (OPTIONS with
// Access-Control-Request-Method) of a path the API serves is answered here: 204 with the
// path's methods (allowed lists them) and the allowed request headers (allowHeaders), or
// 403 in the path's envelope when the origin is not allowed. Other paths (the admin API,
// and the same-origin /auth, /account and /dashboard) get no CORS.
func (s *Server) CORS(next http.Handler, allowed func(*http.Request) []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || !corsPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		h := w.Header()
		h.Add("Vary", "Origin")
		allow, ok := allowOrigin(s.Catalog.Load(), origin)
		if !ok {
			if preflight {
				x := &exchange{id: requestIDOf(w), catalog: s.Catalog.Load(), envelope: formatOfPath(r.URL.Path)}
				writeError(w, x, &apiError{Status: http.StatusForbidden, Type: "permission_error", Code: "origin_not_allowed",
					Message: "this gateway does not answer browsers from " + shortPath(origin) + "; its operator lists the allowed origins in server.cors_origins"})
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", allow)
		if !preflight {
			h.Set("Access-Control-Expose-Headers", exposedHeaders)
			next.ServeHTTP(w, r)
			return
		}
		methods := allowed(r)
		if len(methods) == 0 {
			h.Set("Access-Control-Expose-Headers", exposedHeaders)
			next.ServeHTTP(w, r) // no such path: its 404, readable by the page
			return
		}
		h.Set("Access-Control-Allow-Methods", strings.Join(methods, ", "))
		h.Set("Access-Control-Allow-Headers", allowHeaders(r.Header.Get("Access-Control-Request-Headers")))
		h.Set("Access-Control-Max-Age", preflightMaxAge)
		requestIDOf(w)
		w.WriteHeader(http.StatusNoContent)
	})
}

// corsPath reports the paths browsers may call: the OpenAI/Anthropic API, the Gemini API and
// the assets their answers link to.
func corsPath(p string) bool {
	return p == "/v1" || strings.HasPrefix(p, "/v1/") || p == "/v1beta" || strings.HasPrefix(p, "/v1beta/") ||
		strings.HasPrefix(p, "/assets/")
}

// allowOrigin is the Access-Control-Allow-Origin value for origin, if the catalog allows it.
func allowOrigin(cat *catalog.Catalog, origin string) (string, bool) {
	list := cat.Server.CORSOrigins
	if slices.Contains(list, catalog.AnyOrigin) {
		return catalog.AnyOrigin, true
	}
	if slices.Contains(list, strings.ToLower(origin)) {
		return origin, true
	}
	return "", false
}

// allowHeaders is a preflight's Access-Control-Allow-Headers: allowedHeaders, then the
// requested headers not among them, as the browser wrote them (a list over
// maxAllowHeaders is no SDK's: only allowedHeaders, and the browser refuses the call).
func allowHeaders(requested string) string {
	out := slices.Clone(allowedHeaders)
	if len(requested) > maxAllowHeaders {
		requested = ""
	}
	for _, h := range strings.Split(requested, ",") {
		h = strings.TrimSpace(h)
		if h != "" && !slices.ContainsFunc(out, func(a string) bool { return strings.EqualFold(a, h) }) {
			out = append(out, h)
		}
	}
	return strings.Join(out, ", ")
}

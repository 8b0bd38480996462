package node

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/transport/api"
)

// unrouted answers what no route of router takes: 405 with Allow when the path exists with
// other methods, else 404. It asks the router itself rather than trusting its own verdict:
// gorilla/mux 1.8 reports a wrong method on a subrouter's path as not found when a later
// route of that subrouter has another path.
func unrouted(router *mux.Router, a *api.Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if allow := allowedMethods(router, r); len(allow) > 0 {
			a.MethodNotAllowed(w, r, allow)
			return
		}
		a.NotFound(w, r)
	})
}

// methods are those an Allow header may list.
var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// allowedMethods lists the methods router serves at r's path, for the Allow header of a 405:
// the router is asked about the same path with each method in turn.
func allowedMethods(router *mux.Router, r *http.Request) []string {
	var allow []string
	for _, m := range methods {
		probe := *r
		probe.Method = m
		var match mux.RouteMatch
		if router.Match(&probe, &match) && match.MatchErr == nil {
			allow = append(allow, m)
		}
	}
	return allow
}

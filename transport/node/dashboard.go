package node

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/dashboard"
)

// registerDashboard serves the web dashboard (same origin as /auth, which it calls) under
// dashboard.Prefix, and /dashboard without the slash as a redirect to it.
func registerDashboard(r *mux.Router) {
	r.PathPrefix(dashboard.Prefix).Handler(dashboard.Handler())
	r.Handle(strings.TrimSuffix(dashboard.Prefix, "/"), http.RedirectHandler(dashboard.Prefix, http.StatusMovedPermanently))
}

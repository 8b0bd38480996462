package node

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/admin"
	"github.com/modelgate/modelgate/transport/api"
	"github.com/modelgate/modelgate/transport/peer"
	"github.com/modelgate/modelgate/transport/respond"
)

// The admin plane (/admin/v1, and /admin/cluster on a cluster node) is served on a listener
// of its own, loopback by default: the token guards it, but where it listens is the first
// guard, and the public port never takes a guess at the token.

// adminPrefixes are the admin plane's paths; the public port answers them adminElsewhere.
var adminPrefixes = []string{"/admin/v1", "/admin/cluster"}

// isAdminPath reports whether path is one of the admin plane's.
func isAdminPath(path string) bool {
	for _, p := range adminPrefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// AdminElsewhere is the public port's answer to an admin path, whatever the method: it says
// where the admin API is and nothing more (not whether it is on, nor its address).
const AdminElsewhere = "the admin API is served on its own listener; see server.admin_addr"

// registerAdminElsewhere makes the public router answer the admin plane's paths with 404
// AdminElsewhere, in the admin API's envelope.
func registerAdminElsewhere(r *mux.Router) {
	r.MatcherFunc(func(req *http.Request, _ *mux.RouteMatch) bool { return isAdminPath(req.URL.Path) }).
		HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			respond.Error(w, http.StatusNotFound, "invalid_request_error", "admin_elsewhere", "", AdminElsewhere)
		})
}

// adminPlane is the admin listener: opened with the node's other listeners, served once the
// node serves.
type adminPlane struct {
	ln  net.Listener // nil: no admin plane (off, or the default address taken)
	tls *tls.Config  // nil: plain HTTP
	srv *http.Server // nil until served
}

// openAdminPlane opens the admin address: Config.AdminAddr (serve's --admin-addr or
// MODELGATE_ADMIN_ADDR), then the catalog's server.admin_addr, then catalog.DefaultAdminAddr
// (sideListener: a chosen address must open; the default is best effort).
func openAdminPlane(cfg Config, server catalog.Server) (*adminPlane, error) {
	ln, err := sideListener{name: "admin API", setting: "server.admin_addr or --admin-addr", configured: cfg.AdminAddr,
		inCatalog: server.AdminAddr, def: catalog.DefaultAdminAddr, off: catalog.AdminOff}.open(cfg.Logger)
	if ln == nil || err != nil {
		return &adminPlane{}, err
	}
	tc, err := adminTLS(server, cfg.AdminTLSConfig)
	if err != nil {
		ln.Close()
		return &adminPlane{}, err
	}
	return &adminPlane{ln: ln, tls: tc}, nil
}

// adminTLS is the admin listener's TLS: nil (plain HTTP) unless the catalog sets admin_tls,
// its own files or ("same") server.tls's, which load turns into a configuration. A catalog
// that asks for TLS is never served in plain text: without load the start is refused.
func adminTLS(server catalog.Server, load func(catalog.TLSFiles) (*tls.Config, error)) (*tls.Config, error) {
	files := server.AdminTLS
	if server.AdminTLSSame {
		files = server.TLS
	}
	if !files.Enabled() {
		return nil, nil
	}
	if load == nil {
		return nil, errors.New("server.admin_tls: this node has no certificate loader (node.Config.AdminTLSConfig); the admin API is not served in plain text when the catalog asks for TLS")
	}
	tc, err := load(files)
	if err != nil {
		return nil, errors.Join(errors.New("server.admin_tls"), err)
	}
	return tc, nil
}

// serveAdminPlane serves the admin API on p's listener, if there is one, and sets AdminURL.
func (n *Node) serveAdminPlane(p *adminPlane, adm *admin.Server) {
	n.adminPlane = p
	if p.ln == nil {
		return
	}
	scheme := "http://"
	if p.tls != nil {
		scheme = "https://"
	}
	n.AdminURL = scheme + p.ln.Addr().String()
	p.srv = &http.Server{Handler: n.adminHandler(adm), TLSConfig: p.tls, ReadHeaderTimeout: catalog.HeaderTimeout,
		IdleTimeout: 120 * time.Second, ErrorLog: slog.NewLogLogger(n.cfg.Logger.Handler(), slog.LevelWarn)}
	supervise.Go("admin listener", func() {
		if p.tls != nil {
			p.srv.ServeTLS(p.ln, "", "") // the configuration's certificate; HTTP/2 offered as on any TLS server
			return
		}
		p.srv.Serve(p.ln)
	})
}

// adminHandler routes the admin plane: the admin API, the cluster's operator routes on a
// cluster node, and 404/405 for anything else, behind the node's panic backstop and request
// ids, and the edge's body and write bounds. Draining does not refuse it: the operator
// watches and finishes a drain through it.
func (n *Node) adminHandler(adm *admin.Server) http.Handler {
	r := mux.NewRouter().SkipClean(true) // paths as sent, as on the public router
	adm.Register(r)
	if n.cluster != nil {
		n.cluster.register(r, adm.Guard)
	}
	r.NotFoundHandler = unrouted(r, n.API)
	r.MethodNotAllowedHandler = r.NotFoundHandler
	h := recoverPanics(api.WithRequestID(r), n.API.Recovered)
	// The public listener's edge bounds its bodies and writes too (one in-flight budget);
	// its per-address connection count is the public listener's alone.
	h = n.Edge.Handler(h)
	return peer.Resolve(func() []netip.Prefix { return n.Catalog.Load().Server.TrustedProxies }, h)
}

// shutdown stops the admin listener, letting admin calls in flight finish until ctx ends.
func (p *adminPlane) shutdown(ctx context.Context) {
	if p == nil || p.srv == nil {
		return
	}
	if p.srv.Shutdown(ctx) != nil {
		p.srv.Close()
	}
}

// Package node assembles one gateway node: the Pebble store, the actor engine and its actors,
// the catalog, and the HTTP front end.
package node

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/actors/placement"
	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/actors/video"
	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/internal/randid"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/assets"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/account"
	"github.com/modelgate/modelgate/transport/admin"
	"github.com/modelgate/modelgate/transport/api"
	"github.com/modelgate/modelgate/transport/auth"
	"github.com/modelgate/modelgate/transport/authlimit"
	"github.com/modelgate/modelgate/transport/billing"
	"github.com/modelgate/modelgate/transport/edge"
	"github.com/modelgate/modelgate/transport/metrics"
	"github.com/modelgate/modelgate/transport/peer"
	"github.com/modelgate/modelgate/transport/upstream"
)

// Config says where a node keeps its data and listens.
type Config struct {
	DataDir     string
	CatalogPath string
	Addr        string // host:port; port 0 picks a free one
	MetricsAddr string // host:port of /metrics, or "off"; "" = the catalog's, else loopback
	AdminAddr   string // host:port of /admin, or "off"; "" = the catalog's, else loopback
	// AdminTLSConfig turns the catalog's admin certificate files (server.admin_tls, or
	// server.tls for "same") into the admin listener's TLS configuration; nil: the node's
	// own loader (the public listener's certificate for the same files, else the files
	// read and watched like it).
	AdminTLSConfig func(catalog.TLSFiles) (*tls.Config, error)
	// TLS is the listener's certificate and key (serve's --tls-cert/--tls-key); zero: the
	// catalog's server.tls. TLSPollEvery is how often the files are read for a change
	// (zero: DefaultTLSPollEvery); the admin listener's files (server.admin_tls) are
	// watched the same way.
	TLS          catalog.TLSFiles
	TLSPollEvery time.Duration
	// Pprof serves Go's profiles (/debug/pprof/) on the metrics listener, for measuring
	// under load (the bench's --profile). Off by default; profiles hold no request content.
	Pprof      bool
	AdminToken string // empty: read <data>/admin-token, or create it
	Health     routehealth.Policy
	Quota      quota.Config
	Video      video.Config
	Store      persistence.Options // the full-disk guard (zero: its defaults)
	Logger     *slog.Logger

	// Cluster, when set, runs the node as a member of a cluster (the data directory's
	// cluster.json): accounts and keys in the replicated metadata shard; nil is a single node
	// and starts no engine.
	Cluster *membership.File

	// QuotaStore, when set, wraps the store the quota actors read and write through (tests
	// hold or fail their writes).
	QuotaStore func(quota.Store) quota.Store

	// LogRetentionEvery is how often the request log's retention runs (zero: hourly).
	LogRetentionEvery time.Duration
}

// Node is a running gateway.
type Node struct {
	cfg        Config
	Store      *persistence.Store
	Engine     *actor.Engine
	Board      *routehealth.Board
	Quota      *quota.Service
	Video      *video.Service
	Catalog    *catalog.Holder
	Metrics    *metrics.Metrics
	API        *api.Server
	Auth       *auth.Server // the /auth endpoints (sign-up, login, sessions)
	Edge       *edge.Guard  // the public listener's bounds on slow and greedy clients
	AdminToken string       // empty when the token was created by an earlier start (only its file has it)
	URL        string       // http://host:port, or https:// with TLS
	MetricsURL string       // http://host:port/metrics; "" when metrics are off
	AdminURL   string       // http(s)://host:port of /admin/v1 and /admin/cluster; "" when off
	http       *http.Server
	ln         net.Listener
	certs      *certs       // nil without TLS
	adminCerts *certs       // the admin listener's own certificate; nil without
	metrics    *http.Server // nil when metrics are off
	adminPlane *adminPlane
	done       chan error
	cluster    *clusterNode // nil on a single node
	retention  *logRetention
}

// Start opens everything and serves in the background: the store, the node's backend (its
// own store, or its part of a cluster: backend.go), the actors over it, and the listeners.
func Start(cfg Config) (*Node, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Health.Now == nil {
		cfg.Health = routehealth.DefaultPolicy()
	}
	cat, err := catalog.LoadFile(cfg.CatalogPath)
	if err != nil {
		return nil, err
	}
	certs, err := loadCerts(cfg, cat)
	if err != nil {
		return nil, err
	}
	if cfg.Cluster != nil {
		if err := checkCluster(cfg); err != nil {
			return nil, err // nothing in the data directory has been touched
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	tokenHash, shown, err := adminToken(cfg.DataDir, cfg.AdminToken)
	if err != nil {
		return nil, err
	}
	if cfg.Store.Logger == nil {
		cfg.Store.Logger = cfg.Logger
	}
	if cfg.Cluster != nil {
		if cfg.Store, err = clusterStoreOptions(cfg); err != nil {
			return nil, err
		}
	}
	store, err := persistence.OpenWith(filepath.Join(cfg.DataDir, "pebble"), cfg.Store)
	if err != nil {
		return nil, err
	}
	if err := warnSharedEmails(store, cfg.Logger); err != nil {
		store.Close()
		return nil, err
	}
	engine, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		store.Close()
		return nil, err
	}
	n := &Node{cfg: cfg, Store: store, Engine: engine, Catalog: catalog.NewHolder(cat), Metrics: metrics.New(), AdminToken: shown, done: make(chan error, 1)}
	n.certs = certs
	files, err := assets.New(store, cfg.DataDir, assets.Config{})
	if err != nil {
		n.shutdownActors()
		return nil, err
	}
	up := upstream.New() // a video task's Upstream too (video.Upstream, video.UpstreamError)
	var b backend
	if cfg.Cluster != nil {
		b, err = n.clusterBackend(store, files, up)
	} else {
		b = n.singleBackend(store, files, up)
	}
	n.Quota = b.quota
	if err != nil {
		n.shutdownActors()
		return nil, err
	}
	locator := placement.NewLocal(engine)
	n.Board = routehealth.NewBoard(locator, cfg.Health)
	n.Board.Sync(cat.Routes())
	n.Video = video.NewService(locator, b.video, cfg.Video)
	if err := n.Video.Resume(context.Background()); err != nil {
		n.shutdownActors()
		return nil, fmt.Errorf("video tasks: %w", err)
	}
	b.started(n.Video)
	n.retention = startLogRetention(cfg.LogRetentionEvery, n.Catalog, b.prune, cfg.Logger)

	n.Metrics.Store(func() bool { return store.CheckWritable() == nil }, func() int64 { return store.Space().FreeBytes })
	n.Metrics.Ledger(func() uint64 { return store.LedgerStats().Commits }, func() uint64 { return store.LedgerStats().Writes })
	b.metrics(n.Metrics)
	// Paths are matched as sent: gorilla/mux would answer a path with //, . or .. segments with
	// a 301 to its cleaned form, outside every envelope, which clients follow as a GET (a POST
	// loses its body and meets a 405). Such a path is a 404 naming it (api.NotFound).
	r := mux.NewRouter().SkipClean(true)
	r.HandleFunc("/healthz", n.healthz).Methods(http.MethodGet)
	r.HandleFunc("/readyz", n.readyz).Methods(http.MethodGet)
	// One limiter of failed key, token, session and password checks for every surface.
	authLimit := authlimit.New(authlimit.FromCatalog(n.Catalog), n.Metrics)
	n.API = api.New(api.Deps{
		Keys: b.keys, Accounts: store, Log: b.log, Recorder: store, Quota: n.Quota, Assets: b.assets, Videos: n.Video,
		Catalog: n.Catalog, Board: n.Board, Upstream: up, Metrics: n.Metrics, Logger: cfg.Logger, AuthLimit: authLimit,
	})
	n.API.Register(r)
	adm := admin.New(admin.Deps{Store: b.admin, TokenHash: tokenHash, Catalog: n.Catalog, Quota: n.Quota, Health: n.Board, AuthLimit: authLimit,
		Credentials: up, Payments: b.pay})
	// Stripe's webhook, on the public port: its signature is its authentication.
	pay := billing.New(billing.Deps{Catalog: n.Catalog, Credits: n.Quota, Reverser: n.Quota, Store: b.pay, Count: n.Metrics.Payments(), Logger: cfg.Logger})
	r.HandleFunc(billing.WebhookPath, pay.Webhook).Methods(http.MethodPost)
	registerAdminElsewhere(r) // the admin API is on its own listener (serveAdminPlane)
	r.NotFoundHandler = unrouted(r, n.API)
	r.MethodNotAllowedHandler = r.NotFoundHandler

	metricsLn, err := metricsListener(cfg.MetricsAddr, cat.Server, cfg.Logger)
	if err != nil {
		n.shutdownActors()
		return nil, err
	}
	if cfg.AdminTLSConfig == nil {
		cfg.AdminTLSConfig = n.adminCertLoader(certs)
	}
	adminPlane, err := openAdminPlane(cfg, cat.Server)
	if err != nil {
		closeListeners(metricsLn)
		n.shutdownActors()
		return nil, err
	}
	n.ln, err = net.Listen("tcp", cfg.Addr)
	if err != nil {
		closeListeners(metricsLn, adminPlane.ln)
		n.shutdownActors()
		return nil, err
	}
	n.URL = certs.scheme() + "://" + n.ln.Addr().String()
	warnNoPublicURL(cat, n.ln.Addr(), cfg.Logger)
	n.ln = certs.listener(n.ln)
	if n.Auth, err = startAuth(n.Catalog, n.URL, b.auth, authLimit, cfg.Logger); err != nil {
		closeListeners(n.ln, metricsLn, adminPlane.ln)
		n.shutdownActors()
		return nil, err
	}
	n.Auth.Register(r) // before Serve: the router is not read until then
	account.New(account.Deps{Store: b.admin, Admin: adm, Auth: n.Auth, Keys: b.keys, Grants: b.log, Logger: cfg.Logger, AuthLimit: authLimit,
		Payments: pay, PublicURL: func() string { return n.Catalog.Load().Server.PublicURL }}).Register(r)
	registerDashboard(r)
	handler := n.refuseWhileDraining(recoverPanics(api.WithRequestID(n.API.CORS(r, func(req *http.Request) []string { return allowedMethods(r, req) })), n.API.Recovered))
	n.Edge = n.startEdge()
	handler = n.Edge.Handler(handler)
	// Who the client is (peer.Of), worked out once: forwarding headers only from trusted proxies.
	handler = peer.Resolve(func() []netip.Prefix { return n.Catalog.Load().Server.TrustedProxies }, withHSTS(cat.Server.HSTS, handler))
	// No ReadTimeout or WriteTimeout: the edge bounds each body read and each write instead,
	// so a long stream is never cut for lasting (docs/running.md, "Slow and greedy clients").
	n.http = &http.Server{Handler: handler, ReadHeaderTimeout: catalog.HeaderTimeout, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)}
	n.Edge.Install(n.http)
	go func() { n.done <- n.http.Serve(n.Edge.Listener(n.ln)) }()
	n.serveAdminPlane(adminPlane, adm)
	certs.watch(cfg.TLSPollEvery)
	n.adminCerts.watch(cfg.TLSPollEvery)
	if metricsLn != nil {
		n.MetricsURL = "http://" + metricsLn.Addr().String() + "/metrics"
		n.metrics = n.metricsServer()
		go n.metrics.Serve(metricsLn)
	}
	return n, nil
}

// warnSharedEmails names, at every start, the accounts of a store written before e-mails
// were unique that share one: they keep working, and the e-mail is refused to new accounts.
func warnSharedEmails(store *persistence.Store, logger *slog.Logger) error {
	shared, err := store.AccountsSharingEmails()
	for _, ids := range shared {
		logger.Warn("accounts share an e-mail address (created before e-mails were unique); they keep working, new accounts cannot take it", "accounts", ids)
	}
	return err
}

// healthz answers 200 while the node serves: {"status":"ok"}, or "degraded" with the reason
// while its store refuses writes (a full disk: calls get 503 until space returns). A full
// disk is not cured by a restart, so the answer stays 200 for liveness probes; load
// balancers read /readyz (readiness.go), monitors the status or modelgate_store_writable.
func (n *Node) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if n.cluster != nil {
		n.clusterHealthz(w)
		return
	}
	if n.Store.CheckWritable() == nil {
		w.Write([]byte(`{"status":"ok"}`))
		return
	}
	sp := n.Store.Space()
	json.NewEncoder(w).Encode(map[string]any{"status": "degraded", "store": map[string]any{
		"writable": false, "reason": sp.Reason, "since": sp.Since.UTC().Format(time.RFC3339), "free_bytes": sp.FreeBytes,
		"calls": "refused with 503 until the data directory has space again"}})
}

// Reload re-reads the TLS certificate files and the catalog. A bad file changes nothing;
// requests in flight keep the catalog they started with, and routes that stay keep their
// health.
func (n *Node) Reload() error {
	n.certs.reload(true)
	n.adminCerts.reload(true)
	cat, err := catalog.LoadFile(n.cfg.CatalogPath)
	if err != nil {
		return err
	}
	n.Board.Sync(cat.Routes())
	n.Catalog.Store(cat)
	return nil
}

// Close stops taking requests, lets those in flight finish (until ctx ends), lets the
// accounts finish their writes and closes the store.
func (n *Node) Close(ctx context.Context) error {
	n.certs.close()
	n.adminCerts.close()
	err := n.http.Shutdown(ctx)
	if err != nil {
		n.http.Close()
	}
	n.adminPlane.shutdown(ctx)
	if n.metrics != nil {
		n.metrics.Close() // scrapes are short; nothing to drain
	}
	n.shutdownActors()
	return err
}

func (n *Node) shutdownActors() {
	n.retention.close() // before the store and the shards it writes through
	if n.Auth != nil {
		n.Auth.Close() // the mail queued goes out first
	}
	if n.Video != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := n.Video.Close(ctx); err != nil {
			n.cfg.Logger.Error("video tasks not fully written at shutdown", "err", err)
		}
		cancel()
	}
	if n.Quota != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := n.Quota.Close(ctx); err != nil { // every account's state written
			n.cfg.Logger.Error("quota state not fully written at shutdown", "err", err)
		}
		cancel()
	}
	n.cluster.close() // the engine closes the shards' state machines, which write to the store
	n.Store.Close()
}

// adminToken returns the hash to check and, when this start created or was given the
// token, the token itself to show. A created token is written to <data>/admin-token (0600).
// A given or stored token needs persistence.MinSecretBits (after an mg-admin- prefix, which
// guesses nothing): the node refuses to start with a weaker one.
func adminToken(dataDir, given string) ([32]byte, string, error) {
	if given != "" {
		if err := strongAdminToken("the admin token given (MODELGATE_ADMIN_TOKEN)", given, ""); err != nil {
			return [32]byte{}, "", err
		}
		return sha256.Sum256([]byte(given)), given, nil
	}
	path := filepath.Join(dataDir, "admin-token")
	if b, err := os.ReadFile(path); err == nil {
		t := strings.TrimSpace(string(b))
		if t == "" {
			return [32]byte{}, "", fmt.Errorf("%s is empty; delete it to create a new admin token", path)
		}
		if err := strongAdminToken("the admin token in "+path, t, "; or delete the file to have one made"); err != nil {
			return [32]byte{}, "", err
		}
		return sha256.Sum256([]byte(t)), t, nil
	}
	t := adminTokenPrefix + randid.Base62(40)
	if err := os.WriteFile(path, []byte(t+"\n"), 0o600); err != nil {
		return [32]byte{}, "", fmt.Errorf("admin token: %w", err)
	}
	return sha256.Sum256([]byte(t)), t, nil
}

// adminTokenPrefix starts the tokens a node makes; it adds nothing to a guess.
const adminTokenPrefix = "mg-admin-"

// strongAdminToken refuses a token under persistence.MinSecretBits, saying what it is and,
// after the estimator's advice, what else to do.
func strongAdminToken(what, token, orElse string) error {
	if err := persistence.CheckSecretBits("", what, strings.TrimPrefix(token, adminTokenPrefix)); err != nil {
		return fmt.Errorf("%w%s", err, orElse)
	}
	return nil
}

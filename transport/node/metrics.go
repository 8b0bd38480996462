package node

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// metricsListener opens the metrics address: the node's configuration (flag or environment)
// first, then the catalog's server.metrics_addr, then catalog.DefaultMetricsAddr (loopback).
// Metrics name routes and volumes an operator keeps to itself (sideListener). Nil: no metrics.
func metricsListener(configured string, server catalog.Server, logger *slog.Logger) (net.Listener, error) {
	return sideListener{name: "metrics", setting: "server.metrics_addr or --metrics-addr", configured: configured,
		inCatalog: server.MetricsAddr, def: catalog.DefaultMetricsAddr, off: catalog.MetricsOff}.open(logger)
}

// metricsServer serves /metrics, /healthz and /readyz on the metrics listener.
func (n *Node) metricsServer() *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", n.API.ServeMetrics)
	mux.HandleFunc("GET /healthz", n.healthz)
	mux.HandleFunc("GET /readyz", n.readyz)
	if n.cfg.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return &http.Server{Handler: recoverPanics(mux, n.API.Recovered), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(n.cfg.Logger.Handler(), slog.LevelWarn)}
}

package node

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"syscall"
	"time"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// metricsListener opens the metrics address: the node's configuration (flag or environment)
// first, then the catalog's server.metrics_addr, then catalog.DefaultMetricsAddr (loopback).
// Metrics never share the API's listener: they name routes and volumes an operator keeps to
// itself, and a separate address is reachable only where the operator puts it.
//
// An address the operator chose must open, or the node does not start. The default address
// is best effort: when it is taken (a second gateway on the same host) the node serves
// without metrics and says so, rather than refusing traffic for them. Nil: no metrics.
func metricsListener(configured string, server catalog.Server, logger *slog.Logger) (net.Listener, error) {
	addr, chosen := configured, configured != ""
	if !chosen {
		addr, chosen = server.MetricsAddr, server.MetricsAddr != ""
	}
	if !chosen {
		addr = catalog.DefaultMetricsAddr
	}
	if addr == catalog.MetricsOff {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	switch {
	case err == nil:
		return ln, nil
	case chosen:
		return nil, fmt.Errorf("metrics address %s: %w (set server.metrics_addr or --metrics-addr to another host:port, or off)", addr, err)
	case errors.Is(err, syscall.EADDRINUSE):
		logger.Warn("metrics not served: the default metrics address is in use; set server.metrics_addr or --metrics-addr", "addr", addr)
		return nil, nil
	}
	return nil, fmt.Errorf("metrics address %s: %w", addr, err)
}

// metricsServer serves /metrics and /healthz on the metrics listener.
func (n *Node) metricsServer() *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", n.API.ServeMetrics)
	mux.HandleFunc("GET /healthz", n.healthz)
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

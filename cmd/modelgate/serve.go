package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node"
)

func serve(args []string) error {
	cfg, err := serveConfig(args)
	if err != nil {
		return err
	}
	limitMemory()
	logger := newLogger()
	cfg.Logger = logger
	sig := notifySignals()
	n, err := node.Start(cfg)
	if err != nil {
		return err
	}
	logger.Info("modelgate serving", "url", n.URL, "admin", served(n.AdminURL), "metrics", served(n.MetricsURL), "catalog", cfg.CatalogPath, "data", cfg.DataDir, "models", len(n.Catalog.Load().Models()))
	return run(n, logger, sig)
}

// notifySignals catches SIGINT, SIGTERM and SIGHUP from now on, before the node starts: the
// node answers /healthz before it has finished starting, and a SIGHUP sent then must reload
// the catalog once it serves, not end the process (Go's default for an uncaught SIGHUP).
func notifySignals() chan os.Signal {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	return sig
}

// serveConfig reads serve's flags, with the environment as their defaults.
func serveConfig(args []string) (node.Config, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	config := fs.String("config", env("MODELGATE_CONFIG", ""), "catalog YAML file")
	data := fs.String("data", env("MODELGATE_DATA", "./data"), "data directory (Pebble store, admin token)")
	addr := fs.String("addr", env("MODELGATE_ADDR", defaultAddr), "listen address")
	metricsAddr := fs.String("metrics-addr", os.Getenv("MODELGATE_METRICS_ADDR"), "metrics listen address, or off (default: the catalog's server.metrics_addr, else 127.0.0.1:9464)")
	adminAddr := fs.String("admin-addr", os.Getenv("MODELGATE_ADMIN_ADDR"), "admin API listen address, or off (default: the catalog's server.admin_addr, else 127.0.0.1:9465)")
	minFree := fs.Int64("min-free-mib", envInt("MODELGATE_MIN_FREE_MIB"), "free space (MiB) below which the store refuses writes and calls get 503 (0: 64; -1: never)")
	ballast := fs.Int64("ballast-mib", envInt("MODELGATE_BALLAST_MIB"), "size (MiB) of the emergency ballast file in the data directory (0: 16; -1: none)")
	cache := fs.Int64("cache-mib", envInt("MODELGATE_CACHE_MIB"), "the store's block cache (MiB; 0: 2, a cluster node 64)")
	memtable := fs.Int64("memtable-mib", envInt("MODELGATE_MEMTABLE_MIB"), "the store's memtable, of which it keeps up to two (MiB; 0: 1, a cluster node 16)")
	tlsFiles := tlsFlags(fs)
	if err := fs.Parse(args); err != nil {
		return node.Config{}, err
	}
	if *config == "" {
		return node.Config{}, errors.New("serve needs --config FILE (or MODELGATE_CONFIG)")
	}
	cfg := node.Config{DataDir: *data, CatalogPath: *config, Addr: *addr, MetricsAddr: *metricsAddr, AdminAddr: *adminAddr, Pprof: pprofServed(),
		AdminToken: os.Getenv("MODELGATE_ADMIN_TOKEN"),
		Store: persistence.Options{MinFreeBytes: mib(*minFree), BallastBytes: mib(*ballast),
			CacheBytes: mib(*cache), MemTableBytes: mib(*memtable)}}
	var err error
	if cfg.TLS, err = tlsFiles(); err != nil {
		return node.Config{}, err
	}
	// A data directory with a cluster file (modelgate cluster init or join) is a cluster
	// node's; without one the node is single and starts no engine.
	f, ok, err := membership.Load(*data)
	if err != nil {
		return node.Config{}, err
	}
	if ok {
		cfg.Cluster = &f
	}
	return cfg, nil
}

// run serves until SIGINT/SIGTERM (on sig, notifySignals) or the end of a drain, reloading
// the TLS certificate and the catalog on SIGHUP.
func run(n *node.Node, logger *slog.Logger, sig chan os.Signal) error {
	// What starting used (the catalog's parse, the store's index checks, the demo login's
	// argon2 hash: 19 MiB) is garbage now; without this the heap would stay at that peak
	// until the next GC, which an idle node runs only every two minutes.
	debug.FreeOSMemory()
	for {
		var s os.Signal
		select {
		case s = <-sig:
		case <-n.Drained():
			logger.Info("drained: finishing the calls in flight, then exiting")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return n.Close(ctx)
		}
		if s == syscall.SIGHUP {
			if err := n.Reload(); err != nil {
				logger.Error("catalog reload failed; keeping the current catalog", "err", err)
			} else {
				logger.Info("catalog reloaded", "models", len(n.Catalog.Load().Models()))
			}
			continue
		}
		logger.Info("shutting down", "signal", s.String())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return n.Close(ctx)
	}
}

// served is where the node serves its metrics or admin API (url), for the start-up lines.
func served(url string) string {
	if url == "" {
		return "not served"
	}
	return url
}

func newLogger() *slog.Logger {
	var level slog.Level
	switch strings.ToLower(os.Getenv("MODELGATE_LOG_LEVEL")) {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	l := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(l)
	return l
}

// envInt reads an integer setting from the environment (0 when unset or not a number).
func envInt(name string) int64 {
	n, _ := strconv.ParseInt(os.Getenv(name), 10, 64)
	return n
}

// mib turns a MiB setting into bytes, keeping 0 (the default) and negatives (off) as they are.
func mib(n int64) int64 {
	if n <= 0 {
		return n
	}
	return n << 20
}

// Command modelgate runs the gateway (serve), the self-contained demo (demo), and the
// operator's admin commands (admin).
package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/modelgate/modelgate/internal/memlimit"
)

const usage = `modelgate: a unified model gateway

Usage:
  modelgate serve --config FILE [--data DIR] [--addr HOST:PORT] [--admin-addr HOST:PORT|off]
                  [--metrics-addr HOST:PORT|off] [--min-free-mib N] [--ballast-mib N]
                  [--cache-mib N] [--memtable-mib N]
  modelgate demo  [--data DIR] [--addr HOST:PORT] [--admin-addr HOST:PORT|off]
  modelgate admin <accounts|keys|usage|routes> ...   (modelgate admin help)
  modelgate cluster <certs|init|join|status|remove|drain|demo> ...   (modelgate cluster help)

Environment: MODELGATE_CONFIG, MODELGATE_DATA (default ./data), MODELGATE_ADDR (default
127.0.0.1:8080), MODELGATE_ADMIN_ADDR (the admin API's own listener, host:port or off;
default the catalog's server.admin_addr, else 127.0.0.1:9465; admin commands call it there
unless MODELGATE_ADMIN_URL or --admin-url says otherwise), MODELGATE_METRICS_ADDR (host:port
or off; default the catalog's server.metrics_addr, else 127.0.0.1:9464),
MODELGATE_MIN_FREE_MIB and MODELGATE_BALLAST_MIB (the full-disk guard: default 64 and 16;
-1 turns either off), MODELGATE_CACHE_MIB and MODELGATE_MEMTABLE_MIB (the store's block
cache and memtable: default 2 and 1), MODELGATE_ADMIN_TOKEN, MODELGATE_LOG_LEVEL
(debug|info|warn|error), MODELGATE_PPROF (on: Go's profiles at /debug/pprof/ on the metrics
address). Go's own GOGC and GOMEMLIMIT tune the heap: serve and demo set a soft limit of
28 MiB unless GOMEMLIMIT is set (off: none), raised as the live heap nears it (README,
"Memory").
`

// defaultAddr is where serve and demo listen by default.
const defaultAddr = "127.0.0.1:8080"

func main() {
	// The heap profile's samples cost memory only /debug/pprof reads (a 1.4 MiB table of
	// stacks, a record per sampled stack): none are taken unless it is served.
	if !pprofServed() {
		runtime.MemProfileRate = 0
	}
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "demo":
		err = demo(os.Args[2:])
	case "admin":
		err = adminCmd(os.Args[2:], os.Stdout)
	case "cluster":
		err = clusterCmd(os.Args[2:], os.Stdout)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "modelgate: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "modelgate:", err)
		os.Exit(1)
	}
}

// limitMemory gives Go's memory the gateway's default soft limit unless GOMEMLIMIT sets one
// (internal/memlimit): for serve and demo, from their start, whose garbage it bounds too.
func limitMemory() {
	if !memlimit.FromEnvironment() {
		memlimit.Start(memlimit.Default)
	}
}

// pprofServed reports whether Go's profiles are served (MODELGATE_PPROF=on).
func pprofServed() bool { return os.Getenv("MODELGATE_PPROF") == "on" }

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

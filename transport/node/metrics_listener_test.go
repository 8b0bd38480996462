package node

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/api"
)

// TestItem14MetricsAddressIsChosenAndNeverShared is issue #12 item 14, the address: the
// node's configuration wins over the catalog's server.metrics_addr, which wins over the
// loopback default; "off" serves none; a chosen address that cannot open stops the start,
// the default being taken does not (the node runs without metrics and says so).
func TestItem14MetricsAddressIsChosenAndNeverShared(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	// Hold the default address (if another process holds it, it is taken all the same).
	if def, err := net.Listen("tcp", catalog.DefaultMetricsAddr); err == nil {
		defer def.Close()
	} else if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		configured string
		inCatalog  string
		listens    bool   // a listener on loopback
		err        string // start refused with this
		warn       string // a log line with this
	}{
		{name: "configured", configured: "127.0.0.1:0", inCatalog: catalog.MetricsOff, listens: true},
		{name: "configured off wins over the catalog", configured: "off", inCatalog: "127.0.0.1:0"},
		{name: "from the catalog", inCatalog: "127.0.0.1:0", listens: true},
		{name: "off in the catalog", inCatalog: catalog.MetricsOff},
		{name: "configured address taken", configured: taken.Addr().String(),
			err: "metrics address " + taken.Addr().String() + ": listen tcp " + taken.Addr().String() + ": bind: address already in use (set server.metrics_addr or --metrics-addr to another host:port, or off)"},
		{name: "catalog address taken", inCatalog: taken.Addr().String(), err: "(set server.metrics_addr or --metrics-addr to another host:port, or off)"},
		{name: "default address taken", warn: `msg="metrics not served: the default metrics address is in use; set server.metrics_addr or --metrics-addr" addr=127.0.0.1:9464`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs strings.Builder
			ln, err := metricsListener(c.configured, catalog.Server{MetricsAddr: c.inCatalog}, slog.New(slog.NewTextHandler(&logs, nil)))
			if ln != nil {
				defer ln.Close()
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := ln != nil; got != c.listens {
				t.Fatalf("listening %v, want %v", got, c.listens)
			}
			if ln != nil && !ln.Addr().(*net.TCPAddr).IP.IsLoopback() {
				t.Fatalf("listening on %s", ln.Addr())
			}
			if c.warn == "" && logs.Len() > 0 || !strings.Contains(logs.String(), c.warn) {
				t.Fatalf("log %q, want %q", logs.String(), c.warn)
			}
		})
	}
}

// TestProfilesAreServedOnlyWhenAsked: Go's profiles are on the metrics listener when the
// operator sets Pprof (MODELGATE_PPROF=on), and absent otherwise.
func TestProfilesAreServedOnlyWhenAsked(t *testing.T) {
	for _, on := range []bool{false, true} {
		n := &Node{cfg: Config{Pprof: on, Logger: slog.New(slog.DiscardHandler)}, API: &api.Server{}}
		rec := httptest.NewRecorder()
		n.metricsServer().Handler.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/pprof/cmdline", nil))
		want := http.StatusNotFound
		if on {
			want = http.StatusOK
		}
		if rec.Code != want {
			t.Fatalf("pprof %v: status %d, want %d", on, rec.Code, want)
		}
	}
}

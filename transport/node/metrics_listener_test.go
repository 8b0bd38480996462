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

// TestSideListenerAddressesAreChosen: for the metrics listener and the admin plane's alike,
// the node's configuration (flag or environment) wins over the catalog's address, which wins
// over the loopback default; "off" serves none; a chosen address that cannot open stops the
// start, the default being taken does not (the node runs without it and says so).
func TestSideListenerAddressesAreChosen(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	listeners := []struct {
		name, setting, def string
		open               func(configured, inCatalog string, logger *slog.Logger) (net.Listener, error)
	}{
		{"metrics", "server.metrics_addr or --metrics-addr", catalog.DefaultMetricsAddr,
			func(configured, inCatalog string, logger *slog.Logger) (net.Listener, error) {
				return metricsListener(configured, catalog.Server{MetricsAddr: inCatalog}, logger)
			}},
		{"admin API", "server.admin_addr or --admin-addr", catalog.DefaultAdminAddr,
			func(configured, inCatalog string, logger *slog.Logger) (net.Listener, error) {
				p, err := openAdminPlane(Config{AdminAddr: configured, Logger: logger}, catalog.Server{Edge: catalog.Edge{AdminAddr: inCatalog}})
				return p.ln, err
			}},
	}
	for _, l := range listeners {
		// Hold the default address (if another process holds it, it is taken all the same).
		if def, err := net.Listen("tcp", l.def); err == nil {
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
			{name: "configured", configured: "127.0.0.1:0", inCatalog: "off", listens: true},
			{name: "configured off wins over the catalog", configured: "off", inCatalog: "127.0.0.1:0"},
			{name: "from the catalog", inCatalog: "127.0.0.1:0", listens: true},
			{name: "off in the catalog", inCatalog: "off"},
			{name: "configured address taken", configured: taken.Addr().String(),
				err: l.name + " address " + taken.Addr().String() + ": listen tcp " + taken.Addr().String() + ": bind: address already in use (set " + l.setting + " to another host:port, or off)"},
			{name: "catalog address taken", inCatalog: taken.Addr().String(), err: "(set " + l.setting + " to another host:port, or off)"},
			{name: "default address taken", warn: `msg="` + l.name + ` not served: the default ` + l.name + ` address is in use; set ` + l.setting + `" addr=` + l.def},
		}
		for _, c := range cases {
			t.Run(l.name+"/"+c.name, func(t *testing.T) {
				var logs strings.Builder
				ln, err := l.open(c.configured, c.inCatalog, slog.New(slog.NewTextHandler(&logs, nil)))
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

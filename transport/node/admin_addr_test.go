package node

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/cluster/certs"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// TestAdminAddressIsChosen: the node's configuration (--admin-addr, MODELGATE_ADMIN_ADDR)
// wins over the catalog's server.admin_addr, which wins over the loopback default; off
// serves none; a chosen address that cannot open stops the start, the default being taken
// does not (the node runs without an admin plane and says so).
func TestAdminAddressIsChosen(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	// Hold the default address (if another process holds it, it is taken all the same).
	if def, err := net.Listen("tcp", catalog.DefaultAdminAddr); err == nil {
		defer def.Close()
	} else if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		configured string
		inCatalog  string
		listens    bool
		err        string
		warn       string
	}{
		{name: "configured", configured: "127.0.0.1:0", inCatalog: catalog.AdminOff, listens: true},
		{name: "configured off wins over the catalog", configured: "off", inCatalog: "127.0.0.1:0"},
		{name: "from the catalog", inCatalog: "127.0.0.1:0", listens: true},
		{name: "off in the catalog", inCatalog: catalog.AdminOff},
		{name: "configured address taken", configured: taken.Addr().String(),
			err: "admin API address " + taken.Addr().String() + ": listen tcp " + taken.Addr().String() + ": bind: address already in use (set server.admin_addr or --admin-addr to another host:port, or off)"},
		{name: "catalog address taken", inCatalog: taken.Addr().String(), err: "(set server.admin_addr or --admin-addr to another host:port, or off)"},
		{name: "default address taken", warn: `msg="admin API not served: the default admin API address is in use; set server.admin_addr or --admin-addr" addr=127.0.0.1:9465`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs strings.Builder
			cfg := Config{AdminAddr: c.configured, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			p, err := openAdminPlane(cfg, catalog.Server{Edge: catalog.Edge{AdminAddr: c.inCatalog}})
			if p != nil && p.ln != nil {
				defer p.ln.Close()
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
			if got := p.ln != nil; got != c.listens {
				t.Fatalf("listening %v, want %v", got, c.listens)
			}
			if p.ln != nil && !p.ln.Addr().(*net.TCPAddr).IP.IsLoopback() {
				t.Fatalf("listening on %s", p.ln.Addr())
			}
			if c.warn == "" && logs.Len() > 0 || !strings.Contains(logs.String(), c.warn) {
				t.Fatalf("log %q, want %q", logs.String(), c.warn)
			}
		})
	}
}

// TestAdminTLSIsTheCatalogsFiles: the admin listener's TLS comes from server.admin_tls's
// files, or server.tls's for "same", through the loader the node is given; none set is plain
// HTTP; a catalog asking for TLS without a loader, or whose files do not load, is refused.
func TestAdminTLSIsTheCatalogsFiles(t *testing.T) {
	own := catalog.TLSFiles{CertFile: "/etc/admin.crt", KeyFile: "/etc/admin.key"}
	public := catalog.TLSFiles{CertFile: "/etc/tls.crt", KeyFile: "/etc/tls.key"}
	var loaded []catalog.TLSFiles
	load := func(f catalog.TLSFiles) (*tls.Config, error) {
		loaded = append(loaded, f)
		if f.CertFile == "/etc/broken.crt" {
			return nil, errors.New("open /etc/broken.crt: no such file or directory")
		}
		return &tls.Config{ServerName: f.CertFile}, nil
	}
	cases := []struct {
		name   string
		edge   catalog.Edge
		load   func(catalog.TLSFiles) (*tls.Config, error)
		loaded []catalog.TLSFiles // what the loader was asked for
		err    string
	}{
		{name: "none: plain HTTP", edge: catalog.Edge{TLS: public}, load: load},
		{name: "its own files", edge: catalog.Edge{TLS: public, AdminTLS: own}, load: load, loaded: []catalog.TLSFiles{own}},
		{name: "same as the public listener's", edge: catalog.Edge{TLS: public, AdminTLSSame: true}, load: load, loaded: []catalog.TLSFiles{public}},
		{name: "files that do not load", edge: catalog.Edge{AdminTLS: catalog.TLSFiles{CertFile: "/etc/broken.crt", KeyFile: "/etc/broken.key"}}, load: load,
			loaded: []catalog.TLSFiles{{CertFile: "/etc/broken.crt", KeyFile: "/etc/broken.key"}}, err: "server.admin_tls\nopen /etc/broken.crt: no such file or directory"},
		{name: "no loader: refused, never plain text", edge: catalog.Edge{AdminTLS: own},
			err: "server.admin_tls: this node has no certificate loader (node.Config.AdminTLSConfig); the admin API is not served in plain text when the catalog asks for TLS"},
		{name: "no loader and no TLS asked: plain HTTP", edge: catalog.Edge{TLS: public}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loaded = nil
			tc, err := adminTLS(catalog.Server{Edge: c.edge}, c.load)
			if c.err != "" {
				if err == nil || err.Error() != c.err || tc != nil {
					t.Fatalf("%v, %v; want the error %q", tc, err, c.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if len(loaded) != len(c.loaded) || len(loaded) == 1 && loaded[0] != c.loaded[0] {
				t.Fatalf("loaded %v, want %v", loaded, c.loaded)
			}
			if c.err == "" && (tc != nil) != (len(c.loaded) == 1) || tc != nil && tc.ServerName != c.loaded[0].CertFile {
				t.Fatalf("config %v for %v", tc, c.loaded)
			}
		})
	}
}

// TestAdminListenerServesHTTPS: a node whose catalog sets admin_tls serves the admin API
// over TLS with that certificate (AdminURL says https), its public port staying plain HTTP.
func TestAdminListenerServesHTTPS(t *testing.T) {
	dir := t.TempDir()
	certDir := filepath.Join(dir, "certs")
	if _, err := certs.Generate(certDir, []certs.NodeSpec{{Name: "admin", Hosts: []string{"127.0.0.1"}}}, certs.Options{}); err != nil {
		t.Fatal(err)
	}
	cat := filepath.Join(dir, "catalog.yaml")
	yaml := "server:\n  admin_tls: {cert_file: " + filepath.Join(certDir, certs.NodeCertFile("admin")) + ", key_file: " +
		filepath.Join(certDir, certs.NodeKeyFile("admin")) + "}\n" +
		"models: [{id: m, kind: chat, routes: [{id: r, format: chat, base_url: 'http://127.0.0.1:1/v1', credential_env: NODETEST_SIM_KEY}]}]\n"
	if err := os.WriteFile(cat, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NODETEST_SIM_KEY", "unused")
	load := func(f catalog.TLSFiles) (*tls.Config, error) {
		pair, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, err
	}
	n, err := Start(Config{DataDir: filepath.Join(dir, "data"), CatalogPath: cat, Addr: "127.0.0.1:0", MetricsAddr: "off", AdminAddr: "127.0.0.1:0",
		AdminToken: "tls-admin-token", AdminTLSConfig: load, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		n.Close(ctx)
	}()
	if !strings.HasPrefix(n.AdminURL, "https://127.0.0.1:") || !strings.HasPrefix(n.URL, "http://") {
		t.Fatalf("admin at %q, the API at %q", n.AdminURL, n.URL)
	}
	ca, err := os.ReadFile(filepath.Join(certDir, certs.CACertFile))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}}
	req, _ := http.NewRequest(http.MethodGet, n.AdminURL+"/admin/v1/routes", nil)
	req.Header.Set("Authorization", "Bearer tls-admin-token")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil || resp.ProtoMajor != 2 {
		t.Fatalf("%d over %s, TLS %v", resp.StatusCode, resp.Proto, resp.TLS != nil)
	}
	// Plain HTTP gets Go's TLS server's own 400, never the admin API.
	plain, err := http.Get("http" + strings.TrimPrefix(n.AdminURL, "https") + "/admin/v1/routes")
	if err != nil {
		t.Fatal(err)
	}
	plain.Body.Close()
	if plain.StatusCode != http.StatusBadRequest {
		t.Fatalf("plain HTTP on the TLS admin listener: %d", plain.StatusCode)
	}
}

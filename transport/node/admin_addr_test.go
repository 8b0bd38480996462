package node

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clustercerts "github.com/modelgate/modelgate/cluster/certs"
	"github.com/modelgate/modelgate/persistence/catalog"
)

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
	if _, err := clustercerts.Generate(certDir, []clustercerts.NodeSpec{{Name: "admin", Hosts: []string{"127.0.0.1"}}}, clustercerts.Options{}); err != nil {
		t.Fatal(err)
	}
	cat := filepath.Join(dir, "catalog.yaml")
	yaml := "server:\n  admin_tls: {cert_file: " + filepath.Join(certDir, clustercerts.NodeCertFile("admin")) + ", key_file: " +
		filepath.Join(certDir, clustercerts.NodeKeyFile("admin")) + "}\n" +
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
		AdminToken: "mg-admin-tls-Zq4vN8rTb2KxW7pLd3Hs9Fy6", AdminTLSConfig: load, Logger: slog.New(slog.DiscardHandler)})
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
	ca, err := os.ReadFile(filepath.Join(certDir, clustercerts.CACertFile))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}}
	req, _ := http.NewRequest(http.MethodGet, n.AdminURL+"/admin/v1/routes", nil)
	req.Header.Set("Authorization", "Bearer mg-admin-tls-Zq4vN8rTb2KxW7pLd3Hs9Fy6")
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

package main

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// serve's --tls-cert and --tls-key, with MODELGATE_TLS_CERT and MODELGATE_TLS_KEY as their
// defaults: a flag wins over the environment (and both over the catalog's server.tls, which
// the node reads when they are empty); one without the other is refused.
func TestServeConfigReadsTheTLSFiles(t *testing.T) {
	cases := []struct {
		name string
		env  [2]string
		args []string
		want catalog.TLSFiles
		err  string
	}{
		{name: "none: the catalog's"},
		{name: "flags", args: []string{"--tls-cert", "/etc/c.pem", "--tls-key", "/etc/k.pem"}, want: catalog.TLSFiles{CertFile: "/etc/c.pem", KeyFile: "/etc/k.pem"}},
		{name: "environment", env: [2]string{"e.crt", "e.key"}, want: catalog.TLSFiles{CertFile: "e.crt", KeyFile: "e.key"}},
		{name: "flags win over the environment", env: [2]string{"e.crt", "e.key"}, args: []string{"--tls-cert", "f.crt", "--tls-key", "f.key"},
			want: catalog.TLSFiles{CertFile: "f.crt", KeyFile: "f.key"}},
		{name: "a certificate without a key", args: []string{"--tls-cert", "f.crt"}, err: "--tls-cert and --tls-key (MODELGATE_TLS_CERT, MODELGATE_TLS_KEY) go together"},
		{name: "a key without a certificate", env: [2]string{"", "e.key"}, err: "go together"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("MODELGATE_TLS_CERT", c.env[0])
			t.Setenv("MODELGATE_TLS_KEY", c.env[1])
			cfg, err := serveConfig(append([]string{"--config", "c.yaml", "--data", t.TempDir()}, c.args...))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || cfg.TLS != c.want {
				t.Fatalf("TLS %+v (%v), want %+v", cfg.TLS, err, c.want)
			}
		})
	}
}

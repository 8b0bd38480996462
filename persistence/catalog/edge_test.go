package catalog

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The edge settings: their defaults, each one read, and each bad value named.
func TestEdgeSettings(t *testing.T) {
	base := "models:\n  - id: m1\n    kind: chat\n    routes: [{id: r1, format: chat, base_url: 'http://x'}]\n"
	defaults := Edge{BodyTimeout: DefaultBodyTimeout, BodyMinRate: DefaultBodyMinRate, MaxConnsPerIP: DefaultMaxConnsPerIP,
		AuthFailuresPerMinute: DefaultAuthFailuresPerMinute, AuthPenalty: DefaultAuthPenalty}
	with := func(f func(e *Edge)) Edge { e := defaults; f(&e); return e }
	for _, c := range []struct {
		name, server, err string
		want              Edge
	}{
		{name: "absent: defaults", want: defaults},
		{name: "tls and hsts", server: "tls: {cert_file: c.pem, key_file: k.pem}, hsts: 8760h",
			want: with(func(e *Edge) { e.TLS = TLSFiles{"c.pem", "k.pem"}; e.HSTS = 8760 * time.Hour })},
		{name: "admin plane with the same tls", server: "tls: {cert_file: c.pem, key_file: k.pem}, admin_addr: '0.0.0.0:9465', admin_tls: same",
			want: with(func(e *Edge) { e.TLS = TLSFiles{"c.pem", "k.pem"}; e.AdminAddr = "0.0.0.0:9465"; e.AdminTLSSame = true })},
		{name: "admin plane with its own tls", server: "admin_tls: {cert_file: a.pem, key_file: ak.pem}",
			want: with(func(e *Edge) { e.AdminTLS = TLSFiles{"a.pem", "ak.pem"} })},
		{name: "admin plane off", server: "admin_addr: 'off'", want: with(func(e *Edge) { e.AdminAddr = AdminOff })},
		{name: "proxies and fetch allow", server: "trusted_proxies: [10.0.0.0/8, '::1', 192.168.1.7], fetch_allow: [10.1.2.0/24]",
			want: with(func(e *Edge) {
				e.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("192.168.1.7/32")}
				e.FetchAllow = []netip.Prefix{netip.MustParsePrefix("10.1.2.0/24")}
			})},
		{name: "client bounds", server: "body_timeout: 10s, body_min_rate: 0, max_body_bytes_in_flight: 268435456, max_conns_per_ip: 8, auth_failures_per_minute: 5, auth_penalty: 5m",
			want: with(func(e *Edge) {
				e.BodyTimeout, e.BodyMinRate, e.MaxBodyBytesInFlight, e.MaxConnsPerIP = 10*time.Second, 0, 256<<20, 8
				e.AuthFailuresPerMinute, e.AuthPenalty = 5, 5*time.Minute
			})},
		{name: "tls without a key", server: "tls: {cert_file: c.pem}", err: "server.tls: needs both cert_file and key_file"},
		{name: "tls as same", server: "tls: same", err: `server.tls: "same" is for admin_tls`},
		{name: "admin_tls same without tls", server: "admin_tls: same", err: `server.admin_tls: "same" needs server.tls`},
		{name: "admin_tls a word", server: "admin_tls: yes", err: `"yes": a TLS setting is {cert_file, key_file}`},
		{name: "hsts without tls (the certificate may come from a flag)", server: "hsts: 1h",
			want: with(func(e *Edge) { e.HSTS = time.Hour })},
		{name: "bad hsts", server: "hsts: a year", err: `server.hsts: "a year" is not a duration`},
		{name: "bad proxy", server: "trusted_proxies: [10.0.0.0/33]", err: `server.trusted_proxies[0]: "10.0.0.0/33" is not a CIDR`},
		{name: "bad admin address", server: "admin_addr: localhost", err: `server.admin_addr: "localhost" must be host:port`},
		{name: "no connections", server: "max_conns_per_ip: 0", err: "server.max_conns_per_ip: 0 must be at least 1"},
		{name: "a call cut at once", server: "max_call_duration: 500ms", err: "server.max_call_duration: must be at least 1s"},
		{name: "negative rate", server: "body_min_rate: -1", err: "server.body_min_rate: must be 0"},
		{name: "in-flight cap below one body", server: "max_body_bytes: 65536, max_body_bytes_in_flight: 65535",
			err: "server.max_body_bytes_in_flight: 65535 must be at least max_body_bytes (65536), or 0"},
		{name: "in-flight cap of one body", server: "max_body_bytes: 65536, max_body_bytes_in_flight: 65536",
			want: with(func(e *Edge) { e.MaxBodyBytesInFlight = 65536 })},
		{name: "unknown field", server: "tls_cert: x", err: "tls_cert"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := base
			if c.server != "" {
				doc = "server: {" + c.server + "}\n" + base
			}
			cat, err := Parse("f.yaml", []byte(doc))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error = %v\nwant it to contain %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cat.Server.Edge, c.want) {
				t.Fatalf("edge\n got %+v\nwant %+v", cat.Server.Edge, c.want)
			}
		})
	}
}

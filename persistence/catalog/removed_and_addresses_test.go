package catalog

import (
	"slices"
	"testing"
)

// The removed: list, server.public_url and server.metrics_addr as the file states them, and
// every mistake named with its field.
func TestRemovedPublicURLMetricsAddrAndCORS(t *testing.T) {
	base := "models:\n  - id: m1\n    kind: chat\n    aliases: [m1-latest]\n    routes: [{id: r1, format: chat, base_url: 'http://x'}]\n"
	cases := []struct {
		name      string
		yaml      string
		err       string // "" = loads
		publicURL string
		metrics   string
		cors      []string          // server.cors_origins as loaded; nil = every origin ("*")
		removed   map[string]string // id -> replacement, each checked when the file loads
	}{
		{name: "nothing said", yaml: base},
		{name: "cors: none", yaml: "server: {cors_origins: []}\n" + base, cors: []string{}},
		{name: "cors: origins lower-cased, trailing slash dropped", yaml: "server: {cors_origins: ['https://App.Example.com/', 'http://localhost:5173']}\n" + base,
			cors: []string{"https://app.example.com", "http://localhost:5173"}},
		{name: "cors: a path", yaml: "server: {cors_origins: ['https://app.example.com/x']}\n" + base,
			err: `f.yaml: server.cors_origins[0]: "https://app.example.com/x" must be "*" or an origin`},
		{name: "cors: no scheme", yaml: "server: {cors_origins: ['*', 'app.example.com']}\n" + base, err: "server.cors_origins[1]:"},
		{name: "cors: a wildcard host", yaml: "server: {cors_origins: ['https://*.example.com']}\n" + base, err: "server.cors_origins[0]:"},
		{name: "public url trimmed", yaml: "server: {public_url: 'https://llm.example.com/'}\n" + base, publicURL: "https://llm.example.com"},
		{name: "public url with a path prefix", yaml: "server: {public_url: 'http://10.0.0.5:8080/gw/'}\n" + base, publicURL: "http://10.0.0.5:8080/gw"},
		{name: "metrics address", yaml: "server: {metrics_addr: '0.0.0.0:9100'}\n" + base, metrics: "0.0.0.0:9100"},
		{name: "metrics off", yaml: "server: {metrics_addr: 'off'}\n" + base, metrics: "off"},
		{name: "removed with and without replacement", yaml: base + "removed:\n  - {id: m0, replacement: m1-latest}\n  - {id: gone}\n",
			removed: map[string]string{"m0": "m1-latest", "gone": ""}},
		{name: "public url without scheme", yaml: "server: {public_url: 'llm.example.com'}\n" + base, err: "f.yaml: server.public_url: \"llm.example.com\" must be the gateway's address as clients reach it"},
		{name: "public url with a query", yaml: "server: {public_url: 'https://x.example?a=1'}\n" + base, err: "server.public_url: \"https://x.example?a=1\" must be"},
		{name: "public url ftp", yaml: "server: {public_url: 'ftp://x.example'}\n" + base, err: "server.public_url"},
		{name: "metrics address without port", yaml: "server: {metrics_addr: 'localhost'}\n" + base, err: "f.yaml: server.metrics_addr: \"localhost\" must be host:port (such as 127.0.0.1:9464) or off"},
		{name: "metrics port out of range", yaml: "server: {metrics_addr: ':70000'}\n" + base, err: "server.metrics_addr: \":70000\" must be host:port"},
		{name: "removed id still served", yaml: base + "removed: [{id: m1-latest, replacement: m1}]\n", err: "f.yaml: removed[0].id: \"m1-latest\" is still a model or alias of the catalog"},
		{name: "removed twice", yaml: base + "removed: [{id: old}, {id: old}]\n", err: "removed[1].id: \"old\" is listed twice"},
		{name: "replacement unknown", yaml: base + "removed: [{id: old, replacement: nope}]\n", err: "f.yaml: removed[0].replacement: model \"nope\" is not in the catalog"},
		{name: "removed id invalid", yaml: base + "removed: [{id: 'a b'}]\n", err: "removed[0].id: \"a b\" must be 1-128 letters"},
		{name: "removed unknown field", yaml: base + "removed: [{id: old, successor: m1}]\n", err: `removed[0]: unknown field "successor"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := parseCase(t, c.yaml, c.err)
			if cat == nil {
				return
			}
			cors := c.cors
			if cors == nil {
				cors = []string{AnyOrigin}
			}
			if cat.Server.PublicURL != c.publicURL || cat.Server.MetricsAddr != c.metrics || !slices.Equal(cat.Server.CORSOrigins, cors) {
				t.Fatalf("public_url %q metrics_addr %q cors_origins %q, want %q %q %q", cat.Server.PublicURL, cat.Server.MetricsAddr, cat.Server.CORSOrigins, c.publicURL, c.metrics, cors)
			}
			for id, repl := range c.removed {
				if got, ok := cat.Removed(id); !ok || got != repl {
					t.Errorf("Removed(%q) = %q, %v; want %q", id, got, ok, repl)
				}
			}
			if _, ok := cat.Removed("m1"); ok {
				t.Error("a served model reads as removed")
			}
		})
	}
}

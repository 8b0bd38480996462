package catalog

import (
	"reflect"
	"strings"
	"testing"
)

// server.cors_origins: absent is every origin, [] none, and each entry "*" or an origin.
func TestCORSOrigins(t *testing.T) {
	base := "models:\n  - id: m1\n    kind: chat\n    routes: [{id: r1, format: chat, base_url: 'http://x'}]\n"
	cases := []struct {
		name, yaml string
		want       []string
		err        string
	}{
		{name: "absent: every origin", yaml: base, want: []string{"*"}},
		{name: "empty: none", yaml: "server: {cors_origins: []}\n" + base, want: []string{}},
		{name: "origins lower-cased, trailing slash dropped", yaml: "server: {cors_origins: ['https://App.Example.com/', 'http://localhost:5173']}\n" + base,
			want: []string{"https://app.example.com", "http://localhost:5173"}},
		{name: "star among others", yaml: "server: {cors_origins: ['*']}\n" + base, want: []string{"*"}},
		{name: "a path", yaml: "server: {cors_origins: ['https://app.example.com/x']}\n" + base,
			err: `f.yaml: server.cors_origins[0]: "https://app.example.com/x" must be "*" or an origin`},
		{name: "no scheme", yaml: "server: {cors_origins: ['*', 'app.example.com']}\n" + base, err: "server.cors_origins[1]:"},
		{name: "a wildcard host", yaml: "server: {cors_origins: ['https://*.example.com']}\n" + base, err: "server.cors_origins[0]:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat, err := Parse("f.yaml", []byte(c.yaml))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error = %v\nwant it to contain %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cat.Server.CORSOrigins, c.want) {
				t.Fatalf("cors_origins %q, want %q", cat.Server.CORSOrigins, c.want)
			}
		})
	}
}

package node_test

import (
	"net/http"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// The dashboard is served by the node under /dashboard/ with its security headers, and
// /dashboard redirects there.
func TestTheNodeServesTheDashboard(t *testing.T) {
	n := nodetest.Start(t, nodetest.DefaultCatalog, nodetest.Options{}).Node
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	cases := []struct {
		path     string
		status   int
		location string
	}{
		{"/dashboard/", http.StatusOK, ""},
		{"/dashboard/login", http.StatusOK, ""},
		{"/dashboard", http.StatusMovedPermanently, "/dashboard/"},
	}
	for _, c := range cases {
		resp, err := client.Get(n.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status || resp.Header.Get("Location") != c.location {
			t.Errorf("%s: %d %q, want %d %q", c.path, resp.StatusCode, resp.Header.Get("Location"), c.status, c.location)
		}
		if c.status == http.StatusOK && resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: X-Frame-Options %q", c.path, resp.Header.Get("X-Frame-Options"))
		}
	}
}

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// checkDemoLinks: the demo's catalog sets server.public_url to the address it prints, so an
// image's url starts with it whatever Host the client sends.
func checkDemoLinks(t *testing.T, run *demoRun) {
	t.Helper()
	if got := run.n.Catalog.Load().Server.PublicURL; got != run.n.URL {
		t.Fatalf("the demo's public_url %q, want its address %s", got, run.n.URL)
	}
	req, _ := http.NewRequest(http.MethodPost, run.creds.BaseURL+"/images/generations", strings.NewReader(`{"model":"sim-image","prompt":"a fox"}`))
	req.Host = "evil.example"
	req.Header.Set("Authorization", "Bearer "+run.creds.APIKey)
	req.Header.Set("X-Forwarded-Host", "evil.example")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct{ Data []struct{ URL string } }
	if json.Unmarshal(raw, &out) != nil || resp.StatusCode != 200 || len(out.Data) != 1 || !strings.HasPrefix(out.Data[0].URL, run.n.URL+"/assets/gen/") {
		t.Fatalf("an image asked for with Host: evil.example: %d %s; want its url under %s/assets/gen/", resp.StatusCode, raw, run.n.URL)
	}
}

//go:build faults

package main

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/fetch/fetchtest"
)

// fetchCatalog: per scenario, an image model whose only route links inside (fx-<name>-only)
// and one that has a good standby route as well (fx-<name>); 127.0.0.2 is admitted on purpose
// (server.fetch_allow), standing for a host of the internet that the link names first.
func fetchCatalog(scenarios []string) string {
	cat := `server:
  connect_timeout: 5s
  first_byte_timeout: 10s
  fetch_allow: [` + fetchtest.PublicPrefix + `]
models:
`
	route := func(id, simRoute string, weight int) string {
		return fmt.Sprintf("      - {id: %s, format: chat, base_url: \"{{SIM}}/r/%s/v1\", upstream_model: sim-image, credential_env: %s, weight: %d}\n",
			id, simRoute, ktSimKeyEnv, weight)
	}
	for _, s := range scenarios {
		cat += "  - id: fx-" + s + "-only\n    kind: image\n    routes:\n" + route("only-"+s, "link-"+s, 1)
		cat += "  - id: fx-" + s + "\n    kind: image\n    routes:\n" + route("bad-"+s, "link-"+s, 1) + route("good-"+s, "good", 0)
	}
	return cat + `plans:
  - {name: fx, window_requests: 1000, weekly_requests: 10000, burst_rpm: 1000, allow_automated: true, image_daily_limit: 100}
`
}

// TestFaultGatewayDownloadsRefuseInternalAddresses: a real gateway process whose image routes
// answer with a link on 127.0.0.2 that redirects to a loopback server (by address, as
// "localhost" and as the machine's name through the system resolver) or to the cloud
// metadata address. No connection reaches the loopback server; the metadata address is
// refused before its connection is attempted (the gateway's log says so); a model with no
// other route answers 502 and nothing is counted, charged or stored; one with a standby route
// fails over to it and serves its image, counted once.
func TestFaultGatewayDownloadsRefuseInternalAddresses(t *testing.T) {
	internal := fetchtest.StartInternal(t)
	port := internal.Port
	targets := map[string]string{
		"loopback":  "http://127.0.0.1:" + port + "/admin",
		"localhost": "http://localhost:" + port + "/admin",
		"metadata":  "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
	}
	if name, err := os.Hostname(); err == nil && resolvesToLoopback(name) {
		targets["hostname"] = "http://" + name + ":" + port + "/admin"
	} else {
		t.Logf("the machine's name %q does not resolve to loopback; its scenario is left out", name)
	}
	link := fetchtest.Public(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, targets[strings.TrimPrefix(r.URL.Path, "/")], http.StatusFound)
	}))

	gatewayBin, simBin := ktBuild(t)
	_, simBase := ktStart(t, "modelgate-sim", simBin, nil, regexp.MustCompile(`modelgate-sim listening.* base_url=(http://\S+)`), "--addr", "127.0.0.1:0")
	sim := &ktClient{t: t, base: simBase, http: &http.Client{}}
	scenarios := slices.Sorted(maps.Keys(targets))
	for _, name := range scenarios {
		if status, raw, err := sim.do(http.MethodPut, "/_sim/routes/link-"+name, "", map[string]string{"image_url": link + "/" + name}); err != nil || status != 200 {
			t.Fatalf("steer simulator route link-%s: %d %s %v", name, status, raw, err)
		}
	}
	dir := t.TempDir()
	catalogPath := filepath.Join(dir, "catalog.yaml")
	if err := os.WriteFile(catalogPath, []byte(strings.ReplaceAll(fetchCatalog(scenarios), "{{SIM}}", simBase)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MODELGATE_ADMIN_TOKEN=" + ktAdminToken, ktSimKeyEnv + "=sim-secret", "MODELGATE_LOG_LEVEL=info"}
	gw, addrs := ktStart(t, "modelgate", gatewayBin, env, regexp.MustCompile(`"msg":"modelgate serving".*"url":"(http://[^"]+)","admin":"(http://[^"]+)"`),
		"serve", "--config", catalogPath, "--data", filepath.Join(dir, "data"), "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0")
	base, admin, _ := strings.Cut(addrs, " ")
	c := &ktClient{t: t, base: base, adminBase: admin, http: &http.Client{}}
	c.waitHealthy()

	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) {
			c.t = t
			var acct struct {
				ID string `json:"id"`
			}
			c.admin(http.MethodPost, "/accounts", map[string]string{"email": name + "@fetch.test", "plan": "fx"}, 201, &acct)
			var key struct {
				Secret string `json:"key"`
			}
			c.admin(http.MethodPost, "/accounts/"+acct.ID+"/keys", map[string]string{"name": "fx"}, 201, &key)

			status, raw, err := c.do(http.MethodPost, "/v1/images/generations", key.Secret, map[string]string{"model": "fx-" + name + "-only", "prompt": "a lighthouse"})
			if err != nil || status != 502 || !strings.Contains(string(raw), `"code":"upstream_error"`) {
				t.Fatalf("no route left: %d %s %v", status, raw, err)
			}
			var q ktQuota
			c.admin(http.MethodGet, "/accounts/"+acct.ID+"/quota", nil, 200, &q)
			if q.Window.Used != 0 || q.Weekly.Used != 0 || q.Images.Used != 0 || q.Images.Reserved != 0 || q.Spent != "0" || q.Held != "0" {
				t.Fatalf("the refused download moved the quota: %+v", q)
			}

			status, raw, err = c.do(http.MethodPost, "/v1/images/generations", key.Secret, map[string]string{"model": "fx-" + name, "prompt": "a lighthouse"})
			if err != nil || status != 200 || !strings.Contains(string(raw), "/assets/gen/") {
				t.Fatalf("failover: %d %s %v", status, raw, err)
			}
			c.admin(http.MethodGet, "/accounts/"+acct.ID+"/quota", nil, 200, &q)
			if q.Window.Used != 1 || q.Images.Used != 1 || q.Images.Reserved != 0 || q.Spent != "0" {
				t.Fatalf("the served image counted %+v, want one call and one image", q)
			}
			entries, total := c.usage(acct.ID)
			var got []string
			for _, e := range entries {
				got = append(got, fmt.Sprintf("%d counted=%v cost=%s", e.Status, e.Counted, e.CostUSD))
			}
			slices.Sort(got)
			if want := []string{"200 counted=true cost=0", "502 counted=false cost=0"}; !slices.Equal(got, want) || total != "0" {
				t.Fatalf("usage %q, total %s; want %q", got, total, want)
			}
		})
	}
	c.t = t
	if n := internal.Accepted(); n != 0 {
		t.Errorf("the loopback server accepted %d connections", n)
	}
	if !gw.logs.contains("169.254.169.254 is cloud metadata; no connection attempted") {
		t.Errorf("the gateway's log does not say the metadata address was refused before connecting")
	}
	if !gw.logs.contains("127.0.0.1 is loopback; no connection attempted") {
		t.Errorf("the gateway's log does not say loopback was refused before connecting")
	}
}

func resolvesToLoopback(name string) bool {
	addrs, err := net.LookupHost(name)
	if err != nil || len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		if ip, err := netip.ParseAddr(a); err != nil || !ip.IsLoopback() {
			return false
		}
	}
	return true
}

// contains reports whether the child's output so far holds s.
func (l *ktLog) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Contains(l.buf.String(), s)
}

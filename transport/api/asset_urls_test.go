package api_test

import (
	"cmp"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// postAs sends a request as a client that reached the gateway under host, through whatever
// proxy headers are given.
func postAs(t *testing.T, env *nodetest.Env, method, path, body, host string, headers ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, env.Node.URL+path, strings.NewReader(body))
	req.Host = host
	req.Header.Set("Authorization", "Bearer "+env.Key)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := env.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestAssetLinksNeverComeFromAClientsHeaders: image url and video metadata.url start with
// server.public_url when the catalog sets it; else with the host and scheme a trusted proxy
// forwards; else with the listen address. A client's Host, or forwarding headers from anyone
// but a trusted proxy, never write them. A video's URL is built at each poll, so a setting
// changed later applies to tasks made before.
func TestAssetLinksNeverComeFromAClientsHeaders(t *testing.T) {
	// Room for an image under each setting and case.
	const plans = "plans:\n  - {name: roomy, window_requests: 1000, burst_rpm: 1000, allow_automated: true, image_daily_limit: 100, video_daily_seconds: 100}\n"
	env := nodetest.Start(t, nodetest.DefaultCatalog+plans, nodetest.Options{Plan: "roomy"})
	env.Sim.SetBehavior("v", simulator.Behavior{VideoDuration: 200 * time.Millisecond})
	env.Admin(http.MethodPost, "/admin/v1/accounts/"+env.Account.ID+"/credits", `{"amount_usd":"1","idempotency_key":"v1"}`).Body.Close()
	listen := env.Node.URL // http://127.0.0.1:port

	var task videoTask
	json.Unmarshal(nodetest.Read(t, env.Post("/v1/videos", env.Key, `{"model":"vid","prompt":"p","mode":"text","seconds":"4"}`)), &task)
	if pollVideo(t, env, task.ID).Status != "completed" {
		t.Fatal("the video did not complete")
	}
	imageURL := func(t *testing.T, host string, headers ...string) string {
		resp := postAs(t, env, http.MethodPost, "/v1/images/generations", `{"model":"img","prompt":"a fox"}`, host, headers...)
		var out imageResult
		if raw := nodetest.Read(t, resp); json.Unmarshal(raw, &out) != nil || resp.StatusCode != 200 || len(out.Data) != 1 {
			t.Fatalf("image: %d %s", resp.StatusCode, raw)
		}
		return out.Data[0].URL
	}
	videoURL := func(t *testing.T, host string, headers ...string) string {
		resp := postAs(t, env, http.MethodGet, "/v1/videos/"+task.ID+"?model=vid", "", host, headers...)
		var got videoTask
		if raw := nodetest.Read(t, resp); json.Unmarshal(raw, &got) != nil || got.Metadata == nil {
			t.Fatalf("poll: %d %s", resp.StatusCode, raw)
		}
		return got.Metadata.URL
	}
	videoPath := strings.TrimPrefix(videoURL(t, ""), listen)
	if !strings.HasPrefix(videoPath, "/assets/vid/") {
		t.Fatalf("video path %s", videoPath)
	}

	catPath := filepath.Join(env.DataDir, "catalog.yaml")
	orig, _ := os.ReadFile(catPath)
	settings := []struct {
		name, server string // what the catalog's server section gains
	}{
		{"no public_url, no trusted proxy", ""},
		{"no public_url, the client a trusted proxy", "trusted_proxies: [127.0.0.1], "},
		{"public_url", "public_url: 'https://public.example/gw/', trusted_proxies: [127.0.0.1], "},
	}
	cases := []struct {
		name    string
		host    string
		headers []string
		base    [3]string // the links' base under each setting ("" = the listen address)
	}{
		{"the client's Host", "gw.example:8443", nil,
			[3]string{"", "", "https://public.example/gw"}},
		{"Host: evil.example", "evil.example", nil,
			[3]string{"", "", "https://public.example/gw"}},
		{"forwarded host and scheme", "10.0.0.7:8080", []string{"X-Forwarded-Proto", "https", "X-Forwarded-Host", "llm.example.com"},
			[3]string{"", "https://llm.example.com", "https://public.example/gw"}},
		{"Forwarded", "10.0.0.7:8080", []string{"Forwarded", "for=198.51.100.7;proto=https;host=fw.example"},
			[3]string{"", "https://fw.example", "https://public.example/gw"}},
		{"a chain of proxies: the nearest one's values", "10.0.0.7:8080", []string{"X-Forwarded-Proto", "https, http", "X-Forwarded-Host", "a.example, proxy.internal"},
			[3]string{"", "http://proxy.internal", "https://public.example/gw"}},
		{"a malformed forwarded host", "gw.example", []string{"X-Forwarded-Proto", "https", "X-Forwarded-Host", "evil.example/x?y=1"},
			[3]string{"", "", "https://public.example/gw"}},
		{"an IPv6 Host", "[2001:db8::1]:8080", nil,
			[3]string{"", "", "https://public.example/gw"}},
	}
	for i, set := range settings {
		os.WriteFile(catPath, []byte(strings.Replace(string(orig), "server: {", "server: {"+set.server, 1)), 0o600)
		if err := env.Node.Reload(); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			t.Run(set.name+"/"+c.name, func(t *testing.T) {
				base := cmp.Or(c.base[i], listen)
				if got := imageURL(t, c.host, c.headers...); !regexp.MustCompile(`^` + regexp.QuoteMeta(base) + `/assets/gen/\w+\.png$`).MatchString(got) {
					t.Errorf("image URL %s, want %s/assets/gen/<file>", got, base)
				}
				if got := videoURL(t, c.host, c.headers...); got != base+videoPath {
					t.Errorf("video URL %s, want %s", got, base+videoPath)
				}
			})
		}
	}
	// The path is the gateway's own: served at the listen address a proxy forwards to.
	if got, err := http.Get(listen + videoPath); err != nil || got.StatusCode != 200 || got.Header.Get("Content-Type") != "video/mp4" {
		t.Fatalf("asset %s: %v %v", videoPath, err, got)
	} else {
		got.Body.Close()
	}
}

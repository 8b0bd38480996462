package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
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

// TestItem11AssetURLsUsePublicAddress is issue #12 item 11: image url and video
// metadata.url use server.public_url when the catalog sets it, else the address the client
// used (Host, or X-Forwarded-Proto/-Host from a proxy, when they are well formed), never the
// listen address; a video's URL is built at each poll, so a public_url set later applies to
// tasks made before.
func TestItem11AssetURLsUsePublicAddress(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	env.Sim.SetBehavior("v", simulator.Behavior{VideoDuration: 200 * time.Millisecond})
	env.Admin(http.MethodPost, "/admin/v1/accounts/"+env.Account.ID+"/credits", `{"amount_usd":"1","idempotency_key":"v1"}`).Body.Close()
	listen := strings.TrimPrefix(env.Node.URL, "http://")

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
	cases := []struct {
		name    string
		host    string
		headers []string
		base    string // what every asset URL starts with
	}{
		{"the client's Host", "gw.example:8443", nil, "http://gw.example:8443"},
		{"a proxy's forwarded host and scheme", "10.0.0.7:8080", []string{"X-Forwarded-Proto", "https", "X-Forwarded-Host", "llm.example.com"}, "https://llm.example.com"},
		{"the client-side hop of a chain of proxies", "10.0.0.7:8080", []string{"X-Forwarded-Proto", "HTTPS, http", "X-Forwarded-Host", "a.example, proxy.internal"}, "https://a.example"},
		{"malformed forwarded values are ignored", "gw.example", []string{"X-Forwarded-Proto", "javascript", "X-Forwarded-Host", "evil.example/x?y=1"}, "http://gw.example"},
		{"an IPv6 host", "[2001:db8::1]:8080", nil, "http://[2001:db8::1]:8080"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for kind, url := range map[string]string{"gen": imageURL(t, c.host, c.headers...), "vid": videoURL(t, c.host, c.headers...)} {
				if !strings.HasPrefix(url, c.base+"/assets/"+kind+"/") || strings.Contains(url, listen) {
					t.Errorf("%s URL %s, want it under %s/assets/%s/", kind, url, c.base, kind)
				}
			}
		})
	}

	// The operator sets public_url: every link uses it, the task made before included, and
	// the path under it is the same stored file.
	before := videoURL(t, "gw.example")
	catPath := filepath.Join(env.DataDir, "catalog.yaml")
	orig, _ := os.ReadFile(catPath)
	os.WriteFile(catPath, []byte(strings.Replace(string(orig), "server: {", "server: {public_url: 'https://public.example/gw/', ", 1)), 0o600)
	if err := env.Node.Reload(); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		img, vid := imageURL(t, c.host, c.headers...), videoURL(t, c.host, c.headers...)
		if !strings.HasPrefix(img, "https://public.example/gw/assets/gen/") {
			t.Errorf("%s: image URL %s ignores public_url", c.name, img)
		}
		if vid != "https://public.example/gw"+strings.TrimPrefix(before, "http://gw.example") {
			t.Errorf("%s: video URL %s, want the same file under public_url (was %s)", c.name, vid, before)
		}
	}
	// The path is the gateway's own: served at the listen address a proxy forwards to.
	path := strings.TrimPrefix(before, "http://gw.example")
	if got, err := http.Get(env.Node.URL + path); err != nil || got.StatusCode != 200 || got.Header.Get("Content-Type") != "video/mp4" {
		t.Fatalf("asset %s: %v %v", path, err, got)
	} else {
		got.Body.Close()
	}
}

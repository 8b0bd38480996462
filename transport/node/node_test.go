package node_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

func chat(model, text string) string {
	return `{"model":"` + model + `","messages":[{"role":"user","content":"` + text + `"}]}`
}

func TestRestartKeepsAccountsKeysAndLog(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	revoked := env.NewKey(persistence.KeySpec{Name: "old"})
	k, _ := env.Node.Store.LookupKey(revoked)
	env.Node.Store.RevokeKey(k.ID)
	nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, chat("chat", "hello")))

	env.Restart()

	if r := env.Post("/v1/chat/completions", env.Key, chat("chat", "again")); r.StatusCode != 200 {
		t.Fatalf("key lost on restart: %d %s", r.StatusCode, nodetest.Read(t, r))
	} else {
		nodetest.Read(t, r)
	}
	if r := env.Post("/v1/chat/completions", revoked, chat("chat", "x")); r.StatusCode != 401 {
		t.Fatalf("revocation lost on restart: %d", r.StatusCode)
	} else {
		nodetest.Read(t, r)
	}
	resp := env.Admin(http.MethodGet, "/admin/v1/accounts/"+env.Account.ID+"/usage", "")
	var out struct {
		Data []persistence.LogEntry `json:"data"`
	}
	json.Unmarshal(nodetest.Read(t, resp), &out)
	// The refused call on the revoked key is logged against its account.
	if len(out.Data) != 3 || out.Data[2].Status != 401 || out.Data[2].KeyID != k.ID || out.Data[2].Counted {
		t.Fatalf("log entries after restart = %+v, want 2 answers and the revoked key's 401", out.Data)
	}
}

// The canary: a string sent in prompts (plain, streamed, failing over, refused) appears in
// no file under the data directory and in no log line.
func TestPromptContentNeverStored(t *testing.T) {
	var logs nodetest.LogBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(prev)

	env := nodetest.Start(t, "", nodetest.Options{})
	const canary = "CANARY-7f3a9c-do-not-store"
	env.Sim.SetBehavior("a", simulator.Behavior{FailStatus: 500}) // the 3-in-4 route: a failover is all but certain
	bodies := []string{
		chat("chat", canary),
		`{"model":"chat","stream":true,"messages":[{"role":"user","content":"` + canary + `"}]}`,
		`{"model":"embed","input":"` + canary + `"}`,
		chat("nope", canary),
		`{"model":"chat","messages":[{"role":"user","content":"` + canary + `"}],"bogus":`,
	}
	for i := 0; i < 4; i++ {
		for _, b := range bodies {
			path := "/v1/chat/completions"
			if strings.Contains(b, "embed") {
				path = "/v1/embeddings"
			}
			nodetest.Read(t, env.Post(path, env.Key, b))
		}
	}
	env.Close() // flush Pebble's memtable and WAL to files
	found := []string{}
	filepath.WalkDir(env.DataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(path) == "catalog.yaml" {
			return nil
		}
		b, _ := os.ReadFile(path)
		if bytes.Contains(b, []byte(canary)) {
			found = append(found, path)
		}
		return nil
	})
	if len(found) > 0 {
		t.Fatalf("prompt content written to %v", found)
	}
	if strings.Contains(logs.String(), canary) {
		t.Fatal("prompt content written to the logs")
	}
	if !strings.Contains(logs.String(), "failing over") {
		t.Fatal("the log capture saw nothing; the test would prove nothing")
	}
}

func TestModelsListFiltering(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	ids := func(key string) []string {
		resp := env.Do(http.MethodGet, "/v1/models", key, "")
		var out struct {
			Object string `json:"object"`
			Data   []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		json.Unmarshal(nodetest.Read(t, resp), &out)
		var got []string
		for _, m := range out.Data {
			got = append(got, m.ID)
		}
		return got
	}
	cases := []struct {
		name string
		spec persistence.KeySpec
		want string
	}{
		{"unrestricted", persistence.KeySpec{Name: "u"}, "chat,embed,gem,gimg,img,msg,open-only,resp,vid"},
		{"restricted by alias", persistence.KeySpec{Name: "r", Models: []string{"chat-latest"}}, "chat"},
		{"zdr", persistence.KeySpec{Name: "z", ZDR: true}, "chat"},
		{"restricted and zdr", persistence.KeySpec{Name: "rz", ZDR: true, Models: []string{"open-only", "embed"}}, ""},
	}
	for _, c := range cases {
		if got := strings.Join(ids(env.NewKey(c.spec)), ","); got != c.want {
			t.Errorf("%s: models %q, want %q", c.name, got, c.want)
		}
	}
}

func TestModelRecordFields(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	resp := env.Do(http.MethodGet, "/v1/models/chat-latest", env.Key, "")
	raw := nodetest.Read(t, resp)
	want := `{"id":"chat","object":"model","created":0,"owned_by":"modelgate","permission":[],"root":"chat","parent":null,"kind":"chat","context_length":1000,"max_output_tokens":100,"pricing":{"prompt":"0.000001","completion":"0.000002"},"quota_multiplier":1,"reasoning":{"supported":false},"architecture":{"modality":"text+image->text","input_modalities":["text","image"],"output_modalities":["text"]},"aliases":["chat-latest"]}`
	if strings.TrimSpace(string(raw)) != want {
		t.Fatalf("record:\n%s\nwant\n%s", raw, want)
	}
}

// A reload swaps the catalog without dropping a request in flight, keeps route health, and
// a broken file changes nothing.
func TestReload(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	for _, r := range []string{"a", "b"} {
		env.Sim.SetBehavior(r, simulator.Behavior{TokensPerSecond: 20})
	}
	done := make(chan int)
	go func() {
		resp := env.Post("/v1/chat/completions", env.Key, `{"model":"chat","stream":true,"messages":[{"role":"user","content":"reply with 10 words"}]}`)
		raw := nodetest.Read(t, resp)
		if !bytes.HasSuffix(raw, []byte("data: [DONE]\n\n")) {
			done <- -1
			return
		}
		done <- resp.StatusCode
	}()
	time.Sleep(100 * time.Millisecond)
	catPath := filepath.Join(env.DataDir, "catalog.yaml")
	orig, _ := os.ReadFile(catPath)
	os.WriteFile(catPath, []byte(strings.Replace(string(orig), "id: open-only", "id: renamed", 1)), 0o600)
	if err := env.Node.Reload(); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 200 {
		t.Fatalf("in-flight stream across reload: %d", code)
	}
	if r := env.Post("/v1/chat/completions", env.Key, chat("renamed", "x")); r.StatusCode != 200 {
		t.Fatalf("new catalog not served: %d", r.StatusCode)
	} else {
		nodetest.Read(t, r)
	}
	os.WriteFile(catPath, []byte("models: [{id: broken"), 0o600)
	if err := env.Node.Reload(); err == nil {
		t.Fatal("broken catalog accepted")
	}
	if r := env.Post("/v1/chat/completions", env.Key, chat("renamed", "x")); r.StatusCode != 200 {
		t.Fatalf("a failed reload changed the catalog: %d", r.StatusCode)
	} else {
		nodetest.Read(t, r)
	}
}

func TestHealthzAndMetrics(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, chat("chat", "hi")))
	if r := env.Do(http.MethodGet, "/healthz", "", ""); r.StatusCode != 200 {
		t.Fatalf("healthz %d", r.StatusCode)
	} else {
		nodetest.Read(t, r)
	}
	raw := env.Metrics()
	for _, want := range []string{
		`modelgate_requests_total{endpoint="chat",model="chat",route=`,
		`modelgate_request_duration_seconds_bucket{endpoint="chat",model="chat"`,
		`modelgate_route_available{route="a"} 1`,
		`modelgate_route_in_flight{route="b"} 0`,
		`modelgate_requests_in_flight 0`,
		`modelgate_upstream_attempts_total{outcome="ok",route=`,
	} {
		if !strings.Contains(raw, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestMetricsServedOnlyOnTheirListener, the serving half of metrics_addr: /metrics
// answers on the metrics listener (with /healthz beside it for probes) and is an unknown
// path on the API's; the metrics listener serves nothing of the API.
func TestMetricsServedOnlyOnTheirListener(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, chat("chat", "hi")))
	metricsBase := strings.TrimSuffix(env.Node.MetricsURL, "/metrics")
	if !strings.HasPrefix(metricsBase, "http://127.0.0.1:") || metricsBase == env.Node.URL {
		t.Fatalf("metrics at %q, the API at %q", env.Node.MetricsURL, env.Node.URL)
	}
	cases := []struct {
		name, url string
		key       string
		status    int
		contains  string
	}{
		{"metrics on their listener", metricsBase + "/metrics", "", 200, `modelgate_requests_total{endpoint="chat",model="chat",route=`},
		{"health beside them", metricsBase + "/healthz", "", 200, `{"status":"ok"}`},
		{"no API on the metrics listener", metricsBase + "/v1/models", env.Key, 404, ""},
		{"no metrics on the API's listener", env.Node.URL + "/metrics", "", 404, `"code":"unknown_url"`},
		{"not even with a key", env.Node.URL + "/metrics", env.Key, 404, "server.metrics_addr"},
		{"health on the API's listener", env.Node.URL + "/healthz", "", 200, `{"status":"ok"}`},
		{"readiness beside the metrics", metricsBase + "/readyz", "", 200, `{"status":"ok"}`},
		{"readiness on the API's listener", env.Node.URL + "/readyz", "", 200, `{"status":"ok"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, c.url, nil)
			if c.key != "" {
				req.Header.Set("Authorization", "Bearer "+c.key)
			}
			resp, err := env.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw := string(nodetest.Read(t, resp))
			if resp.StatusCode != c.status || !strings.Contains(raw, c.contains) {
				t.Fatalf("%d, want %d with %q: %.300s", resp.StatusCode, c.status, c.contains, raw)
			}
			if strings.Contains(raw, "modelgate_requests_total") != (c.status == 200 && strings.HasSuffix(c.url, "/metrics")) {
				t.Fatalf("metrics where they do not belong: %.300s", raw)
			}
		})
	}
}

// Package nodetest starts a whole gateway node in front of the upstream simulator, over real
// loopback sockets, for tests and benchmarks.
package nodetest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/x509"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node"
)

// AdminToken is every test node's admin token (strong enough for a node to start with).
const AdminToken = "mg-admin-nodetest-VFeS9MpxpdCopYaYABBu1x85kHKGmlHD"

// ImportedKey is a secret strong enough to import (POST …/keys with import_key); tests that
// import several append to it.
const ImportedKey = "sk-user-biXqjrUB1HJJEUKR2FvIA75B2wl3whMj"

// Env is one simulator and one gateway node with an account and key.
type Env struct {
	TB      testing.TB
	Sim     *simulator.Server
	SimURL  string
	Node    *node.Node
	DataDir string
	Account persistence.Account
	Key     string // the account's unrestricted key
	Client  *http.Client
	cfg     node.Config
	stopSim func()

	// Cert is the node's self-signed certificate (Options.TLS), in CertFile and KeyFile;
	// Client trusts it.
	Cert              *x509.Certificate
	CertFile, KeyFile string
}

// Options tune the node; zero values take the defaults.
type Options struct {
	Health  routehealth.Policy
	Quota   quota.Config
	DataDir string // reuse a data directory (restart tests)
	Plan    string // the env account's plan (default "demo")
	Logger  *slog.Logger
	Store   persistence.Options // the store's full-disk guard (fake disks in tests)
	// LogRetentionEvery is how often the log's retention runs (node.Config's).
	LogRetentionEvery time.Duration

	// QuotaStore wraps the store of the quota actors (node.Config.QuotaStore).
	QuotaStore func(quota.Store) quota.Store
	// AdminAddr is node.Config.AdminAddr; "" is a free loopback port.
	AdminAddr string

	// TLS serves HTTPS with a self-signed certificate made for the test (Env.Cert), read
	// again every TLSPollEvery (node.Config's).
	TLS          bool
	TLSPollEvery time.Duration
}

// DefaultCatalog is a chat model with two simulator routes (3:1, the first ZDR), a model
// with no ZDR route (text input only), a model of each other upstream format, image, video
// and embedding models; the chat model and the one of each format take images. {{SIM}} is
// replaced by the simulator URL.
const DefaultCatalog = `
server: {first_byte_timeout: 5s, idle_stream_timeout: 5s, max_body_bytes: 65536}
models:
  - id: chat
    kind: chat
    context_length: 1000
    max_output_tokens: 100
    pricing: {prompt: "0.000001", completion: "0.000002", cache_read: "0.0000001"}
    aliases: [chat-latest]
    architecture: {input_modalities: [text, image]}
    routes:
      - {id: a, format: chat, base_url: "{{SIM}}/r/a/v1", upstream_model: up-a, credential_env: NODETEST_SIM_KEY, weight: 3, zdr: true}
      - {id: b, format: chat, base_url: "{{SIM}}/r/b/v1", upstream_model: up-b, credential_env: NODETEST_SIM_KEY, weight: 1}
  - id: open-only
    kind: chat
    routes:
      - {id: c, format: chat, base_url: "{{SIM}}/r/c/v1", credential_env: NODETEST_SIM_KEY}
  - id: msg
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.000003", completion: "0.000015", cache_read: "0.0000003", cache_write: "0.00000375"}
    reasoning: {class: toggle}
    architecture: {input_modalities: [text, image]}
    routes:
      - {id: m, format: messages, base_url: "{{SIM}}/r/m/v1", upstream_model: up-m, credential_env: NODETEST_SIM_KEY}
  - id: gem
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.000001", completion: "0.000004"}
    reasoning: {class: effort, efforts: [low, high]}
    architecture: {input_modalities: [text, image]}
    routes:
      - {id: g, format: gemini, base_url: "{{SIM}}/r/g/v1beta", upstream_model: up-g, credential_env: NODETEST_SIM_KEY}
  - id: resp
    kind: chat
    max_output_tokens: 512
    tokenizer: o200k_base
    pricing: {prompt: "0.0000025", completion: "0.00001", cache_read: "0.00000025"}
    reasoning: {class: effort, efforts: [low, medium, high]}
    architecture: {input_modalities: [text, image]}
    routes:
      - {id: r, format: responses, base_url: "{{SIM}}/r/r/v1", upstream_model: up-r, credential_env: NODETEST_SIM_KEY}
  - id: img
    kind: image
    display_name: Test Image
    pricing: {prompt: "0.000005", completion: "0.00004"}
    routes:
      - {id: i, format: chat, base_url: "{{SIM}}/r/i/v1", upstream_model: up-i, credential_env: NODETEST_SIM_KEY, weight: 1}
  - id: gimg
    kind: image
    routes:
      - {id: gi, format: gemini, base_url: "{{SIM}}/r/gi/v1beta", upstream_model: up-image, credential_env: NODETEST_SIM_KEY}
  - id: vid
    kind: video
    pricing: {prompt: "0", completion: "0.05"}
    routes:
      - {id: v, format: chat, base_url: "{{SIM}}/r/v/v1", upstream_model: up-v, credential_env: NODETEST_SIM_KEY}
  - id: embed
    kind: embedding
    pricing: {prompt: "0.0000001"}
    routes:
      - {id: e, format: chat, base_url: "{{SIM}}/r/e/v1", upstream_model: up-e, credential_env: NODETEST_SIM_KEY}
`

// CloudModels are chat models on the simulator's clouds, one per cloud route kind: Claude on
// Bedrock (InvokeModel), a model over Bedrock's Converse, Gemini and Claude on Vertex AI, and
// Azure OpenAI's chat and responses. Bedrock routes sign with the simulator's AWS key pair,
// Vertex routes fetch tokens with its service-account file ({{SIM_SA}}), Azure sends its key.
// Appended to DefaultCatalog (its last section is the model list): CloudCatalog.
const CloudModels = `  - id: bdr
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.000003", completion: "0.000015", cache_read: "0.0000003", cache_write: "0.00000375"}
    reasoning: {class: toggle}
    architecture: {input_modalities: [text, image]}
    routes:
      - {id: bdr, provider: bedrock, format: messages, base_url: "{{SIM}}/r/bdr", upstream_model: up-bdr,
         aws: {region: us-east-1, access_key_env: NODETEST_AWS_KEY, secret_key_env: NODETEST_AWS_SECRET}}
  - id: cnv
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.00000072", completion: "0.00000072"}
    architecture: {input_modalities: [text, image]}
    routes:
      - {id: cnv, provider: bedrock, format: converse, base_url: "{{SIM}}/r/cnv", upstream_model: up-cnv,
         aws: {region: us-west-2, access_key_env: NODETEST_AWS_KEY, secret_key_env: NODETEST_AWS_SECRET}}
  - id: vgem
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.000001", completion: "0.000004"}
    reasoning: {class: effort, efforts: [low, high]}
    architecture: {input_modalities: [text, image]}
    routes:
      - {id: vgem, provider: vertex, format: gemini, base_url: "{{SIM}}/r/vgem", upstream_model: up-vgem,
         vertex: {project: modelgate-sim, location: us-central1, credentials_file: "{{SIM_SA}}"}}
  - id: vmsg
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.000003", completion: "0.000015", cache_read: "0.0000003", cache_write: "0.00000375"}
    reasoning: {class: toggle}
    architecture: {input_modalities: [text, image]}
    routes:
      - {id: vmsg, provider: vertex, format: messages, base_url: "{{SIM}}/r/vmsg", upstream_model: up-vmsg,
         vertex: {project: modelgate-sim, location: us-east5, credentials_file: "{{SIM_SA}}"}}
  - id: az
    kind: chat
    max_output_tokens: 100
    pricing: {prompt: "0.0000025", completion: "0.00001", cache_read: "0.00000125"}
    architecture: {input_modalities: [text, image]}
    routes:
      - {id: az, provider: azure, format: chat, base_url: "{{SIM}}/r/az", upstream_model: up-az, credential_env: NODETEST_SIM_KEY,
         azure: {deployment: up-az, api_version: "2024-10-21"}}
  - id: azr
    kind: chat
    max_output_tokens: 512
    tokenizer: o200k_base
    pricing: {prompt: "0.0000025", completion: "0.00001", cache_read: "0.00000025"}
    reasoning: {class: effort, efforts: [low, medium, high]}
    architecture: {input_modalities: [text, image]}
    routes:
      - {id: azr, provider: azure, format: responses, base_url: "{{SIM}}/r/azr", upstream_model: up-azr, credential_env: NODETEST_SIM_KEY,
         azure: {api_version: v1}}
`

// CloudCatalog is DefaultCatalog with CloudModels.
const CloudCatalog = DefaultCatalog + CloudModels

// ManyAuthFailures raises server.auth_failures_per_minute of a catalog whose server line is
// "server: {…}" (DefaultCatalog's) to ManyAuthFailuresLimit, for tests that send more wrong
// keys, tokens or sessions from 127.0.0.1 within a minute than the default 30 allows.
func ManyAuthFailures(catalogYAML string) string {
	if !strings.Contains(catalogYAML, "\nserver: {") {
		panic("nodetest.ManyAuthFailures: the catalog has no \"server: {\" line")
	}
	return strings.Replace(catalogYAML, "\nserver: {", "\nserver: {auth_failures_per_minute: "+strconv.Itoa(ManyAuthFailuresLimit)+", ", 1)
}

// ManyAuthFailuresLimit is the limit ManyAuthFailures sets.
const ManyAuthFailuresLimit = 10000

// Start brings up a simulator and a node with catalogYAML (DefaultCatalog if empty).
func Start(tb testing.TB, catalogYAML string, opt Options) *Env {
	tb.Helper()
	os.Setenv("NODETEST_SIM_KEY", "sim-test-credential")
	os.Setenv("NODETEST_AWS_KEY", simulator.AWSAccessKeyID)
	os.Setenv("NODETEST_AWS_SECRET", simulator.AWSSecretAccessKey)
	sim, simURL, stopSim, err := simulator.Start("127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	if catalogYAML == "" {
		catalogYAML = DefaultCatalog
	}
	dir := opt.DataDir
	if dir == "" {
		dir = tb.TempDir()
	}
	catPath := filepath.Join(dir, "catalog.yaml")
	if strings.Contains(catalogYAML, "{{SIM_SA}}") {
		sa := filepath.Join(dir, "vertex-sa.json")
		if err := os.WriteFile(sa, sim.ServiceAccountJSON(simURL+"/oauth2/token"), 0o600); err != nil {
			tb.Fatal(err)
		}
		catalogYAML = strings.ReplaceAll(catalogYAML, "{{SIM_SA}}", sa)
	}
	if err := os.WriteFile(catPath, []byte(strings.ReplaceAll(catalogYAML, "{{SIM}}", simURL)), 0o600); err != nil {
		tb.Fatal(err)
	}
	cfg := node.Config{DataDir: dir, CatalogPath: catPath, Addr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		AdminAddr: cmp.Or(opt.AdminAddr, "127.0.0.1:0"), AdminToken: AdminToken, Health: opt.Health, Quota: opt.Quota,
		QuotaStore: opt.QuotaStore, Logger: opt.Logger, Store: opt.Store, LogRetentionEvery: opt.LogRetentionEvery,
		TLSPollEvery: opt.TLSPollEvery}
	e := &Env{TB: tb, Sim: sim, SimURL: simURL, DataDir: dir, stopSim: stopSim,
		Client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	if opt.TLS {
		e.CertFile, e.KeyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
		e.Cert = WriteSelfSigned(tb, e.CertFile, e.KeyFile, "nodetest")
		e.Client = TLSClient(e.Cert)
		cfg.TLS.CertFile, cfg.TLS.KeyFile = e.CertFile, e.KeyFile
	}
	n, err := node.Start(cfg)
	if err != nil {
		stopSim()
		tb.Fatal(err)
	}
	e.Node, e.cfg = n, cfg
	if opt.DataDir == "" {
		plan := opt.Plan
		if plan == "" {
			plan = "demo"
		}
		e.Account, err = n.Store.CreateAccount("test@example.com", plan)
		if err != nil {
			tb.Fatal(err)
		}
		e.Key = e.NewKey(persistence.KeySpec{Name: "test"})
	}
	tb.Cleanup(e.Close)
	return e
}

// NewKey creates a key on the env's account and returns its secret.
func (e *Env) NewKey(spec persistence.KeySpec) string {
	_, secret, err := e.Node.Store.CreateKey(e.Account.ID, spec)
	if err != nil {
		e.TB.Fatal(err)
	}
	return secret
}

// Close stops the node and the simulator (idempotent).
func (e *Env) Close() {
	if e.Node != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		e.Node.Close(ctx)
		cancel()
		e.Node = nil
	}
	if e.stopSim != nil {
		e.stopSim()
		e.stopSim = nil
	}
}

// Restart stops the node and starts a new one on the same data directory and catalog.
func (e *Env) Restart() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	e.Node.Close(ctx)
	cancel()
	n, err := node.Start(e.cfg)
	if err != nil {
		e.TB.Fatal(err)
	}
	e.Node = n
}

// Post sends a JSON body with the given key (no key when empty) and extra headers.
func (e *Env) Post(path, key, body string, headers ...string) *http.Response {
	return e.Do(http.MethodPost, path, key, body, headers...)
}

// Do sends a request to the node's public port.
func (e *Env) Do(method, path, key, body string, headers ...string) *http.Response {
	e.TB.Helper()
	return e.send(e.Node.URL, method, path, key, body, headers...)
}

// DoAdmin sends a request to the node's admin listener with the given token (none when
// empty), as Do does to the public port.
func (e *Env) DoAdmin(method, path, token, body string, headers ...string) *http.Response {
	e.TB.Helper()
	if e.Node.AdminURL == "" {
		e.TB.Fatal("the node serves no admin plane")
	}
	return e.send(e.Node.AdminURL, method, path, token, body, headers...)
}

func (e *Env) send(base, method, path, key, body string, headers ...string) *http.Response {
	e.TB.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		e.TB.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.Client.Do(req)
	if err != nil {
		e.TB.Fatal(err)
	}
	return resp
}

// Metrics is the node's /metrics page, read from its metrics listener.
func (e *Env) Metrics() string {
	e.TB.Helper()
	if e.Node.MetricsURL == "" {
		e.TB.Fatal("the node serves no metrics")
	}
	resp, err := e.Client.Get(e.Node.MetricsURL)
	if err != nil {
		e.TB.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		e.TB.Fatalf("GET %s: %d", e.Node.MetricsURL, resp.StatusCode)
	}
	return string(Read(e.TB, resp))
}

// Read returns the whole body and closes it.
func Read(tb testing.TB, resp *http.Response) []byte {
	tb.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// WaitIdle waits until every request the node answered has its log entry queued: a client
// can read an answer's last byte a moment before the gateway logs it.
func (e *Env) WaitIdle() {
	for i := 0; i < 2000 && e.Node.API.InFlight() > 0; i++ {
		time.Sleep(time.Millisecond)
	}
}

// Admin sends an admin API request with the env's admin token to the node's admin listener;
// usage queries wait for the log to catch up first.
func (e *Env) Admin(method, path, body string) *http.Response {
	e.TB.Helper()
	if strings.Contains(path, "/usage") {
		e.WaitIdle()
	}
	return e.DoAdmin(method, path, AdminToken, body)
}

// LogBuffer is a log sink a test reads while the node writes to it.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything written so far.
func (l *LogBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// The cloud routes against the simulator's Bedrock, Vertex AI and Azure OpenAI, which check
// what the real services check: a SigV4 signature recomputed with the account's secret, an
// OAuth2 token its own token endpoint issued and that has not expired or been revoked.

func chatOK(t *testing.T, env *nodetest.Env, model string) {
	t.Helper()
	resp := env.Post("/v1/chat/completions", env.Key, chatBody(model))
	body := nodetest.Read(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", model, resp.StatusCode, body)
	}
}

type routeAuth struct {
	Route          string     `json:"route"`
	Provider       string     `json:"provider"`
	Auth           string     `json:"auth"`
	TokenRefreshAt *time.Time `json:"token_refresh_at"`
}

func routeAuths(t *testing.T, env *nodetest.Env) map[string]routeAuth {
	t.Helper()
	var out struct{ Data []routeAuth }
	if err := json.Unmarshal(nodetest.Read(t, env.Admin(http.MethodGet, "/admin/v1/routes", "")), &out); err != nil {
		t.Fatal(err)
	}
	m := map[string]routeAuth{}
	for _, r := range out.Data {
		m[r.Route] = r
	}
	return m
}

func TestVertexTokensAreFetchedOnceRefreshedAndRenewedWhenRevoked(t *testing.T) {
	env := nodetest.Start(t, nodetest.CloudCatalog, nodetest.Options{})
	// The service-account file's token_uri is the simulator's bare /oauth2/token: route "".
	env.Sim.SetBehavior("", simulator.Behavior{TokenLifetime: 4 * time.Second})
	if a := routeAuths(t, env)["vgem"]; a.Auth != "google_oauth" || a.Provider != "vertex" || a.TokenRefreshAt != nil {
		t.Errorf("before any call: %+v, want google_oauth on vertex, no refresh time", a)
	}
	start := time.Now()
	for range 3 {
		chatOK(t, env, "vgem")
		chatOK(t, env, "vmsg") // the same key file: the same token
	}
	if n := env.Sim.TokenGrants(""); n != 1 {
		t.Fatalf("6 calls on two routes of one key file fetched %d tokens, want 1", n)
	}
	a := routeAuths(t, env)["vmsg"]
	// A 4 s token (3 s by expires_in's whole seconds, less one) is refreshed after 3/4 of it.
	if a.TokenRefreshAt == nil || a.TokenRefreshAt.Before(start.Add(time.Second)) || a.TokenRefreshAt.After(start.Add(4*time.Second)) {
		t.Errorf("token_refresh_at %v, want within 1-4 s of %v", a.TokenRefreshAt, start)
	}

	// Revoked tokens: the call meets Vertex's 401, fetches a new token and is answered.
	time.Sleep(time.Second) // past the time a refusal means the route's setup
	env.Sim.ExpireTokens()
	chatOK(t, env, "vgem")
	if n := env.Sim.TokenGrants(""); n != 2 {
		t.Errorf("after a revocation: %d token grants, want 2", n)
	}
	// A token near its end is replaced before a call carries it.
	time.Sleep(time.Until(*routeAuths(t, env)["vgem"].TokenRefreshAt) + 50*time.Millisecond)
	chatOK(t, env, "vmsg")
	if n := env.Sim.TokenGrants(""); n != 3 {
		t.Errorf("after the refresh time: %d token grants, want 3", n)
	}
	if got := env.Sim.LastHeaders("vmsg").Get("Authorization"); !strings.HasPrefix(got, "Bearer ") {
		t.Errorf("vertex got Authorization %q", got)
	}
}

// A Bedrock route whose secret is wrong is refused by the service (403
// InvalidSignatureException) and the call fails over to the model's next route.
const bedrockCatalog = `
server: {first_byte_timeout: 5s}
models:
  - id: claude
    kind: chat
    max_output_tokens: 256
    pricing: {prompt: "0.000003", completion: "0.000015"}
    routes:
      - {id: bad, provider: bedrock, format: messages, base_url: "{{SIM}}/r/bad", upstream_model: up-bad, weight: 1,
         aws: {region: us-east-1, access_key_env: NODETEST_AWS_KEY, secret_key_env: CLOUD_TEST_WRONG_SECRET}}
      - {id: good, provider: bedrock, format: messages, base_url: "{{SIM}}/r/good", upstream_model: up-good, weight: 0,
         aws: {region: us-east-1, access_key_env: NODETEST_AWS_KEY, secret_key_env: NODETEST_AWS_SECRET}}
  - id: only-bad
    kind: chat
    max_output_tokens: 256
    routes:
      - {id: bad2, provider: bedrock, format: converse, base_url: "{{SIM}}/r/bad2", upstream_model: up-bad,
         aws: {region: us-east-1, access_key_env: NODETEST_AWS_KEY, secret_key_env: CLOUD_TEST_WRONG_SECRET}}
`

func TestBedrockWrongSecretFailsOver(t *testing.T) {
	t.Setenv("CLOUD_TEST_WRONG_SECRET", "not-the-secret")
	env := nodetest.Start(t, bedrockCatalog, nodetest.Options{})
	chatOK(t, env, "claude")
	if env.Sim.Calls("bad") != 1 || env.Sim.Calls("good") != 1 {
		t.Errorf("calls bad %d, good %d; want 1 each (refused, then failed over)", env.Sim.Calls("bad"), env.Sim.Calls("good"))
	}
	auth := env.Sim.LastHeaders("good").Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+simulator.AWSAccessKeyID+"/") || !strings.Contains(auth, "/us-east-1/bedrock/aws4_request") {
		t.Errorf("Authorization %q, want a SigV4 signature for bedrock in us-east-1", auth)
	}
	resp := env.Post("/v1/chat/completions", env.Key, chatBody("only-bad"))
	if body := nodetest.Read(t, resp); resp.StatusCode != http.StatusBadGateway {
		t.Errorf("only a refused route: %d %s, want 502", resp.StatusCode, body)
	}
	auths := routeAuths(t, env)
	if a := auths["good"]; a.Auth != "aws_sigv4" || a.Provider != "bedrock" || a.TokenRefreshAt != nil {
		t.Errorf("good: %+v, want aws_sigv4 on bedrock, no refresh (static keys)", a)
	}
}

// Azure with Entra ID: the client-credentials grant at the authority (the simulator's), one
// token for the calls, sent as a bearer instead of the api-key.
const entraCatalog = `
models:
  - id: gpt
    kind: chat
    routes:
      - {id: az, provider: azure, format: chat, base_url: "{{SIM}}/r/az", upstream_model: up-az,
         azure: {deployment: up-az, api_version: "2024-10-21", entra: {authority_url: "{{SIM}}"}}}
`

func TestAzureEntraToken(t *testing.T) {
	t.Setenv("AZURE_TENANT_ID", "00000000-0000-0000-0000-000000000001")
	t.Setenv("AZURE_CLIENT_ID", "modelgate-test")
	t.Setenv("AZURE_CLIENT_SECRET", "entra-secret")
	env := nodetest.Start(t, entraCatalog, nodetest.Options{})
	for range 3 {
		chatOK(t, env, "gpt")
	}
	if n := env.Sim.TokenGrants(""); n != 1 {
		t.Errorf("%d Entra token grants for 3 calls, want 1", n)
	}
	h := env.Sim.LastHeaders("az")
	if !strings.HasPrefix(h.Get("Authorization"), "Bearer ") || h.Get("Api-Key") != "" {
		t.Errorf("azure got Authorization %q, api-key %q; want a bearer only", h.Get("Authorization"), h.Get("Api-Key"))
	}
	if uri := env.Sim.LastRequestURI("az"); uri != "/r/az/openai/deployments/up-az/chat/completions?api-version=2024-10-21" {
		t.Errorf("azure was called at %s", uri)
	}
	if a := routeAuths(t, env)["az"]; a.Auth != "azure_entra" || a.TokenRefreshAt == nil {
		t.Errorf("az: %+v, want azure_entra with a refresh time", a)
	}
}

// Azure's content filter: a filtered answer (finish_reason content_filter, no content) is
// each client format's refusal; chat clients get Azure's annotations on the answer and its
// choices (a stream's preamble chunk, which holds no choice, is left out as before).
func TestAzureContentFilterIsTheClientsRefusal(t *testing.T) {
	env := nodetest.Start(t, nodetest.CloudCatalog, nodetest.Options{})
	const prompt = "please trip the content filter"
	cases := []struct {
		name, path, body string
		want             []string // substrings of the answer
	}{
		{"chat", "/v1/chat/completions", `{"model":"az","messages":[{"role":"user","content":"` + prompt + `"}]}`,
			[]string{`"finish_reason":"content_filter"`, `"prompt_filter_results"`, `"content_filter_results"`}},
		{"chat stream", "/v1/chat/completions", `{"model":"az","stream":true,"messages":[{"role":"user","content":"` + prompt + `"}]}`,
			[]string{`"finish_reason":"content_filter","content_filter_results":{"hate"`, "data: [DONE]"}},
		{"messages", "/v1/messages", `{"model":"az","max_tokens":50,"messages":[{"role":"user","content":"` + prompt + `"}]}`,
			[]string{`"stop_reason":"refusal"`}},
		{"responses", "/v1/responses", `{"model":"az","input":"` + prompt + `"}`,
			[]string{`"status":"incomplete"`, `"incomplete_details":{"reason":"content_filter"}`}},
		{"gemini", "/v1beta/models/az:generateContent", `{"contents":[{"role":"user","parts":[{"text":"` + prompt + `"}]}]}`,
			[]string{`"finishReason":"SAFETY"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Post(c.path, env.Key, c.body, "anthropic-version", "2023-06-01")
			body := string(nodetest.Read(t, resp))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			for _, w := range c.want {
				if !strings.Contains(body, w) {
					t.Errorf("answer lacks %s:\n%s", w, body)
				}
			}
		})
	}
}

// Azure's embeddings and images are the deployment's too; every route carries its static
// headers and query parameters, and a credential header of the operator's choosing.
const azureMediaCatalog = `
models:
  - id: emb
    kind: embedding
    pricing: {prompt: "0.0000001"}
    routes:
      - {id: az-emb, provider: azure, format: chat, base_url: "{{SIM}}/r/az-emb", upstream_model: up-emb, credential_env: NODETEST_SIM_KEY,
         azure: {deployment: emb-prod, api_version: "2024-10-21"}, headers: {X-Title: Gateway}, query: {trace: "1"}}
  - id: pix
    kind: image
    pricing: {prompt: "0.000005", completion: "0.00004"}
    routes:
      - {id: az-pix, provider: azure, format: chat, base_url: "{{SIM}}/r/az-pix", upstream_model: up-pix, credential_env: NODETEST_SIM_KEY,
         azure: {api_version: v1}}
  - id: plain
    kind: chat
    routes:
      - {id: plain, format: messages, base_url: "{{SIM}}/r/plain/v1", upstream_model: up-plain, credential_env: NODETEST_SIM_KEY,
         headers: {HTTP-Referer: "https://example.com", X-Title: Example}, auth_header: Authorization, auth_prefix: "Bearer "}
`

func TestAzureMediaAndRouteExtras(t *testing.T) {
	env := nodetest.Start(t, azureMediaCatalog, nodetest.Options{})
	cases := []struct {
		name, path, body, route, uri string
		headers                      map[string]string
	}{
		{"embeddings on a deployment, with the route's header and query", "/v1/embeddings", `{"model":"emb","input":"hello"}`, "az-emb",
			"/r/az-emb/openai/deployments/emb-prod/embeddings?api-version=2024-10-21&trace=1", map[string]string{"X-Title": "Gateway", "Api-Key": "sim-test-credential"}},
		{"images on the v1 path", "/v1/images/generations", `{"model":"pix","prompt":"a lighthouse"}`, "az-pix",
			"/r/az-pix/openai/v1/images/generations", map[string]string{"Api-Key": "sim-test-credential"}},
		{"a direct route's headers, and its key as a bearer instead of x-api-key", "/v1/chat/completions", chatBody("plain"), "plain",
			"/r/plain/v1/messages", map[string]string{"Http-Referer": "https://example.com", "X-Title": "Example",
				"Authorization": "Bearer sim-test-credential", "X-Api-Key": ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Post(c.path, env.Key, c.body)
			if body := nodetest.Read(t, resp); resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if uri := env.Sim.LastRequestURI(c.route); uri != c.uri {
				t.Errorf("called %s, want %s", uri, c.uri)
			}
			h := env.Sim.LastHeaders(c.route)
			for k, want := range c.headers {
				if got := h.Get(k); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
		})
	}
}

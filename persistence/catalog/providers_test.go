package catalog

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// routeYAML is a one-model catalog whose one route is r (a YAML flow mapping's members).
func routeYAML(r string) string {
	return "models:\n  - id: m1\n    kind: chat\n    routes: [{id: r1, " + r + "}]\n"
}

func TestCloudRoutesLoad(t *testing.T) {
	t.Setenv("T_AWS_KEY", "AKID")
	t.Setenv("T_AWS_SECRET", "secret")
	t.Setenv("T_AZURE_KEY", "k")
	t.Setenv("AZURE_TENANT_ID", "tenant")
	t.Setenv("AZURE_CLIENT_ID", "client")
	t.Setenv("AZURE_CLIENT_SECRET", "s")
	sa := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(sa, []byte(`{"type":"service_account"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name              string
		route             string
		baseURL, authKind string
	}{
		{"bedrock derives its host", "provider: bedrock, format: messages, aws: {region: eu-west-3, access_key_env: T_AWS_KEY, secret_key_env: T_AWS_SECRET}",
			"https://bedrock-runtime.eu-west-3.amazonaws.com", AuthSigV4},
		{"bedrock on the default chain", "provider: bedrock, format: converse, aws: {region: us-east-1}", "https://bedrock-runtime.us-east-1.amazonaws.com", AuthSigV4},
		{"bedrock with an API key", "provider: bedrock, format: converse, aws: {region: us-east-1}, credential_env: T_AZURE_KEY", "https://bedrock-runtime.us-east-1.amazonaws.com", AuthAPIKey},
		{"vertex regional", "provider: vertex, format: messages, vertex: {project: my-proj-1, location: us-east5, credentials_file: " + sa + "}",
			"https://us-east5-aiplatform.googleapis.com", AuthGoogleOAuth},
		{"vertex global on ADC", "provider: vertex, format: gemini, vertex: {project: my-proj-1, location: global}", "https://aiplatform.googleapis.com", AuthGoogleOAuth},
		{"azure with a key", "provider: azure, format: chat, base_url: 'https://r.openai.azure.com/', credential_env: T_AZURE_KEY, azure: {deployment: gpt-4o, api_version: '2024-10-21'}",
			"https://r.openai.azure.com", AuthAPIKey},
		{"azure v1 with Entra", "provider: azure, format: responses, base_url: 'https://r.openai.azure.com', azure: {api_version: v1, entra: {}}",
			"https://r.openai.azure.com", AuthEntra},
		{"direct with extras", "format: chat, base_url: 'https://openrouter.ai/api/v1', credential_env: T_AZURE_KEY, headers: {HTTP-Referer: 'https://example.com', X-Title: Demo}, query: {a: b}, auth_header: X-Key, auth_prefix: 'Key '",
			"https://openrouter.ai/api/v1", AuthAPIKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat, err := Parse("f.yaml", []byte(routeYAML(c.route)))
			if err != nil {
				t.Fatal(err)
			}
			r, _ := cat.Route("r1")
			if r.BaseURL != c.baseURL || r.AuthKind() != c.authKind {
				t.Errorf("base_url %s, auth %s; want %s, %s", r.BaseURL, r.AuthKind(), c.baseURL, c.authKind)
			}
		})
	}
	cat, _ := Parse("f.yaml", []byte(routeYAML(cases[len(cases)-1].route)))
	r, _ := cat.Route("r1")
	if want := (http.Header{"Http-Referer": {"https://example.com"}, "X-Title": {"Demo"}}); r.Headers.Get("Http-Referer") != "https://example.com" || len(r.Headers) != len(want) {
		t.Errorf("headers = %v, want %v", r.Headers, want)
	}
	if r.Query["a"] != "b" || r.AuthHeader != "X-Key" || r.AuthPrefix != "Key " {
		t.Errorf("query %v, auth header %q prefix %q", r.Query, r.AuthHeader, r.AuthPrefix)
	}
	cat, _ = Parse("f.yaml", []byte(routeYAML(cases[6].route)))
	r, _ = cat.Route("r1")
	if e := r.Azure.Entra; e.AuthorityURL != "https://login.microsoftonline.com" || e.Scope != "https://cognitiveservices.azure.com/.default" || e.TenantIDEnv != "AZURE_TENANT_ID" {
		t.Errorf("entra defaults = %+v", *e)
	}
}

func TestCloudRouteErrorsNameTheField(t *testing.T) {
	t.Setenv("T_KEY", "k")
	cases := []struct {
		name, route, want string
	}{
		{"unknown provider", "provider: ibm, format: chat, base_url: 'http://x'", `routes[0].provider: "ibm" must be bedrock, vertex or azure`},
		{"bedrock without region", "provider: bedrock, format: messages, aws: {}", `routes[0].aws.region: "" must be an AWS region such as us-east-1`},
		{"bedrock without aws", "provider: bedrock, format: messages", "routes[0].aws: a bedrock route needs aws: {region: …}"},
		{"bedrock chat", "provider: bedrock, format: chat, aws: {region: us-east-1}", `routes[0].format: "chat" must be messages or converse for provider bedrock`},
		{"converse is bedrock's", "format: converse, base_url: 'http://x'", `routes[0].format: "converse" must be chat, messages, gemini or responses for a direct route`},
		{"half an aws key pair", "provider: bedrock, format: messages, aws: {region: us-east-1, access_key_env: T_KEY}", "routes[0].aws: access_key_env and secret_key_env go together"},
		{"aws key env unset", "provider: bedrock, format: messages, aws: {region: us-east-1, access_key_env: T_UNSET_1, secret_key_env: T_KEY}", "routes[0].aws.access_key_env: environment variable T_UNSET_1 is not set"},
		{"vertex without project", "provider: vertex, format: gemini, vertex: {location: us-central1}", `routes[0].vertex.project: "" must be a Google Cloud project id or number`},
		{"vertex without location", "provider: vertex, format: gemini, vertex: {project: my-project}", `routes[0].vertex.location: "" must be a Vertex AI location`},
		{"vertex key file missing", "provider: vertex, format: gemini, vertex: {project: my-project, location: us-central1, credentials_file: /nonexistent/sa.json}", "routes[0].vertex.credentials_file: cannot be read"},
		{"vertex with a static key", "provider: vertex, format: gemini, credential_env: T_KEY, vertex: {project: my-project, location: us-central1}", "routes[0].credential_env: a vertex route authenticates with OAuth2"},
		{"azure without deployment", "provider: azure, format: chat, base_url: 'https://r.openai.azure.com', credential_env: T_KEY, azure: {api_version: '2024-10-21'}", "routes[0].azure.deployment: is required"},
		{"azure without api_version", "provider: azure, format: chat, base_url: 'https://r.openai.azure.com', credential_env: T_KEY, azure: {deployment: d}", "routes[0].azure.api_version: is required"},
		{"azure without base_url", "provider: azure, format: chat, credential_env: T_KEY, azure: {deployment: d, api_version: v1}", "routes[0].base_url: is required for an azure route"},
		{"azure without a credential", "provider: azure, format: chat, base_url: 'https://r.openai.azure.com', azure: {deployment: d, api_version: v1}", "routes[0].credential_env: an azure route needs its api-key's variable here"},
		{"azure settings on a direct route", "format: chat, base_url: 'http://x', azure: {deployment: d}", "routes[0].azure: is only for provider azure"},
		{"api-version in the query", "provider: azure, format: chat, base_url: 'https://r.openai.azure.com', credential_env: T_KEY, azure: {deployment: d, api_version: v1}, query: {api-version: x}", "routes[0].query.api-version: is azure.api_version's to set"},
		{"a reserved header", "format: chat, base_url: 'http://x', headers: {Authorization: 'Bearer x'}", "routes[0].headers.Authorization: is set by the gateway"},
		{"a bad header name", "format: chat, base_url: 'http://x', headers: {'bad name': x}", `routes[0].headers: "bad name" is not a header name`},
		{"auth_header without a key", "format: chat, base_url: 'http://x', auth_header: X-Key", "routes[0].auth_header: names the header of credential_env's secret"},
		{"auth_prefix alone", "format: chat, base_url: 'http://x', credential_env: T_KEY, auth_prefix: 'Key '", "routes[0].auth_prefix: goes with auth_header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(routeYAML(c.route)))
			if err == nil || !strings.Contains(err.Error(), "f.yaml: model m1: "+c.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

func TestVideoModelsStayOffClouds(t *testing.T) {
	t.Setenv("T_KEY", "k")
	y := "models:\n  - id: m1\n    kind: video\n    routes: [{id: r1, provider: azure, format: chat, base_url: 'https://r.openai.azure.com', credential_env: T_KEY, azure: {deployment: d, api_version: v1}}]\n"
	_, err := Parse("f.yaml", []byte(y))
	if want := "f.yaml: model m1: routes[0].provider: a video model's routes are the provider's own video job API, not a cloud's"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v\nwant it to contain %q", err, want)
	}
}

package simulator

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

const azureChatPath = "/openai/deployments/gpt-prod/chat/completions?api-version=2024-10-21"

var azureKey = map[string]string{"api-key": "azure-key"}

// The safe annotations Azure puts on prompts and on generated text.
const (
	promptFilterJSON = `[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},` +
		`"jailbreak":{"filtered":false,"detected":false},"self_harm":{"filtered":false,"severity":"safe"},` +
		`"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}}]`
	completionFilterJSON = `{"hate":{"filtered":false,"severity":"safe"},"protected_material_code":{"filtered":false,"detected":false},` +
		`"protected_material_text":{"filtered":false,"detected":false},"self_harm":{"filtered":false,"severity":"safe"},` +
		`"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}`
	filteredJSON = `{"hate":{"filtered":false,"severity":"safe"},"protected_material_code":{"filtered":false,"detected":false},` +
		`"protected_material_text":{"filtered":false,"detected":false},"self_harm":{"filtered":false,"severity":"safe"},` +
		`"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":true,"severity":"high"}}`
)

// A deployment path answers as its deployment, whatever the body names, with Azure's
// annotations; the v1 path takes the deployment from the body.
func TestAzureChat(t *testing.T) {
	_, base := startSim(t)
	for _, tc := range []struct{ name, path, body string }{
		{"deployment path", azureChatPath, `{"messages":[{"role":"user","content":"reply with 3 words"}]}`},
		{"deployment path, body model ignored", azureChatPath, `{"model":"gpt-4o","messages":[{"role":"user","content":"reply with 3 words"}]}`},
		{"v1 path", "/openai/v1/chat/completions", `{"model":"gpt-prod","messages":[{"role":"user","content":"reply with 3 words"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := callHeaders(t, http.MethodPost, base+tc.path, tc.body, azureKey)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, data)
			}
			assertJSON(t, without(t, data, "id", "created"), `{"object":"chat.completion","model":"gpt-prod","system_fingerprint":"fp_simulator",
				"choices":[{"index":0,"message":{"role":"assistant","content":"Simulated reply from","refusal":null},"logprobs":null,
					"finish_reason":"stop","content_filter_results":`+completionFilterJSON+`}],
				"usage":{"prompt_tokens":4,"completion_tokens":3,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":0},
					"completion_tokens_details":{"reasoning_tokens":0}},
				"prompt_filter_results":`+promptFilterJSON+`}`)
		})
	}
}

// A stream opens with the preamble, then chat chunks annotated where they carry text.
func TestAzureChatStream(t *testing.T) {
	_, base := startSim(t)
	resp, data := callHeaders(t, http.MethodPost, base+azureChatPath,
		`{"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"reply with 2 words"}]}`, azureKey)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	events := parseSSE(t, string(data))
	if len(events) != 7 || events[6] != "[DONE]" {
		t.Fatalf("events %q", events)
	}
	assertJSON(t, []byte(events[0]), `{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":`+promptFilterJSON+`}`)
	want := []string{`{}`, completionFilterJSON, completionFilterJSON, `{}`}
	for i, ev := range events[1:5] {
		v := decode(t, []byte(ev))
		if str(v, "model") != "gpt-prod" {
			t.Errorf("chunk %d model %q", i+1, str(v, "model"))
		}
		assertJSON(t, marshal(t, path(v, "choices", 0, "content_filter_results")), want[i])
	}
	if v := decode(t, []byte(events[5])); path(v, "choices", 0) != nil || num(v, "usage", "total_tokens") != 6 {
		t.Errorf("usage chunk %s", events[5])
	}
}

// "content filter" in the prompt makes Azure withhold the answer.
func TestAzureContentFilter(t *testing.T) {
	_, base := startSim(t)
	body := `{"messages":[{"role":"user","content":"trip the content filter"}]}`
	resp, data := callHeaders(t, http.MethodPost, base+azureChatPath, body, azureKey)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	v := decode(t, data)
	assertJSON(t, marshal(t, path(v, "choices", 0)), `{"index":0,"message":{"role":"assistant","content":null,"refusal":null},`+
		`"logprobs":null,"finish_reason":"content_filter","content_filter_results":`+filteredJSON+`}`)

	_, data = callHeaders(t, http.MethodPost, base+azureChatPath, strings.Replace(body, "{", `{"stream":true,`, 1), azureKey)
	events := parseSSE(t, string(data))
	if len(events) != 4 || events[3] != "[DONE]" {
		t.Fatalf("events %q", events)
	}
	last := decode(t, []byte(events[2]))
	if str(last, "choices", 0, "finish_reason") != "content_filter" || strings.Contains(string(data), `"content":"`+"Simulated") {
		t.Errorf("filtered stream %s", data)
	}
	assertJSON(t, marshal(t, path(last, "choices", 0, "content_filter_results")), filteredJSON)

	// Other formats have no such filter.
	_, data = post(t, base+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"trip the content filter"}]}`)
	if str(decode(t, data), "choices", 0, "finish_reason") != "stop" {
		t.Errorf("OpenAI chat filtered: %s", data)
	}
}

// Auth and the api-version rule, in Azure's words.
func TestAzureAuthAndVersions(t *testing.T) {
	s, base := startSim(t)
	chat := `{"messages":[{"role":"user","content":"hi"}]}`
	keyDenied := `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. ` +
		`Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}`
	tokenDenied := `{"error":{"code":"401","message":"Unauthorized. Access token is missing, invalid, audience is incorrect ` +
		`(https://cognitiveservices.azure.com), or have expired."}}`
	notFound := `{"error":{"code":"404","message":"Resource not found"}}`
	entra := entraToken(t, base+"/r/az")
	google := googleToken(t, s, base+"/oauth2/token")
	tests := []struct {
		name, path string
		headers    map[string]string
		status     int
		body       string
	}{
		{"api-key", azureChatPath, azureKey, 200, ""},
		{"Entra token", azureChatPath, map[string]string{"Authorization": "Bearer " + entra}, 200, ""},
		{"no credential", azureChatPath, nil, 401, keyDenied},
		{"empty api-key", azureChatPath, map[string]string{"api-key": " "}, 401, keyDenied},
		{"unknown token", azureChatPath, map[string]string{"Authorization": "Bearer made-up"}, 401, tokenDenied},
		{"a Google token", azureChatPath, map[string]string{"Authorization": "Bearer " + google}, 401, tokenDenied},
		{"no api-version", "/openai/deployments/gpt-prod/chat/completions", azureKey, 404, notFound},
		{"no api-version, embeddings", "/openai/deployments/gpt-prod/embeddings", azureKey, 404, notFound},
		{"no api-version, responses", "/openai/responses", azureKey, 404, notFound},
		{"api-version not a date", "/openai/deployments/gpt-prod/chat/completions?api-version=latest", azureKey, 400,
			`{"error":{"code":"BadRequest","message":"API version not supported"}}`},
		{"preview api-version", "/openai/deployments/gpt-prod/chat/completions?api-version=2025-04-01-preview", azureKey, 200, ""},
		{"v1 needs none", "/openai/v1/chat/completions", azureKey, 400, ""}, // no model in the body: OpenAI's 400
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := callHeaders(t, http.MethodPost, base+tc.path, chat, tc.headers)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, data)
			}
			if tc.body != "" {
				assertJSON(t, data, tc.body)
			}
		})
	}
	if got := s.TokenGrants("az"); got != 1 {
		t.Errorf("TokenGrants(az) = %d", got)
	}
	if got := s.LastRequestURI(""); got != "/openai/v1/chat/completions" {
		t.Errorf("LastRequestURI = %q", got)
	}
}

func TestEntraTokenEndpoint(t *testing.T) {
	s, base := startSim(t)
	s.SetBehavior("short", Behavior{TokenLifetime: 90_000_000_000}) // 90 s
	good := url.Values{"grant_type": {"client_credentials"}, "client_id": {"app"}, "client_secret": {"s"},
		"scope": {"https://cognitiveservices.azure.com/.default"}}
	resp, data := postForm(t, base+"/r/short/72f988bf-86f1-41af-91ab-2d7cd011db47/oauth2/v2.0/token", good)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	v := decode(t, data)
	if str(v, "token_type") != "Bearer" || num(v, "expires_in") != 89 || num(v, "ext_expires_in") != 89 || str(v, "access_token") == "" {
		t.Errorf("grant %s", data)
	}
	with := func(k, val string) url.Values {
		f := url.Values{}
		for key, vals := range good {
			f[key] = vals
		}
		f.Set(k, val)
		return f
	}
	tests := []struct {
		name   string
		form   url.Values
		status int
		code   string
		aadsts int
	}{
		{"authorization code", with("grant_type", "authorization_code"), 400, "unsupported_grant_type", 70003},
		{"no client id", with("client_id", ""), 400, "invalid_request", 900144},
		{"no secret", with("client_secret", ""), 401, "invalid_client", 7000216},
		{"another resource", with("scope", "https://graph.microsoft.com/.default"), 400, "invalid_scope", 1002012},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := postForm(t, base+"/tenant/oauth2/v2.0/token", tc.form)
			v := decode(t, data)
			if resp.StatusCode != tc.status || str(v, "error") != tc.code || num(v, "error_codes", 0) != tc.aadsts ||
				!strings.HasPrefix(str(v, "error_description"), "AADSTS") {
				t.Errorf("status %d: %s", resp.StatusCode, data)
			}
		})
	}
	if got := s.TokenGrants("short"); got != 1 {
		t.Errorf("TokenGrants = %d", got)
	}
}

// Embeddings, images and responses are OpenAI's answers at Azure's paths.
func TestAzureOtherEndpoints(t *testing.T) {
	_, base := startSim(t)
	tests := []struct{ name, path, body, check string }{
		{"deployment embeddings", "/openai/deployments/emb-prod/embeddings?api-version=2024-10-21", `{"input":"hello"}`, "model=emb-prod"},
		{"v1 embeddings", "/openai/v1/embeddings", `{"model":"emb-prod","input":"hello"}`, "model=emb-prod"},
		{"responses", "/openai/responses?api-version=2025-04-01-preview", `{"model":"gpt-prod","input":"reply with 2 words"}`, "model=gpt-prod"},
		{"v1 responses", "/openai/v1/responses", `{"model":"gpt-prod","input":"reply with 2 words"}`, "model=gpt-prod"},
		{"deployment images", "/openai/deployments/img/images/generations?api-version=2024-10-21", `{"prompt":"a fox","size":"64x64","response_format":"b64_json"}`, "data"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := callHeaders(t, http.MethodPost, base+tc.path, tc.body, azureKey)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, data)
			}
			v := decode(t, data)
			if model, ok := strings.CutPrefix(tc.check, "model="); ok && str(v, "model") != model {
				t.Errorf("model %q, want %q", str(v, "model"), model)
			}
			if tc.check == "data" && str(v, "data", 0, "b64_json") == "" {
				t.Errorf("no image: %.200s", data)
			}
		})
	}
}

// Injected failures: Azure's own shape for throttling, the model service's for the rest.
func TestAzureInjectedFailures(t *testing.T) {
	s, base := startSim(t)
	tests := []struct {
		behavior Behavior
		status   int
		header   map[string]string
		body     string
	}{
		{Behavior{FailStatus: 429, RetryAfter: 6}, 429, map[string]string{"Retry-After": "6"}, `{"error":{"code":"429","message":` +
			`"Requests to the Azure OpenAI API have exceeded the call rate limit of your current pricing tier (simulated). Please retry later."}}`},
		{Behavior{FailKind: FailRetryHint, RetryDelay: 1500_000_000}, 429, map[string]string{"Retry-After-Ms": "1500", "Retry-After": ""},
			`{"error":{"code":"429","message":"Requests to the Azure OpenAI API have exceeded the call rate limit of your current pricing tier (simulated). Please retry later."}}`},
		{Behavior{FailStatus: 500}, 500, nil, `{"error":{"message":"The server had an error while processing your request (simulated).",` +
			`"type":"server_error","param":null,"code":null}}`},
		{Behavior{FailStatus: 404}, 404, nil, `{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist. ` +
			`If you created the deployment within the last 5 minutes, please wait a moment and try again."}}`},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d%s", tc.behavior.FailStatus, tc.behavior.FailKind), func(t *testing.T) {
			s.SetBehavior("down", tc.behavior)
			resp, data := callHeaders(t, http.MethodPost, base+"/r/down"+azureChatPath, `{"messages":[{"role":"user","content":"hi"}]}`, azureKey)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d: %s", resp.StatusCode, data)
			}
			for k, v := range tc.header {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if resp.Header.Get("Apim-Request-Id") == "" {
				t.Error("no apim-request-id")
			}
			assertJSON(t, data, tc.body)
		})
	}
}

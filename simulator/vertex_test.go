package simulator

import (
	"crypto/rand"
	"crypto/rsa"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2/jws"
)

const vertexModels = "/v1/projects/p1/locations/us-central1/publishers/"

// golang.org/x/oauth2/google, given the key file, fetches one token at the simulator's
// endpoint and reuses it; Vertex answers Gemini exactly as the Gemini API does.
func TestVertexGeminiWithServiceAccount(t *testing.T) {
	s, base := startSim(t)
	client := googleClient(t, s, base+"/r/vx/oauth2/token")
	body := `{"contents":[{"role":"user","parts":[{"text":"Say hello cached 2 reply with 5 words"}]}],
		"generationConfig":{"thinkingConfig":{"includeThoughts":true}}}`
	_, direct := callHeaders(t, http.MethodPost, base+"/v1beta/models/gemini-sim:generateContent", body, map[string]string{"x-goog-api-key": "k"})
	for range 3 {
		resp, err := client.Post(base+"/r/vx"+vertexModels+"google/models/gemini-sim:generateContent", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		data := readAll(t, resp)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, data)
		}
		assertJSON(t, without(t, data, "responseId"), string(without(t, direct, "responseId")))
	}
	if got := s.TokenGrants("vx"); got != 1 {
		t.Errorf("TokenGrants = %d, want one token for three calls", got)
	}
	if got := s.Calls("vx"); got != 3 {
		t.Errorf("Calls = %d: the token endpoint is no API call", got)
	}
	_, view := call(t, http.MethodGet, base+"/_sim/routes/vx", "", "-")
	if num(decode(t, view), "token_grants") != 1 {
		t.Errorf("control view %s", view)
	}
	// The stream is Gemini's, SSE included.
	resp, err := client.Post(base+"/r/vx"+vertexModels+"google/models/gemini-sim:streamGenerateContent?alt=sse", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	data := readAll(t, resp)
	_, directStream := callHeaders(t, http.MethodPost, base+"/v1beta/models/gemini-sim:streamGenerateContent?alt=sse", body, map[string]string{"x-goog-api-key": "k"})
	if string(NormalizeTranscript(data)) != string(NormalizeTranscript(directStream)) {
		t.Errorf("Vertex stream differs from Gemini's:\n%s\n%s", data, directStream)
	}
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A token ends with its lifetime (or ExpireTokens); an unknown one never worked. Both get
// Vertex's 401; a token without the cloud-platform scope a 403.
func TestVertexTokenExpiry(t *testing.T) {
	s, base := startSim(t)
	s.SetBehavior("short", Behavior{TokenLifetime: time.Second})
	tokenURL := base + "/r/short/oauth2/token"
	resp, data := postForm(t, tokenURL, url.Values{"grant_type": {jwtBearerGrant}, "assertion": {assertion(t, tokenURL, GoogleCloudPlatformScope)}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("grant: %d %s", resp.StatusCode, data)
	}
	grant := decode(t, data)
	if num(grant, "expires_in") != 1 || str(grant, "token_type") != "Bearer" || !strings.HasPrefix(str(grant, "access_token"), "ya29.") {
		t.Errorf("grant %s", data)
	}
	gemini := base + vertexModels + "google/models/gemini-sim:generateContent"
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	if resp, data := callHeaders(t, http.MethodPost, gemini, body, bearer(str(grant, "access_token"))); resp.StatusCode != http.StatusOK {
		t.Fatalf("fresh token: %d %s", resp.StatusCode, data)
	}
	invalid := func(reason string) string {
		return `{"error":{"code":401,"message":"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie ` +
			`or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",` +
			`"status":"UNAUTHENTICATED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"` + reason + `",` +
			`"domain":"googleapis.com","metadata":{"service":"aiplatform.googleapis.com"}}]}}`
	}
	time.Sleep(1100 * time.Millisecond)
	long := googleToken(t, s, base+"/oauth2/token") // the default route's hour-long lifetime
	noScope := tokenFor(t, base+"/oauth2/token", "https://www.googleapis.com/auth/userinfo.email")
	tests := []struct {
		name    string
		headers map[string]string
		status  int
		body    string
	}{
		{"expired", bearer(str(grant, "access_token")), 401, invalid("ACCESS_TOKEN_EXPIRED")},
		{"unknown", bearer("ya29.made-up"), 401, invalid("ACCESS_TOKEN_TYPE_UNSUPPORTED")},
		{"an api key", map[string]string{"x-goog-api-key": "AIza-sim"}, 401, `{"error":{"code":401,"message":"Request is missing required ` +
			`authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. ` +
			`See https://developers.google.com/identity/sign-in/web/devconsole-project.","status":"UNAUTHENTICATED","details":[` +
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"CREDENTIALS_MISSING","domain":"googleapis.com",` +
			`"metadata":{"service":"aiplatform.googleapis.com"}}]}}`},
		{"without the cloud-platform scope", bearer(noScope), 403, `{"error":{"code":403,"message":"Request had insufficient authentication scopes.",` +
			`"status":"PERMISSION_DENIED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"ACCESS_TOKEN_SCOPE_INSUFFICIENT",` +
			`"domain":"googleapis.com","metadata":{"service":"aiplatform.googleapis.com"}}]}}`},
		{"an hour-long token", bearer(long), 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := callHeaders(t, http.MethodPost, gemini, body, tc.headers)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, data)
			}
			if tc.body != "" {
				assertJSON(t, data, tc.body)
			}
		})
	}
	s.ExpireTokens()
	if resp, data := callHeaders(t, http.MethodPost, gemini, body, bearer(long)); resp.StatusCode != 401 {
		t.Errorf("after ExpireTokens: %d %s", resp.StatusCode, data)
	}
	if got := s.TokenGrants("short"); got != 1 {
		t.Errorf("TokenGrants(short) = %d", got)
	}
}

// assertion signs a JWT-bearer assertion for the simulator's account, as x/oauth2/jwt does.
func assertion(t *testing.T, aud, scope string) string {
	t.Helper()
	return signAssertion(t, serviceAccountKey().key, &jws.ClaimSet{Iss: GoogleClientEmail, Aud: aud, Scope: scope})
}

func signAssertion(t *testing.T, key *rsa.PrivateKey, claims *jws.ClaimSet) string {
	t.Helper()
	a, err := jws.Encode(&jws.Header{Algorithm: "RS256", Typ: "JWT", KeyID: serviceAccountKey().id}, claims, key)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// tokenFor runs the grant for scope and returns the token.
func tokenFor(t *testing.T, tokenURL, scope string) string {
	t.Helper()
	resp, data := postForm(t, tokenURL, url.Values{"grant_type": {jwtBearerGrant}, "assertion": {assertion(t, tokenURL, scope)}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("grant: %d %s", resp.StatusCode, data)
	}
	return str(decode(t, data), "access_token")
}

// The token endpoint refuses what Google refuses, with OAuth's error body.
func TestGoogleTokenEndpointRefusals(t *testing.T) {
	_, base := startSim(t)
	tokenURL := base + "/oauth2/token"
	otherKey, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	scope := GoogleCloudPlatformScope
	tests := []struct {
		name      string
		form      url.Values
		code      string
		desc      string
		wantGrant bool
	}{
		{"signed by another key", url.Values{"grant_type": {jwtBearerGrant}, "assertion": {signAssertion(t, otherKey,
			&jws.ClaimSet{Iss: GoogleClientEmail, Aud: tokenURL, Scope: scope})}}, "invalid_grant", "Invalid JWT Signature.", false},
		{"another account", url.Values{"grant_type": {jwtBearerGrant}, "assertion": {signAssertion(t, serviceAccountKey().key,
			&jws.ClaimSet{Iss: "someone@else.iam.gserviceaccount.com", Aud: tokenURL, Scope: scope})}}, "invalid_grant", "Invalid grant: account not found", false},
		{"another audience", url.Values{"grant_type": {jwtBearerGrant}, "assertion": {assertion(t, "http://elsewhere/token", scope)}},
			"invalid_grant", "Invalid JWT: Failed audience check. The expected value was " + tokenURL + ".", false},
		{"Google's audience", url.Values{"grant_type": {jwtBearerGrant}, "assertion": {assertion(t, "https://oauth2.googleapis.com/token", scope)}},
			"", "", true},
		{"expired", url.Values{"grant_type": {jwtBearerGrant}, "assertion": {signAssertion(t, serviceAccountKey().key,
			&jws.ClaimSet{Iss: GoogleClientEmail, Aud: tokenURL, Scope: scope, Iat: now.Add(-2 * time.Hour).Unix(), Exp: now.Add(-time.Hour).Unix()})}},
			"invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.", false},
		{"two hours long", url.Values{"grant_type": {jwtBearerGrant}, "assertion": {signAssertion(t, serviceAccountKey().key,
			&jws.ClaimSet{Iss: GoogleClientEmail, Aud: tokenURL, Scope: scope, Iat: now.Unix(), Exp: now.Add(2 * time.Hour).Unix()})}},
			"invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.", false},
		{"no scope", url.Values{"grant_type": {jwtBearerGrant}, "assertion": {assertion(t, tokenURL, "")}},
			"invalid_scope", "Invalid OAuth scope or ID token audience provided.", false},
		{"no assertion", url.Values{"grant_type": {jwtBearerGrant}}, "invalid_request", "Missing required parameter: assertion", false},
		{"another grant", url.Values{"grant_type": {"client_credentials"}}, "unsupported_grant_type", "Invalid grant_type: client_credentials", false},
		{"not a JWT", url.Values{"grant_type": {jwtBearerGrant}, "assertion": {"abc"}}, "invalid_grant",
			"Invalid JWT: the header is not base64url-encoded JSON.", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := postForm(t, tokenURL, tc.form)
			if tc.wantGrant {
				if v := decode(t, data); resp.StatusCode != http.StatusOK || num(v, "expires_in") != 3599 || str(v, "token_type") != "Bearer" {
					t.Errorf("status %d: %s", resp.StatusCode, data)
				}
				return
			}
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d: %s", resp.StatusCode, data)
			}
			assertJSON(t, data, `{"error":"`+tc.code+`","error_description":`+string(marshal(t, tc.desc))+`}`)
		})
	}
}

// The key file is what golang.org/x/oauth2/google reads, and the control API serves it.
func TestServiceAccountJSON(t *testing.T) {
	s, base := startSim(t)
	file := decode(t, s.ServiceAccountJSON("http://sim/r/x/oauth2/token"))
	if str(file, "type") != "service_account" || str(file, "project_id") != GoogleProjectID || str(file, "client_email") != GoogleClientEmail ||
		str(file, "token_uri") != "http://sim/r/x/oauth2/token" || !strings.HasPrefix(str(file, "private_key"), "-----BEGIN PRIVATE KEY-----\n") ||
		str(file, "private_key_id") != serviceAccountKey().id {
		t.Errorf("key file %v", file)
	}
	_, served := call(t, http.MethodGet, base+"/_sim/google/service-account", "", "-")
	if str(decode(t, served), "token_uri") != base+"/oauth2/token" || str(decode(t, served), "private_key") != str(file, "private_key") {
		t.Errorf("served key file %s", served)
	}
}

// Claude on Vertex: Anthropic's body without a model, with Vertex's anthropic_version, and
// Anthropic's answers (ids marked vrtx); the platform's refusals are Google's, the model's
// Anthropic's.
func TestVertexClaude(t *testing.T) {
	s, base := startSim(t)
	tok := googleToken(t, s, base+"/oauth2/token")
	headers := map[string]string{"Authorization": "Bearer " + tok}
	claude := base + vertexModels + "anthropic/models/claude-sim@20250101:"
	rest := `"max_tokens":1024,"messages":[{"role":"user","content":"Check everything in parallel"}],"tools":` + messagesToolsJSON + `}`

	_, direct := callHeaders(t, http.MethodPost, base+"/v1/messages", `{"model":"claude-sim-20250101",`+rest, messagesHeaders)
	resp, data := callHeaders(t, http.MethodPost, claude+"rawPredict", `{"anthropic_version":"vertex-2023-10-16",`+rest, headers)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	if !strings.HasPrefix(str(decode(t, data), "id"), "msg_vrtx_") || !strings.HasPrefix(str(decode(t, data), "content", 0, "id"), "toolu_vrtx_") {
		t.Errorf("ids of %s", data)
	}
	unmark := func(b []byte) string { return strings.ReplaceAll(string(NormalizeTranscript(b)), "_vrtx_", "_") }
	assertJSON(t, []byte(unmark(data)), unmark(direct))

	_, directStream := callHeaders(t, http.MethodPost, base+"/v1/messages", `{"model":"claude-sim-20250101","stream":true,`+rest, messagesHeaders)
	resp, data = callHeaders(t, http.MethodPost, claude+"streamRawPredict", `{"anthropic_version":"vertex-2023-10-16","stream":true,`+rest, headers)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || unmark(data) != unmark(directStream) {
		t.Errorf("stream %d %q:\n%s\nwant\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), data, directStream)
	}

	googleErr := func(msg string) string {
		return `{"error":{"code":400,"message":` + string(marshal(t, msg)) + `,"status":"INVALID_ARGUMENT"}}`
	}
	tests := []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"model in the body", "rawPredict", `{"anthropic_version":"vertex-2023-10-16","model":"claude-sim",` + rest, 400,
			googleErr(`Invalid JSON payload received. Unknown name "model": the model is named by the URL (publishers/anthropic/models/{model}:rawPredict), not the request body.`)},
		{"no anthropic_version", "rawPredict", `{` + rest, 400, googleErr("anthropic_version: Input should be 'vertex-2023-10-16'")},
		{"Bedrock's version", "streamRawPredict", `{"anthropic_version":"bedrock-2023-05-31",` + rest, 400, googleErr("anthropic_version: Input should be 'vertex-2023-10-16'")},
		{"the model refuses", "rawPredict", `{"anthropic_version":"vertex-2023-10-16","messages":[]}`, 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}`},
		{"unknown method", "predict", `{}`, 404,
			`{"error":{"code":404,"message":"Method \"predict\" is not found for publishers/anthropic/models/claude-sim@20250101.","status":"NOT_FOUND"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := callHeaders(t, http.MethodPost, claude+tc.path, tc.body, headers)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d: %s", resp.StatusCode, data)
			}
			assertJSON(t, data, tc.want)
		})
	}
	resp, data = callHeaders(t, http.MethodPost, base+vertexModels+"meta/models/llama:rawPredict", `{}`, headers)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown publisher: %d %s", resp.StatusCode, data)
	}
	assertJSON(t, data, `{"error":{"code":404,"message":"Publisher Model `+"`projects/p1/locations/us-central1/publishers/meta/models/llama`"+` not found.","status":"NOT_FOUND"}}`)

	// Injected failures are Google's, Vertex-worded.
	s.SetBehavior("busy", Behavior{FailStatus: 429, RetryAfter: 4})
	resp, data = callHeaders(t, http.MethodPost, base+"/r/busy"+vertexModels+"anthropic/models/claude-sim:rawPredict",
		`{"anthropic_version":"vertex-2023-10-16",`+rest, headers)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "4" {
		t.Fatalf("injected 429: %d %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	assertJSON(t, data, `{"error":{"code":429,"message":"Resource exhausted (simulated). Please try again later. Please refer to `+
		`https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.","status":"RESOURCE_EXHAUSTED",`+
		`"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"4s"}]}}`)
}

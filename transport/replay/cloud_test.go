package replay

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Cloud routes (provider bedrock, vertex or azure) reach the fake upstream as they would the
// cloud: at the cloud's path, with the cloud's credential. The fake upstream checks both, so
// a recording served to a wrongly signed or wrongly addressed call does not count as a pass.

// The settings every cloud route of the suite uses.
const (
	awsRegion      = "us-east-1"
	awsAccessKey   = "AKIAREPLAYEXAMPLE000" // test-only credentials, named by the env vars below
	awsSecretKey   = "replay/secret/key/for/the/fake/upstream"
	awsKeyEnv      = "REPLAY_AWS_ACCESS_KEY"
	awsSecretEnv   = "REPLAY_AWS_SECRET_KEY"
	vertexProject  = "replay-project"
	vertexLocation = "us-central1"
	azureDeploy    = "d"
	azureVersion   = "2024-10-21"
	replayToken    = "replay-token"  // the access token the fake token endpoint issues
	tokenPath      = "/oauth2/token" // the fake upstream's token endpoint, outside every route's prefix
	upstreamKey    = "replay-test-credential"
)

// cloudPath is where the recording's provider serves the call, and the api-version it
// must carry ("" when none).
func cloudPath(m meta) (path, apiVersion string) {
	switch m.Provider {
	case "bedrock":
		op := map[bool]string{false: "/invoke", true: "/invoke-with-response-stream"}[m.Stream]
		if m.Format == "converse" {
			op = map[bool]string{false: "/converse", true: "/converse-stream"}[m.Stream]
		}
		return "/model/" + m.UpstreamModel + op, ""
	case "vertex":
		prefix := "/v1/projects/" + vertexProject + "/locations/" + vertexLocation + "/publishers/"
		if m.Format == "messages" {
			return prefix + "anthropic/models/" + m.UpstreamModel + map[bool]string{false: ":rawPredict", true: ":streamRawPredict"}[m.Stream], ""
		}
		return prefix + "google/models/" + m.UpstreamModel + map[bool]string{false: ":generateContent", true: ":streamGenerateContent"}[m.Stream], ""
	case "azure":
		if m.Format == "responses" {
			return "/openai/responses", azureVersion
		}
		return "/openai/deployments/" + azureDeploy + "/chat/completions", azureVersion
	}
	return "", ""
}

// cloudRoute is the catalog route's provider settings, after its id, format and base_url.
func cloudRoute(m meta, credentials string) string {
	switch m.Provider {
	case "bedrock":
		return fmt.Sprintf("provider: bedrock, aws: {region: %s, access_key_env: %s, secret_key_env: %s}", awsRegion, awsKeyEnv, awsSecretEnv)
	case "vertex":
		return fmt.Sprintf("provider: vertex, vertex: {project: %s, location: %s, credentials_file: %q}", vertexProject, vertexLocation, credentials)
	case "azure":
		return fmt.Sprintf("provider: azure, azure: {deployment: %s, api_version: %q}, credential_env: REPLAY_UPSTREAM_KEY", azureDeploy, azureVersion)
	}
	return "credential_env: REPLAY_UPSTREAM_KEY"
}

// cloudMisfits checks the credential each cloud sends and the body a cloud takes for
// Anthropic's models (no model, the cloud's anthropic_version; Bedrock: no stream either).
func cloudMisfits(m meta, r *http.Request, raw []byte) []string {
	var out []string
	switch m.Provider {
	case "bedrock":
		if err := checkSigV4(r, raw); err != nil {
			out = append(out, err.Error())
		}
	case "vertex":
		if got := r.Header.Get("Authorization"); got != "Bearer "+replayToken {
			out = append(out, fmt.Sprintf("Authorization = %q, want the token the service account's token_uri issued", got))
		}
	case "azure":
		if got := r.Header.Get("Api-Key"); got != upstreamKey {
			out = append(out, fmt.Sprintf("api-key = %q, want the route's key", got))
		}
	}
	if m.Format != "messages" || m.Provider == "" || m.Status != http.StatusOK {
		return out
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		return append(out, fmt.Sprintf("the body is not a JSON object: %v", err))
	}
	version := map[string]string{"bedrock": `"bedrock-2023-05-31"`, "vertex": `"vertex-2023-10-16"`}[m.Provider]
	if got := string(body["anthropic_version"]); got != version {
		out = append(out, fmt.Sprintf("anthropic_version = %s, want %s", got, version))
	}
	if _, ok := body["model"]; ok {
		out = append(out, "the body names a model; the cloud takes it from the path")
	}
	if _, ok := body["stream"]; ok && m.Provider == "bedrock" {
		out = append(out, "the body has stream; Bedrock takes it from the path")
	}
	return out
}

// checkSigV4 recomputes the request's AWS Signature Version 4 with the test secret, at the
// time and over the headers the request itself names, and compares.
func checkSigV4(r *http.Request, body []byte) error {
	auth := r.Header.Get("Authorization")
	date, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+awsAccessKey+"/") || err != nil {
		return fmt.Errorf("authorization %q (X-Amz-Date %q) is not a SigV4 signature with the route's key", auth, r.Header.Get("X-Amz-Date"))
	}
	if !strings.Contains(auth, "/"+awsRegion+"/bedrock/aws4_request") {
		return fmt.Errorf("authorization %q is not scoped to bedrock in %s", auth, awsRegion)
	}
	_, signed, _ := strings.Cut(auth, "SignedHeaders=")
	signed, _, _ = strings.Cut(signed, ",")
	u := &url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	again, _ := http.NewRequest(r.Method, u.String(), bytes.NewReader(body))
	for _, h := range strings.Split(signed, ";") {
		if h != "host" {
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: awsAccessKey, SecretAccessKey: awsSecretKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), "bedrock", awsRegion, date); err != nil {
		return fmt.Errorf("re-signing: %v", err)
	}
	if want := again.Header.Get("Authorization"); want != auth {
		return fmt.Errorf("the SigV4 signature does not verify with the test secret:\n got %s\nwant %s", auth, want)
	}
	return nil
}

// serveToken answers a service account's JWT-bearer grant (RFC 7523) with a fixed token.
func serveToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" ||
		strings.Count(r.PostForm.Get("assertion"), ".") != 2 {
		http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"access_token":%q,"expires_in":3600,"token_type":"Bearer"}`, replayToken)
}

// cloudCredentials sets the environment cloud routes name and writes a service-account key
// file (a fresh RSA key; its token_uri is the fake upstream's), returning the file's path.
func cloudCredentials(t *testing.T, upstreamURL string) string {
	t.Setenv("REPLAY_UPSTREAM_KEY", upstreamKey)
	t.Setenv(awsKeyEnv, awsAccessKey)
	t.Setenv(awsSecretEnv, awsSecretKey)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	sa, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": vertexProject, "private_key_id": "replay-key",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "replay@" + vertexProject + ".iam.gserviceaccount.com", "client_id": "1",
		"token_uri": upstreamURL + tokenPath,
	})
	path := filepath.Join(t.TempDir(), "service-account.json")
	if err := os.WriteFile(path, sa, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFakeUpstreamChecksCloudCalls: the fake upstream's checks are not vacuous: a call that
// is wrongly addressed, signed or authorized, or whose body a cloud would refuse, is noted.
func TestFakeUpstreamChecksCloudCalls(t *testing.T) {
	invoke := meta{Provider: "bedrock", Format: "messages", Stream: true, Status: 200, UpstreamModel: "anthropic.claude-sonnet-4-5-20250929-v1:0"}
	rawPredict := meta{Provider: "vertex", Format: "messages", Stream: false, Status: 200, UpstreamModel: "claude-sonnet-5"}
	chat := meta{Provider: "azure", Format: "chat", Stream: false, Status: 200, UpstreamModel: "gpt-4o"}
	const bedrockBody = `{"anthropic_version":"bedrock-2023-05-31","max_tokens":8,"messages":[]}`
	signed := func(secret, body string) func(*http.Request) {
		return func(r *http.Request) {
			sum := sha256.Sum256([]byte(body))
			creds := aws.Credentials{AccessKeyID: awsAccessKey, SecretAccessKey: secret}
			if err := v4.NewSigner().SignHTTP(context.Background(), creds, r, hex.EncodeToString(sum[:]), "bedrock", awsRegion, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	header := func(k, v string) func(*http.Request) { return func(r *http.Request) { r.Header.Set(k, v) } }
	cases := []struct {
		name  string
		m     meta
		path  string // below the route's prefix
		body  string
		auth  func(*http.Request)
		wrong []string // the start of each note
	}{
		{"bedrock signed with the test secret", invoke, "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream", bedrockBody, signed(awsSecretKey, bedrockBody), nil},
		{"bedrock signed with another secret", invoke, "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream", bedrockBody, signed("another", bedrockBody),
			[]string{"the SigV4 signature does not verify"}},
		{"bedrock signature over another body", invoke, "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream", bedrockBody, signed(awsSecretKey, "{}"),
			[]string{"the SigV4 signature does not verify"}},
		{"bedrock whole-answer path for a stream", invoke, "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke", bedrockBody, signed(awsSecretKey, bedrockBody),
			[]string{"the gateway called POST /model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke"}},
		{"bedrock body with model and stream", invoke, "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream",
			`{"model":"m","stream":true,"anthropic_version":"bedrock-2023-05-31"}`, signed(awsSecretKey, `{"model":"m","stream":true,"anthropic_version":"bedrock-2023-05-31"}`),
			[]string{"the body names a model", "the body has stream"}},
		{"vertex with the issued token", rawPredict, "/v1/projects/replay-project/locations/us-central1/publishers/anthropic/models/claude-sonnet-5:rawPredict",
			`{"anthropic_version":"vertex-2023-10-16","messages":[]}`, header("Authorization", "Bearer "+replayToken), nil},
		{"vertex with Bedrock's version and another token", rawPredict, "/v1/projects/replay-project/locations/us-central1/publishers/anthropic/models/claude-sonnet-5:rawPredict",
			`{"anthropic_version":"bedrock-2023-05-31","messages":[]}`, header("Authorization", "Bearer other"),
			[]string{"Authorization = \"Bearer other\"", "anthropic_version = \"bedrock-2023-05-31\""}},
		{"azure with the key", chat, "/openai/deployments/d/chat/completions?api-version=2024-10-21", `{"messages":[]}`, header("Api-Key", upstreamKey), nil},
		{"azure without api-version, key as bearer", chat, "/openai/deployments/d/chat/completions", `{"messages":[]}`, header("Authorization", "Bearer "+upstreamKey),
			[]string{"api-version = \"\"", "api-key = \"\""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:9/rec-x"+c.path, bytes.NewReader([]byte(c.body)))
			r.Header.Set("Content-Type", "application/json")
			c.auth(r)
			path, _, _ := strings.Cut(c.path, "?")
			got := misfits(recording{Meta: c.m}, r, path, []byte(c.body))
			if len(got) != len(c.wrong) {
				t.Fatalf("notes = %q, want %d starting %q", got, len(c.wrong), c.wrong)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], c.wrong[i]) {
					t.Errorf("note %d = %q, want it to start %q", i, got[i], c.wrong[i])
				}
			}
		})
	}
}

package simulator

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

const invokeBody = `{"anthropic_version":"bedrock-2023-05-31","max_tokens":100,"messages":[{"role":"user","content":"reply with 3 words"}]}`

// A request signed with aws-sdk-go-v2's signer passes; each way a signature goes wrong gets
// the 403 and exception AWS answers with.
func TestSigV4(t *testing.T) {
	s, base := startSim(t)
	s.AddAWSCredentials(AWSCredentials{AccessKeyID: "ASIATEMPORARY0001", SecretAccessKey: "temp-secret", SessionToken: "session-1"})
	s.AddAWSCredentials(AWSCredentials{AccessKeyID: "ASIAEXPIRED000001", SecretAccessKey: "old-secret", SessionToken: "session-0",
		Expires: time.Now().Add(-time.Minute)})
	url := base + "/r/bedrock/model/anthropic.claude-sim-v1:0/invoke"
	mismatch := "The request signature we calculated does not match the signature you provided. " +
		"Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
	temporary := aws.Credentials{AccessKeyID: "ASIATEMPORARY0001", SecretAccessKey: "temp-secret", SessionToken: "session-1"}
	tests := []struct {
		name      string
		req       func() *http.Request
		status    int
		errorType string // X-Amzn-Errortype up to the ':'
		message   string // exact, or a prefix when it ends in "…"
	}{
		{"signed", func() *http.Request { return signedRequest(t, url, invokeBody, simCreds, time.Now()) }, 200, "", ""},
		{"model id with ':' escaped", func() *http.Request {
			return signedRequest(t, strings.Replace(url, "v1:0", "v1%3A0", 1), invokeBody, simCreds, time.Now())
		}, 200, "", ""},
		{"session token", func() *http.Request { return signedRequest(t, url, invokeBody, temporary, time.Now()) }, 200, "", ""},
		{"wrong secret", func() *http.Request {
			return signedRequest(t, url, invokeBody, aws.Credentials{AccessKeyID: AWSAccessKeyID, SecretAccessKey: "wrong"}, time.Now())
		}, 403, "InvalidSignatureException", mismatch},
		{"body changed after signing", func() *http.Request {
			req := signedRequest(t, url, invokeBody, simCreds, time.Now())
			changed := strings.Replace(invokeBody, "3 words", "4 words", 1)
			req.Body, req.ContentLength = io.NopCloser(strings.NewReader(changed)), int64(len(changed))
			return req
		}, 403, "InvalidSignatureException", mismatch},
		{"signed header changed", func() *http.Request {
			req := signedRequest(t, url, invokeBody, simCreds, time.Now())
			req.Header.Set("Content-Type", "text/plain")
			return req
		}, 403, "InvalidSignatureException", mismatch},
		{"any region", func() *http.Request { return signedRequestIn(t, "eu-west-3", url, invokeBody, simCreds, time.Now()) }, 200, "", ""},
		{"no auth", func() *http.Request {
			req := signedRequest(t, url, invokeBody, simCreds, time.Now())
			req.Header.Del("Authorization")
			return req
		}, 403, "MissingAuthenticationTokenException", "Missing Authentication Token"},
		{"signed ten minutes ago", func() *http.Request {
			return signedRequest(t, url, invokeBody, simCreds, time.Now().Add(-10*time.Minute))
		}, 403, "InvalidSignatureException", "Signature expired: …"},
		{"signed ten minutes ahead", func() *http.Request {
			return signedRequest(t, url, invokeBody, simCreds, time.Now().Add(10*time.Minute))
		}, 403, "InvalidSignatureException", "Signature not yet current: …"},
		{"unknown access key", func() *http.Request {
			return signedRequest(t, url, invokeBody, aws.Credentials{AccessKeyID: "AKIAUNKNOWN", SecretAccessKey: "x"}, time.Now())
		}, 403, "UnrecognizedClientException", "The security token included in the request is invalid."},
		{"session token missing", func() *http.Request {
			req := signedRequest(t, url, invokeBody, temporary, time.Now())
			req.Header.Del("X-Amz-Security-Token")
			return req
		}, 403, "UnrecognizedClientException", "The security token included in the request is invalid."},
		{"expired temporary key", func() *http.Request {
			return signedRequest(t, url, invokeBody, aws.Credentials{AccessKeyID: "ASIAEXPIRED000001",
				SecretAccessKey: "old-secret", SessionToken: "session-0"}, time.Now())
		}, 403, "ExpiredTokenException", "The security token included in the request is expired"},
		{"other service", func() *http.Request {
			req := signedRequest(t, url, invokeBody, simCreds, time.Now())
			req.Header.Set("Authorization", strings.Replace(req.Header.Get("Authorization"), "/bedrock/", "/s3/", 1))
			return req
		}, 403, "InvalidSignatureException", "Credential should be scoped to correct service: 'bedrock'. "},
		{"not SigV4", func() *http.Request {
			req := signedRequest(t, url, invokeBody, simCreds, time.Now())
			req.Header.Set("Authorization", "Bearer sk-test")
			return req
		}, 403, "IncompleteSignatureException", "Unsupported AWS 'algorithm': 'Bearer'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := do(t, tc.req())
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, data)
			}
			if tc.status == 200 {
				if resp.Header.Get("X-Amzn-Errortype") != "" {
					t.Errorf("X-Amzn-Errortype %q on a success", resp.Header.Get("X-Amzn-Errortype"))
				}
				return
			}
			want := tc.errorType + ":http://internal.amazon.com/coral/com.amazon.coral.service/"
			if got := resp.Header.Get("X-Amzn-Errortype"); got != want {
				t.Errorf("X-Amzn-Errortype %q, want %q", got, want)
			}
			msg := str(decode(t, data), "message")
			if prefix, ok := strings.CutSuffix(tc.message, "…"); ok {
				if !strings.HasPrefix(msg, prefix) || !strings.HasSuffix(msg, " 5 min.)") {
					t.Errorf("message %q, want %q… 5 min.)", msg, prefix)
				}
			} else {
				assertJSON(t, data, `{"message":`+string(marshal(t, tc.message))+`}`)
			}
		})
	}
	if got := s.Calls("bedrock"); got != int64(len(tests)) {
		t.Errorf("Calls = %d, want every request counted, refused or not (%d)", got, len(tests))
	}
}

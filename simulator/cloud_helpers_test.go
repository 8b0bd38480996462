package simulator

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// simCreds is the key pair every simulator accepts.
var simCreds = aws.Credentials{AccessKeyID: AWSAccessKeyID, SecretAccessKey: AWSSecretAccessKey}

// signedRequest builds a Bedrock request signed as aws-sdk-go-v2 signs it: with the body's
// SHA-256, for service "bedrock" in us-east-1, at the given time.
func signedRequest(t *testing.T, url, body string, creds aws.Credentials, at time.Time) *http.Request {
	t.Helper()
	return signedRequestIn(t, "us-east-1", url, body, creds, at)
}

// signedRequestIn is signedRequest for a region.
func signedRequestIn(t *testing.T, region, url, body string, creds aws.Credentials, at time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	sum := sha256.Sum256([]byte(body))
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "bedrock", region, at); err != nil {
		t.Fatal(err)
	}
	return req
}

// do sends req and returns the response with its body read.
func do(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s: %v", req.URL, err)
	}
	return resp, data
}

// bedrockCall POSTs body to url signed with the simulator's key pair.
func bedrockCall(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	return do(t, signedRequest(t, url, body, simCreds, time.Now()))
}

// frame is one decoded event-stream message.
type frame struct {
	messageType, eventType, exceptionType, contentType string
	payload                                            string
}

// decodeFrames decodes a whole event stream with aws-sdk-go-v2's decoder, which checks the
// prelude and message CRCs; it fails the test on any malformed message.
func decodeFrames(t *testing.T, data []byte) []frame {
	t.Helper()
	frames, err := readFrames(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decoding the event stream after %d messages: %v", len(frames), err)
	}
	return frames
}

// readFrames decodes messages until the stream ends, returning those read and the error that
// stopped it (nil at a clean end).
func readFrames(r io.Reader) ([]frame, error) {
	dec := eventstream.NewDecoder()
	var out []frame
	for {
		m, err := dec.Decode(r, nil)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		header := func(name string) string {
			if v := m.Headers.Get(name); v != nil {
				return v.String()
			}
			return ""
		}
		out = append(out, frame{messageType: header(":message-type"), eventType: header(":event-type"),
			exceptionType: header(":exception-type"), contentType: header(":content-type"), payload: string(m.Payload)})
	}
}

// googleClient is an HTTP client that authenticates as golang.org/x/oauth2/google does with
// the simulator's service-account key file, its token endpoint at tokenURL.
func googleClient(t *testing.T, s *Server, tokenURL string) *http.Client {
	t.Helper()
	creds, err := google.CredentialsFromJSON(context.Background(), s.ServiceAccountJSON(tokenURL), GoogleCloudPlatformScope)
	if err != nil {
		t.Fatal(err)
	}
	return oauth2.NewClient(context.Background(), creds.TokenSource)
}

// googleToken fetches one access token from the token endpoint at tokenURL.
func googleToken(t *testing.T, s *Server, tokenURL string) string {
	t.Helper()
	creds, err := google.CredentialsFromJSON(context.Background(), s.ServiceAccountJSON(tokenURL), GoogleCloudPlatformScope)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := creds.TokenSource.Token()
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// entraToken runs the client-credentials grant at the Entra endpoint under base.
func entraToken(t *testing.T, base string) string {
	t.Helper()
	resp, data := postForm(t, base+"/tenant-1/oauth2/v2.0/token", url.Values{"grant_type": {"client_credentials"},
		"client_id": {"app"}, "client_secret": {"secret"}, "scope": {"https://cognitiveservices.azure.com/.default"}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("Entra grant: %d %s", resp.StatusCode, data)
	}
	return str(decode(t, data), "access_token")
}

func postForm(t *testing.T, url string, form url.Values) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(t, req)
}

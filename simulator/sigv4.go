package simulator

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// AWS Signature Version 4, what Bedrock takes. The simulator knows the secret of every access
// key it accepts, so it checks a request the only way SigV4 allows: it rebuilds the request
// from exactly the headers the client says it signed, signs it again with aws-sdk-go-v2's
// signer at the request's X-Amz-Date, and compares the signatures. A body changed after
// signing, a signed header changed or dropped, a wrong secret, a scope for another service or
// a clock more than five minutes off all fail as they fail at AWS: 403 and the exception AWS
// names.

const (
	// AWSAccessKeyID and AWSSecretAccessKey are the key pair every simulator accepts.
	AWSAccessKeyID     = "AKIAMODELGATESIM0001"
	AWSSecretAccessKey = "modelgate-simulator-aws-secret"

	// bedrockService is the signing name of Bedrock's runtime.
	bedrockService = "bedrock"
	sigV4Algorithm = "AWS4-HMAC-SHA256"
	amzDateFormat  = "20060102T150405Z"
	// maxSigningSkew is how far X-Amz-Date may be from the server's clock.
	maxSigningSkew = 5 * time.Minute
)

// AWSCredentials is an access key the Bedrock endpoints accept.
type AWSCredentials struct {
	AccessKeyID     string
	SecretAccessKey string
	// SessionToken, when set, makes the key temporary (STS): requests must carry it in
	// X-Amz-Security-Token; without one, requests must not carry any.
	SessionToken string
	// Expires, when set, is when a temporary key ends: later requests get 403
	// ExpiredTokenException.
	Expires time.Time
}

type awsKeys struct {
	mu   sync.RWMutex
	keys map[string]AWSCredentials
}

func newAWSKeys() *awsKeys {
	return &awsKeys{keys: map[string]AWSCredentials{
		AWSAccessKeyID: {AccessKeyID: AWSAccessKeyID, SecretAccessKey: AWSSecretAccessKey}}}
}

// AddAWSCredentials makes the Bedrock endpoints accept c as well, replacing any key with the
// same access key id (so a test can rotate a secret or a session token).
func (s *Server) AddAWSCredentials(c AWSCredentials) {
	s.aws.mu.Lock()
	defer s.aws.mu.Unlock()
	s.aws.keys[c.AccessKeyID] = c
}

func (k *awsKeys) get(id string) (AWSCredentials, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	c, ok := k.keys[id]
	return c, ok
}

// sigV4Auth is a parsed "Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…,
// Signature=…" header.
type sigV4Auth struct {
	keyID, date, region, service, terminator string
	signedHeaders                            []string
	signature                                string
}

// awsDenied is a Bedrock auth refusal: always 403, as AWS answers.
func awsDenied(typ, msg string) *apiError {
	return &apiError{Status: http.StatusForbidden, Type: typ, Message: msg}
}

// parseSigV4 reads the Authorization header, or says in AWS's words what is missing.
func parseSigV4(header string) (sigV4Auth, *apiError) {
	algo, rest, _ := strings.Cut(header, " ")
	if algo != sigV4Algorithm {
		return sigV4Auth{}, awsDenied("IncompleteSignatureException", "Unsupported AWS 'algorithm': '"+algo+"'")
	}
	params := map[string]string{}
	for _, p := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		params[k] = v
	}
	var missing []string
	for _, k := range []string{"Credential", "Signature", "SignedHeaders"} {
		if params[k] == "" {
			missing = append(missing, "Authorization header requires '"+k+"' parameter.")
		}
	}
	if missing != nil {
		return sigV4Auth{}, awsDenied("IncompleteSignatureException", strings.Join(missing, " ")+
			" Authorization="+header)
	}
	scope := strings.Split(params["Credential"], "/")
	if len(scope) != 5 {
		return sigV4Auth{}, awsDenied("IncompleteSignatureException", "Credential should have exactly 5 slash-delimited elements, "+
			"e.g. keyid/date/region/service/term, got '"+params["Credential"]+"'")
	}
	return sigV4Auth{keyID: scope[0], date: scope[1], region: scope[2], service: scope[3], terminator: scope[4],
		signedHeaders: strings.Split(params["SignedHeaders"], ";"), signature: params["Signature"]}, nil
}

// verifySigV4 authenticates a Bedrock request signed for service "bedrock".
func (s *Server) verifySigV4(r *http.Request, body []byte) *apiError {
	header := r.Header.Get("Authorization")
	if header == "" {
		return awsDenied("MissingAuthenticationTokenException", "Missing Authentication Token")
	}
	auth, e := parseSigV4(header)
	if e != nil {
		return e
	}
	amzDate := r.Header.Get("X-Amz-Date")
	signedAt, err := time.Parse(amzDateFormat, amzDate)
	if err != nil {
		return awsDenied("IncompleteSignatureException", "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
	}
	now := time.Now().UTC()
	switch {
	case signedAt.Before(now.Add(-maxSigningSkew)):
		return awsDenied("InvalidSignatureException", "Signature expired: "+amzDate+" is now earlier than "+
			now.Add(-maxSigningSkew).Format(amzDateFormat)+" ("+now.Format(amzDateFormat)+" - 5 min.)")
	case signedAt.After(now.Add(maxSigningSkew)):
		return awsDenied("InvalidSignatureException", "Signature not yet current: "+amzDate+" is still later than "+
			now.Add(maxSigningSkew).Format(amzDateFormat)+" ("+now.Format(amzDateFormat)+" + 5 min.)")
	case auth.date != amzDate[:8]:
		return awsDenied("InvalidSignatureException", "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '"+
			auth.date+"' != '"+amzDate[:8]+"', from '"+amzDate+"'.")
	case auth.service != bedrockService:
		return awsDenied("InvalidSignatureException", "Credential should be scoped to correct service: '"+bedrockService+"'. ")
	case auth.terminator != "aws4_request":
		return awsDenied("InvalidSignatureException", "Credential should be scoped with a valid terminator: 'aws4_request', not '"+auth.terminator+"'. ")
	case !slices.Contains(auth.signedHeaders, "host"):
		return awsDenied("InvalidSignatureException", "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.")
	}
	creds, ok := s.aws.get(auth.keyID)
	if !ok || r.Header.Get("X-Amz-Security-Token") != creds.SessionToken {
		return awsDenied("UnrecognizedClientException", "The security token included in the request is invalid.")
	}
	if !creds.Expires.IsZero() && !now.Before(creds.Expires) {
		return awsDenied("ExpiredTokenException", "The security token included in the request is expired")
	}
	want, err := resign(r, body, auth, creds, signedAt)
	if err != nil || !hmac.Equal([]byte(want), []byte(auth.signature)) {
		return awsDenied("InvalidSignatureException", "The request signature we calculated does not match the signature you provided. "+
			"Check your AWS Secret Access Key and signing method. Consult the service documentation for details.")
	}
	return nil
}

// resign signs a copy of r holding only the headers auth lists and returns the signature.
func resign(r *http.Request, body []byte, auth sigV4Auth, creds AWSCredentials, signedAt time.Time) (string, error) {
	// The path is kept as the client escaped it (RawPath): SigV4 signs the escaped path, and a
	// model id such as "anthropic.claude-…-v1:0" may arrive with its ':' escaped or not.
	u := &url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	req := &http.Request{Method: r.Method, URL: u, Host: r.Host, Header: http.Header{}}
	for _, name := range auth.signedHeaders {
		switch name {
		case "host":
		case "content-length":
			req.ContentLength = r.ContentLength
		default:
			if vals := r.Header.Values(name); len(vals) > 0 {
				req.Header[http.CanonicalHeaderKey(name)] = vals
			}
		}
	}
	sum := sha256.Sum256(body)
	err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: creds.AccessKeyID,
		SecretAccessKey: creds.SecretAccessKey, SessionToken: creds.SessionToken},
		req, hex.EncodeToString(sum[:]), bedrockService, auth.region, signedAt)
	if err != nil {
		return "", err
	}
	_, sig, _ := strings.Cut(req.Header.Get("Authorization"), "Signature=")
	return sig, nil
}

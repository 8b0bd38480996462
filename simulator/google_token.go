package simulator

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2/jws"
)

// Google service-account auth, what Vertex AI takes. ServiceAccountJSON hands out the key file
// of a service account the simulator made up; a client (golang.org/x/oauth2/google) signs a
// JWT with the file's private key and trades it at the file's token_uri (POST /oauth2/token
// here, also under /r/{route}/) for an access token, which Vertex requests carry as
// "Authorization: Bearer <token>". The endpoint checks what Google checks: the RS256
// signature against the account's key, the issuer, the audience, a lifetime of at most an
// hour, and that scopes were asked for.

const (
	// GoogleProjectID is the project of the simulator's service account.
	GoogleProjectID = "modelgate-sim"
	// GoogleClientEmail is the simulator's service account: the only issuer whose JWTs the
	// token endpoint takes.
	GoogleClientEmail = "modelgate-sim@modelgate-sim.iam.gserviceaccount.com"
	// GoogleCloudPlatformScope is the scope a token needs for Vertex AI.
	GoogleCloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

	jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	// googleTokenURL is Google's own token endpoint: an assertion addressed to it is accepted
	// too, as a client configured for the real service addresses it there.
	googleTokenURL = "https://oauth2.googleapis.com/token"
	// maxAssertionLifetime is the longest exp-iat Google accepts; clockSkew is the leeway
	// it gives an iat in the future.
	maxAssertionLifetime = time.Hour
	clockSkew            = time.Minute
)

// serviceAccount is the key pair behind the key file.
type serviceAccount struct {
	key   *rsa.PrivateKey
	id    string // private_key_id, the JWT header's kid
	pem   string // PKCS #8, as Google's key files hold it
	email string
}

// serviceAccountKey is made once per process, on first use: an RSA-2048 key takes a noticeable
// fraction of a second to generate, and most simulators never serve Vertex.
var serviceAccountKey = sync.OnceValue(func() *serviceAccount {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic("simulator: generating the service account key: " + err.Error()) // crypto/rand does not fail
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		panic("simulator: encoding the service account key: " + err.Error())
	}
	pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey) // an RSA public key always encodes
	sum := sha256.Sum256(pub)
	return &serviceAccount{key: key, id: hex.EncodeToString(sum[:20]),
		pem:   string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		email: GoogleClientEmail}
})

// ServiceAccountJSON is a service-account key file for the simulator's account whose
// token_uri is tokenURI: the simulator's token endpoint, e.g. base+"/oauth2/token" or
// base+"/r/{route}/oauth2/token" (the route whose TokenLifetime and TokenGrants apply). Write
// it to a file for golang.org/x/oauth2/google or a gateway's credentials_file.
func (s *Server) ServiceAccountJSON(tokenURI string) []byte {
	sa := serviceAccountKey()
	raw, _ := marshalJSON(obj{ // strings only: cannot fail
		{"type", "service_account"},
		{"project_id", GoogleProjectID},
		{"private_key_id", sa.id},
		{"private_key", sa.pem},
		{"client_email", sa.email},
		{"client_id", "100000000000000000001"},
		{"auth_uri", "https://accounts.google.com/o/oauth2/auth"},
		{"token_uri", tokenURI},
		{"auth_provider_x509_cert_url", "https://www.googleapis.com/oauth2/v1/certs"},
		{"client_x509_cert_url", "https://www.googleapis.com/robot/v1/metadata/x509/" + url.PathEscape(sa.email)},
		{"universe_domain", "googleapis.com"},
	})
	var out bytes.Buffer
	_ = json.Indent(&out, raw, "", "  ")
	out.WriteByte('\n')
	return out.Bytes()
}

// serviceAccountFile serves ServiceAccountJSON for processes that cannot call it:
// GET /_sim/google/service-account?token_uri=URL (default: this simulator's /oauth2/token).
func (s *Server) serviceAccountFile(w http.ResponseWriter, r *http.Request) {
	tokenURI := r.URL.Query().Get("token_uri")
	if tokenURI == "" {
		tokenURI = requestScheme(r) + "://" + r.Host + "/oauth2/token"
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(s.ServiceAccountJSON(tokenURI))
}

// oauthError is an OAuth 2 token endpoint's refusal (RFC 6749, section 5.2).
type oauthError struct {
	status      int
	code        string
	description string
}

func writeOAuthError(w http.ResponseWriter, e oauthError) {
	writeJSON(w, e.status, obj{{"error", e.code}, {"error_description", e.description}})
}

// googleToken answers the JWT-bearer grant with an access token.
func (s *Server) googleToken(w http.ResponseWriter, r *http.Request) {
	route := r.PathValue("route")
	if !tokenForm(w, r) {
		writeOAuthError(w, oauthError{http.StatusBadRequest, "invalid_request", "Could not read the request body."})
		return
	}
	if g := r.PostForm.Get("grant_type"); g != jwtBearerGrant {
		writeOAuthError(w, oauthError{http.StatusBadRequest, "unsupported_grant_type", "Invalid grant_type: " + g})
		return
	}
	assertion := r.PostForm.Get("assertion")
	if assertion == "" {
		writeOAuthError(w, oauthError{http.StatusBadRequest, "invalid_request", "Missing required parameter: assertion"})
		return
	}
	claims, e := verifyAssertion(assertion, requestScheme(r)+"://"+r.Host+r.URL.Path, time.Now())
	if e != nil {
		writeOAuthError(w, *e)
		return
	}
	tok, expiresIn := s.issueToken("ya29.sim-", issuerGoogle, strings.Fields(claims.Scope), s.Behavior(route).tokenLifetime())
	s.state(route).tokenGrants.Add(1)
	writeJSON(w, http.StatusOK, obj{{"access_token", tok}, {"expires_in", expiresIn}, {"token_type", "Bearer"}})
}

// verifyAssertion checks a grant's JWT as Google does, for a token endpoint at endpointURL,
// and returns its claims.
func verifyAssertion(assertion, endpointURL string, now time.Time) (*jws.ClaimSet, *oauthError) {
	invalid := func(desc string) *oauthError {
		return &oauthError{http.StatusBadRequest, "invalid_grant", desc}
	}
	sa := serviceAccountKey()
	head, _, _ := strings.Cut(assertion, ".")
	var header struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	raw, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil || json.Unmarshal(raw, &header) != nil {
		return nil, invalid("Invalid JWT: the header is not base64url-encoded JSON.")
	}
	if header.Alg != "RS256" {
		return nil, invalid("Invalid JWT: the algorithm must be RS256.")
	}
	claims, err := jws.Decode(assertion)
	if err != nil {
		return nil, invalid("Invalid JWT: the claim set is not base64url-encoded JSON.")
	}
	if claims.Iss != sa.email {
		return nil, invalid("Invalid grant: account not found")
	}
	// The kid names the key of the account; a kid of another key fails like a bad signature.
	if (header.Kid != "" && header.Kid != sa.id) || jws.Verify(assertion, &sa.key.PublicKey) != nil {
		return nil, invalid("Invalid JWT Signature.")
	}
	if !sameEndpoint(claims.Aud, endpointURL) && claims.Aud != googleTokenURL {
		return nil, invalid("Invalid JWT: Failed audience check. The expected value was " + endpointURL + ".")
	}
	iat, exp := time.Unix(claims.Iat, 0), time.Unix(claims.Exp, 0)
	if !exp.After(now) || iat.After(now.Add(clockSkew)) || exp.Sub(iat) > maxAssertionLifetime {
		return nil, invalid("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. " +
			"Check your iat and exp values in the JWT claim.")
	}
	if strings.TrimSpace(claims.Scope) == "" {
		return nil, &oauthError{http.StatusBadRequest, "invalid_scope", "Invalid OAuth scope or ID token audience provided."}
	}
	return claims, nil
}

// sameEndpoint reports whether the URL aud names the endpoint: same host and path (the
// scheme is the client's business; the simulator serves plain HTTP).
func sameEndpoint(aud, endpoint string) bool {
	a, err1 := url.Parse(aud)
	e, err2 := url.Parse(endpoint)
	return err1 == nil && err2 == nil && strings.EqualFold(a.Host, e.Host) && a.Path == e.Path
}

// requestScheme is the scheme a request arrived with.
func requestScheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// googleBearer authenticates a Vertex request: a live token of the simulator's Google token
// endpoint that carries the cloud-platform scope, refused in Google's words otherwise.
func (s *Server) googleBearer(r *http.Request, _ []byte) *apiError {
	const see = " Expected OAuth 2 access token, login cookie or other valid authentication credential. " +
		"See https://developers.google.com/identity/sign-in/web/devconsole-project."
	tok, ok := bearerToken(r)
	if !ok {
		return &apiError{Status: http.StatusUnauthorized, Type: "UNAUTHENTICATED", Reason: "CREDENTIALS_MISSING",
			Message: "Request is missing required authentication credential." + see}
	}
	t, status := s.tokens.lookup(tok, issuerGoogle)
	switch status {
	case tokenUnknown:
		return &apiError{Status: http.StatusUnauthorized, Type: "UNAUTHENTICATED", Reason: "ACCESS_TOKEN_TYPE_UNSUPPORTED",
			Message: "Request had invalid authentication credentials." + see}
	case tokenExpired:
		return &apiError{Status: http.StatusUnauthorized, Type: "UNAUTHENTICATED", Reason: "ACCESS_TOKEN_EXPIRED",
			Message: "Request had invalid authentication credentials." + see}
	}
	if !slices.Contains(t.scopes, GoogleCloudPlatformScope) {
		return &apiError{Status: http.StatusForbidden, Type: "PERMISSION_DENIED", Reason: "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
			Message: "Request had insufficient authentication scopes."}
	}
	return nil
}

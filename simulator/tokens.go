package simulator

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// Access tokens issued by the simulator's token endpoints: Google's (google_token.go) for
// Vertex AI and Entra's (entra_token.go) for Azure OpenAI. A token is an opaque string the
// store remembers with its issuer, scopes and end; each platform accepts only live tokens of
// its own issuer, as the real ones do.

// tokenIssuer is the identity platform that issued a token.
type tokenIssuer int

const (
	issuerGoogle tokenIssuer = iota + 1
	issuerEntra
)

// maxStoredTokens bounds the store: a test fetching tokens in a loop forgets its oldest ones
// instead of growing the process.
const maxStoredTokens = 10_000

// accessToken is what the store knows about one issued token.
type accessToken struct {
	issuer  tokenIssuer
	scopes  []string
	issued  time.Time
	expires time.Time
}

// tokenStatus is what a presented token turned out to be.
type tokenStatus int

const (
	tokenUnknown tokenStatus = iota // never issued (or by another issuer, or forgotten)
	tokenExpired
	tokenLive
)

type tokenStore struct {
	tokens *boundedStore[accessToken]

	mu      sync.Mutex
	revoked time.Time // tokens issued at or before it have ended (ExpireTokens)
}

func newTokenStore() *tokenStore {
	return &tokenStore{tokens: newBoundedStore[accessToken](maxStoredTokens)}
}

// issue mints a token of issuer valid for lifetime. It returns the token and the expires_in
// the token endpoint reports: whole seconds, one less than the lifetime as Google and Entra
// answer (3599 for an hour), so a client never holds a token past its end, and at least 1,
// since 0 would tell an OAuth client the token never expires.
func (s *Server) issueToken(prefix string, issuer tokenIssuer, scopes []string, lifetime time.Duration) (string, int) {
	tok := s.newID(prefix)
	now := time.Now()
	s.tokens.tokens.put(tok, accessToken{issuer: issuer, scopes: scopes, issued: now, expires: now.Add(lifetime)})
	return tok, max(int(lifetime/time.Second)-1, 1)
}

// lookup finds a presented token of issuer.
func (ts *tokenStore) lookup(tok string, issuer tokenIssuer) (accessToken, tokenStatus) {
	t, ok := ts.tokens.get(tok)
	if !ok || t.issuer != issuer {
		return accessToken{}, tokenUnknown
	}
	ts.mu.Lock()
	revoked := ts.revoked
	ts.mu.Unlock()
	if !t.issued.After(revoked) || !time.Now().Before(t.expires) {
		return t, tokenExpired
	}
	return t, tokenLive
}

// ExpireTokens ends every access token issued so far, as if their lifetimes had run out: the
// next Vertex or Azure call carrying one gets the platform's 401, so a test can check that a
// gateway fetches a new token without waiting out a lifetime.
func (s *Server) ExpireTokens() {
	s.tokens.mu.Lock()
	s.tokens.revoked = time.Now()
	s.tokens.mu.Unlock()
}

// bearerToken is the token of an "Authorization: Bearer <token>" header.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "Bearer") && token != ""
}

// tokenForm parses a token endpoint's application/x-www-form-urlencoded body, bounded like
// every request body; ok is false when it cannot be read.
func tokenForm(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenRequestBytes)
	return r.ParseForm() == nil
}

// maxTokenRequestBytes bounds a token request: a grant is a few hundred bytes, a JWT a few KB.
const maxTokenRequestBytes = 64 << 10

// registerTokenEndpoints mounts the identity platforms' token endpoints, for the default
// route and /r/{route}, and the control API's service-account key download.
func (s *Server) registerTokenEndpoints() {
	s.handleRoutes(http.MethodPost, "/oauth2/token", http.HandlerFunc(s.googleToken))
	s.handleRoutes(http.MethodPost, "/{tenant}/oauth2/v2.0/token", http.HandlerFunc(s.entraToken))
	s.mux.HandleFunc("GET /_sim/google/service-account", s.serviceAccountFile)
}

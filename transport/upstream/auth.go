package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
	"golang.org/x/oauth2/google"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// An authorizer puts a route's credential on a request that is otherwise ready to send.
// Static keys are read from the environment on every call (a rotated variable needs no
// reload); a cloud's short-lived credentials are fetched once per credential, shared by every
// route that names it, and refreshed before they expire, never fetched per request.
type authorizer interface {
	authorize(ctx context.Context, r *http.Request, body []byte) error
	// nextRefresh is when the credential is next fetched (zero: a static one, or not yet).
	nextRefresh() time.Time
}

// earlyRefresh is how long before a token's expiry a new one is fetched, so no call ever
// carries a token that expires on its way (a quarter of its life for a token shorter-lived
// than 20 minutes, so that it is still used for most of its life).
const earlyRefresh = 5 * time.Minute

// tokenFetchTimeout bounds one fetch from a token endpoint.
const tokenFetchTimeout = 30 * time.Second

// googleScope is the scope Vertex AI takes.
const googleScope = "https://www.googleapis.com/auth/cloud-platform"

// authorizerFor returns the route's authorizer, made once per credential.
func (c *Client) authorizerFor(rt *catalog.Route) authorizer {
	switch rt.AuthKind() {
	case catalog.AuthAPIKey:
		return staticKey{rt: rt}
	case catalog.AuthNone:
		return nil
	}
	key := credentialKey(rt)
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.auths[key]; ok {
		return a
	}
	var a authorizer
	switch rt.AuthKind() {
	case catalog.AuthSigV4:
		a = c.sigv4For(rt.AWS)
	case catalog.AuthGoogleOAuth:
		a = &bearer{tokens: &tokenCache{fetch: c.googleFetch(rt.Vertex.CredentialsFile)}}
	case catalog.AuthEntra:
		a = &bearer{tokens: &tokenCache{fetch: c.entraFetch(rt.Azure.Entra)}}
	}
	c.auths[key] = a
	return a
}

// credentialKey names a credential: routes with the same key share its tokens.
func credentialKey(rt *catalog.Route) string {
	switch rt.AuthKind() {
	case catalog.AuthSigV4:
		a := rt.AWS
		return strings.Join([]string{"aws", a.Region, a.AccessKeyEnv, a.SecretKeyEnv, a.SessionTokenEnv}, "\x00")
	case catalog.AuthGoogleOAuth:
		return "google\x00" + rt.Vertex.CredentialsFile
	case catalog.AuthEntra:
		e := rt.Azure.Entra
		return strings.Join([]string{"entra", e.AuthorityURL, e.TenantIDEnv, e.ClientIDEnv, e.ClientSecretEnv, e.Scope}, "\x00")
	}
	return ""
}

// NextRefresh is when the route's credential is next fetched from its issuer (zero for a
// static key, or a cloud credential no call has fetched yet), for the routes view.
func (c *Client) NextRefresh(rt *catalog.Route) time.Time {
	switch rt.AuthKind() {
	case catalog.AuthAPIKey, catalog.AuthNone:
		return time.Time{}
	}
	c.mu.Lock()
	a := c.auths[credentialKey(rt)]
	c.mu.Unlock()
	if a == nil {
		return time.Time{}
	}
	return a.nextRefresh()
}

// forgetToken drops the route's cached access token, so the next call fetches one; false
// when the route has none to drop.
func (c *Client) forgetToken(rt *catalog.Route) bool {
	switch rt.AuthKind() {
	case catalog.AuthGoogleOAuth, catalog.AuthEntra:
	default:
		return false
	}
	c.mu.Lock()
	a, _ := c.auths[credentialKey(rt)].(*bearer)
	c.mu.Unlock()
	return a != nil && a.tokens.forget()
}

// staticKey sends credential_env's secret in the format's header, or the route's own.
type staticKey struct{ rt *catalog.Route }

func (k staticKey) authorize(_ context.Context, r *http.Request, _ []byte) error {
	rt := k.rt
	cred := rt.Credential()
	if cred == "" {
		return fmt.Errorf("environment variable %s is empty", rt.CredentialEnv)
	}
	switch {
	case rt.AuthHeader != "":
		r.Header.Set(rt.AuthHeader, rt.AuthPrefix+cred)
	case rt.Provider == catalog.ProviderAzure:
		r.Header.Set("api-key", cred)
	case rt.Provider == catalog.ProviderBedrock: // a Bedrock API key
		r.Header.Set("Authorization", "Bearer "+cred)
	case rt.Format == catalog.FormatMessages:
		r.Header.Set("x-api-key", cred)
	case rt.Format == catalog.FormatGemini:
		r.Header.Set("x-goog-api-key", cred)
	default:
		r.Header.Set("Authorization", "Bearer "+cred)
	}
	return nil
}

func (staticKey) nextRefresh() time.Time { return time.Time{} }

// sigv4 signs with AWS Signature Version 4 for Bedrock.
type sigv4 struct {
	region  string
	creds   aws.CredentialsProvider // a cache: refreshed before expiry
	signer  *v4.Signer
	expires atomic.Int64 // unix nanoseconds the credentials last used expire (0: never)
}

func (c *Client) sigv4For(a *catalog.AWS) *sigv4 {
	var provider aws.CredentialsProvider
	if a.AccessKeyEnv != "" {
		provider = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			cr := aws.Credentials{AccessKeyID: os.Getenv(a.AccessKeyEnv), SecretAccessKey: os.Getenv(a.SecretKeyEnv), Source: "modelgate route"}
			if a.SessionTokenEnv != "" {
				cr.SessionToken = os.Getenv(a.SessionTokenEnv)
			}
			if cr.AccessKeyID == "" || cr.SecretAccessKey == "" {
				return cr, fmt.Errorf("environment variable %s or %s is empty", a.AccessKeyEnv, a.SecretKeyEnv)
			}
			return cr, nil
		})
	} else {
		provider = &defaultChain{region: a.Region}
	}
	return &sigv4{region: a.Region, signer: v4.NewSigner(), creds: aws.NewCredentialsCache(provider, func(o *aws.CredentialsCacheOptions) {
		o.ExpiryWindow = earlyRefresh
	})}
}

func (s *sigv4) authorize(ctx context.Context, r *http.Request, body []byte) error {
	cr, err := s.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("aws credentials: %w", err)
	}
	var exp int64
	if cr.CanExpire {
		exp = cr.Expires.UnixNano()
	}
	s.expires.Store(exp)
	sum := sha256.Sum256(body)
	return s.signer.SignHTTP(ctx, cr, r, hex.EncodeToString(sum[:]), "bedrock", s.region, time.Now().UTC())
}

// nextRefresh is read from the last call's credentials: the view never fetches.
func (s *sigv4) nextRefresh() time.Time {
	exp := s.expires.Load()
	if exp == 0 {
		return time.Time{}
	}
	return time.Unix(0, exp).Add(-earlyRefresh)
}

// defaultChain is the AWS SDK's default credential chain (environment, shared files, SSO,
// the container or instance role), loaded on first use: loading probes the instance
// metadata service, which only a call that needs it should wait for.
type defaultChain struct {
	region string
	once   sync.Once
	creds  aws.CredentialsProvider
	err    error
}

func (d *defaultChain) Retrieve(ctx context.Context) (aws.Credentials, error) {
	d.once.Do(func() {
		cfg, err := awsconfig.LoadDefaultConfig(context.Background(), awsconfig.WithRegion(d.region))
		d.creds, d.err = cfg.Credentials, err
		if err == nil && d.creds == nil {
			d.err = fmt.Errorf("the AWS SDK's default chain found no credentials")
		}
	})
	if d.err != nil {
		return aws.Credentials{}, d.err
	}
	return d.creds.Retrieve(ctx)
}

// bearer sends an OAuth2 access token.
type bearer struct{ tokens *tokenCache }

func (b *bearer) authorize(ctx context.Context, r *http.Request, _ []byte) error {
	tok, err := b.tokens.token(ctx)
	if err != nil {
		return err
	}
	r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return nil
}

func (b *bearer) nextRefresh() time.Time { return b.tokens.nextRefresh() }

// tokenCache holds one access token and fetches the next earlyRefresh before it expires.
// Callers that find it due wait for the one fetch under way; a failed fetch keeps serving
// the old token while it is still valid.
type tokenCache struct {
	fetch      func(context.Context) (*oauth2.Token, error)
	mu         sync.Mutex
	tok        *oauth2.Token
	refreshAt  time.Time // earlyRefresh before its expiry, or a quarter of its life for a short one
	freshUntil time.Time // a refusal before then is the route's setup, not a revoked token
}

// freshToken is how long a fetched token is trusted when refused (at most a quarter of its
// life): within it, a 401 is the route's setup (a project, a role), not a revoked token, and
// another fetch would not help.
const freshToken = time.Minute

func (t *tokenCache) token(ctx context.Context) (*oauth2.Token, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if t.tok != nil && (t.tok.Expiry.IsZero() || now.Before(t.refreshAt)) {
		return t.tok, nil
	}
	fctx, cancel := context.WithTimeout(ctx, tokenFetchTimeout)
	defer cancel()
	tok, err := t.fetch(fctx)
	if err != nil {
		if t.tok != nil && now.Before(t.tok.Expiry) {
			return t.tok, nil
		}
		return nil, fmt.Errorf("fetching an access token: %w", err)
	}
	t.tok = tok
	quarter := tok.Expiry.Sub(now) / 4
	t.refreshAt = tok.Expiry.Add(-min(earlyRefresh, quarter))
	t.freshUntil = now.Add(min(freshToken, quarter))
	return tok, nil
}

// forget drops the token held unless it was fetched within freshToken.
func (t *tokenCache) forget() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok == nil || time.Now().Before(t.freshUntil) {
		return false
	}
	t.tok = nil
	return true
}

func (t *tokenCache) nextRefresh() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok == nil || t.tok.Expiry.IsZero() {
		return time.Time{}
	}
	return t.refreshAt
}

// tokenClient is the HTTP client of token fetches: the upstream transport, bounded in time.
func (c *Client) tokenContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, &http.Client{Transport: c.transport(10 * time.Second), Timeout: tokenFetchTimeout})
}

// googleFetch fetches a Vertex AI token: from the service-account key file (a signed JWT
// exchanged at the file's token_uri, a fresh grant each time), or application default
// credentials when the route names no file.
func (c *Client) googleFetch(file string) func(context.Context) (*oauth2.Token, error) {
	return func(ctx context.Context) (*oauth2.Token, error) {
		ctx = c.tokenContext(ctx)
		if file == "" {
			creds, err := google.FindDefaultCredentials(ctx, googleScope)
			if err != nil {
				return nil, err
			}
			return creds.TokenSource.Token()
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		creds, err := google.CredentialsFromJSONWithTypeAndParams(ctx, data, google.ServiceAccount, google.CredentialsParams{Scopes: []string{googleScope}})
		if err != nil {
			return nil, err
		}
		return creds.TokenSource.Token()
	}
}

// entraFetch fetches an Azure OpenAI token by the client-credentials grant.
func (c *Client) entraFetch(e *catalog.Entra) func(context.Context) (*oauth2.Token, error) {
	return func(ctx context.Context) (*oauth2.Token, error) {
		cfg := clientcredentials.Config{
			ClientID: os.Getenv(e.ClientIDEnv), ClientSecret: os.Getenv(e.ClientSecretEnv),
			TokenURL: e.AuthorityURL + "/" + url.PathEscape(os.Getenv(e.TenantIDEnv)) + "/oauth2/v2.0/token",
			Scopes:   []string{e.Scope}, AuthStyle: oauth2.AuthStyleInParams,
		}
		return cfg.Token(c.tokenContext(ctx))
	}
}

package upstream

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/modelgate/modelgate/persistence/catalog"
)

func TestStaticKeyGoesInTheProvidersHeader(t *testing.T) {
	t.Setenv("ROUTE_KEY", "k-123")
	cases := []struct {
		name         string
		rt           catalog.Route
		header, want string
	}{
		{"chat", catalog.Route{Format: catalog.FormatChat}, "Authorization", "Bearer k-123"},
		{"messages", catalog.Route{Format: catalog.FormatMessages}, "X-Api-Key", "k-123"},
		{"gemini", catalog.Route{Format: catalog.FormatGemini}, "X-Goog-Api-Key", "k-123"},
		{"azure", catalog.Route{Format: catalog.FormatChat, Provider: catalog.ProviderAzure, Azure: &catalog.Azure{}}, "Api-Key", "k-123"},
		{"bedrock api key", catalog.Route{Format: catalog.FormatConverse, Provider: catalog.ProviderBedrock}, "Authorization", "Bearer k-123"},
		{"the route's own header and prefix", catalog.Route{Format: catalog.FormatChat, AuthHeader: "X-Portkey-Api-Key", AuthPrefix: "Key "}, "X-Portkey-Api-Key", "Key k-123"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.rt.CredentialEnv = "ROUTE_KEY"
			r, _ := http.NewRequest(http.MethodPost, "http://x/", nil)
			if err := New().authorizerFor(&c.rt).authorize(context.Background(), r, nil); err != nil {
				t.Fatal(err)
			}
			if got := r.Header.Get(c.header); got != c.want {
				t.Errorf("%s = %q, want %q (headers %v)", c.header, got, c.want, r.Header)
			}
			if len(r.Header) != 1 {
				t.Errorf("headers = %v, want only %s", r.Header, c.header)
			}
		})
	}
}

func TestTokenCacheFetchesOnceAndRefreshesBeforeExpiry(t *testing.T) {
	var fetches atomic.Int32
	var fail atomic.Bool
	var lifetime atomic.Int64
	lifetime.Store(int64(time.Hour))
	tc := &tokenCache{fetch: func(context.Context) (*oauth2.Token, error) {
		n := fetches.Add(1)
		if fail.Load() {
			return nil, errors.New("token endpoint said 401")
		}
		time.Sleep(5 * time.Millisecond) // callers arriving meanwhile wait for this fetch
		return &oauth2.Token{AccessToken: "t" + string(rune('0'+n)), Expiry: time.Now().Add(time.Duration(lifetime.Load()))}, nil
	}}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if tok, err := tc.token(context.Background()); err != nil || tok.AccessToken != "t1" {
				t.Errorf("token = %v, %v; want t1", tok, err)
			}
		}()
	}
	wg.Wait()
	if n := fetches.Load(); n != 1 {
		t.Fatalf("20 concurrent calls fetched %d tokens, want 1", n)
	}
	if at := tc.nextRefresh(); time.Until(at) < 54*time.Minute || time.Until(at) > 55*time.Minute {
		t.Errorf("next refresh in %s, want 55 min (an hour less %s)", time.Until(at), earlyRefresh)
	}

	// A token within earlyRefresh of its expiry is replaced before a call uses it.
	tc.refreshAt = time.Now().Add(-time.Second)
	if tok, _ := tc.token(context.Background()); tok.AccessToken != "t2" {
		t.Errorf("token = %s, want the refreshed t2", tok.AccessToken)
	}
	// A token refused within its first minute is the route's setup: it is kept.
	if tc.forget() {
		t.Error("a token fetched a moment ago was dropped for a refusal")
	}
	// A short-lived token is used for three quarters of its life.
	lifetime.Store(int64(8 * time.Second))
	tc.refreshAt = time.Now().Add(-time.Second)
	tc.token(context.Background())
	if left := time.Until(tc.nextRefresh()); left < 5900*time.Millisecond || left > 6*time.Second {
		t.Errorf("an 8 s token is refreshed in %s, want 6 s", left)
	}
	// A failed refresh keeps the old token while it is valid, then fails the call.
	tc.refreshAt = time.Now().Add(-time.Second)
	tc.tok.Expiry = time.Now().Add(time.Minute)
	fail.Store(true)
	if tok, err := tc.token(context.Background()); err != nil || tok.AccessToken != "t3" {
		t.Errorf("token = %v, %v; want t3 while it is valid", tok, err)
	}
	tc.tok.Expiry = time.Now().Add(-time.Second)
	if _, err := tc.token(context.Background()); err == nil {
		t.Error("an expired token with a failing endpoint gave a token")
	}
}

func TestRoutesShareOneCredentialsTokens(t *testing.T) {
	c := New()
	a := &catalog.Route{ID: "a", Provider: catalog.ProviderVertex, Format: catalog.FormatGemini, Vertex: &catalog.Vertex{Project: "p", Location: "l", CredentialsFile: "/sa.json"}}
	b := &catalog.Route{ID: "b", Provider: catalog.ProviderVertex, Format: catalog.FormatMessages, Vertex: &catalog.Vertex{Project: "p", Location: "l2", CredentialsFile: "/sa.json"}}
	other := &catalog.Route{ID: "c", Provider: catalog.ProviderVertex, Format: catalog.FormatGemini, Vertex: &catalog.Vertex{Project: "p", Location: "l", CredentialsFile: "/other.json"}}
	if c.authorizerFor(a) != c.authorizerFor(b) {
		t.Error("two routes on one key file have two token caches")
	}
	if c.authorizerFor(a) == c.authorizerFor(other) {
		t.Error("two key files share a token cache")
	}
	if !c.NextRefresh(a).IsZero() {
		t.Error("a credential never fetched has a refresh time")
	}
}

package node_test

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/auth"
	"github.com/modelgate/modelgate/transport/node"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// withServer reloads env's catalog with its server section extended by fields.
func withServer(t *testing.T, env *nodetest.Env, fields string) {
	t.Helper()
	path := filepath.Join(env.DataDir, "catalog.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(nodetest.DefaultCatalog, "{{SIM}}", env.SimURL, -1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if fields != "" {
		raw, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(strings.Replace(string(raw), "server: {", "server: {"+fields+", ", 1)), 0o600)
	}
	if err := env.Node.Reload(); err != nil {
		t.Fatal(err)
	}
}

// The session cookie is Secure and __Host- prefixed whenever the client reached the gateway
// over HTTPS: this listener's TLS, a trusted proxy's (X-Forwarded-Proto), or an https
// public_url; a client's own X-Forwarded-Proto changes nothing. The cookie set is the one
// read back, and the other name is not taken for a session.
func TestSessionCookieIsSecureWheneverTheClientUsesHTTPS(t *testing.T) {
	plain := nodetest.Start(t, "", nodetest.Options{})
	overTLS := nodetest.Start(t, "", nodetest.Options{TLS: true})
	const password = "a long test password"
	for _, env := range []*nodetest.Env{plain, overTLS} {
		token, err := env.Node.Store.IssueReset(env.Account.ID, time.Now())
		if err == nil {
			_, err = env.Node.Store.UseToken(persistence.TokenReset, token, password, time.Now())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name    string
		env     *nodetest.Env
		server  string   // the catalog's server section gains these
		headers []string // sent with the login and the session check
		secure  bool
	}{
		{name: "plain HTTP", env: plain},
		{name: "TLS here", env: overTLS, secure: true},
		{name: "behind a trusted proxy with X-Forwarded-Proto: https", env: plain, server: "trusted_proxies: [127.0.0.1]",
			headers: []string{"X-Forwarded-Proto", "https", "X-Forwarded-For", "198.51.100.7"}, secure: true},
		{name: "behind a trusted proxy with Forwarded: proto=https", env: plain, server: "trusted_proxies: ['127.0.0.0/8']",
			headers: []string{"Forwarded", "for=198.51.100.7;proto=https"}, secure: true},
		{name: "behind a trusted proxy over plain HTTP", env: plain, server: "trusted_proxies: [127.0.0.1]",
			headers: []string{"X-Forwarded-Proto", "http", "X-Forwarded-For", "198.51.100.7"}},
		{name: "an untrusted client sending X-Forwarded-Proto: https", env: plain,
			headers: []string{"X-Forwarded-Proto", "https", "Forwarded", "proto=https"}},
		{name: "an https public_url (a TLS proxy not in trusted_proxies)", env: plain, server: "public_url: 'https://llm.example.com'", secure: true},
		{name: "an http public_url", env: plain, server: "public_url: 'http://llm.example.com'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withServer(t, c.env, c.server)
			login := c.env.Post("/auth/login", "", `{"email":"test@example.com","password":"`+password+`"}`, c.headers...)
			if raw := nodetest.Read(t, login); login.StatusCode != 200 {
				t.Fatalf("login: %d %s", login.StatusCode, raw)
			}
			name, other := auth.CookieName, auth.SecureCookieName
			if c.secure {
				name, other = other, name
			}
			cookies := login.Cookies()
			if len(cookies) != 1 {
				t.Fatalf("cookies %v", cookies)
			}
			got := *cookies[0]
			want := http.Cookie{Name: name, Value: got.Value, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: c.secure,
				MaxAge: int(persistence.SessionAbsolute / time.Second)}
			got.Raw, got.RawExpires, got.Expires = "", "", time.Time{}
			if got.Value == "" || got.String() != want.String() {
				t.Fatalf("Set-Cookie %s\n          want %s", got.String(), want.String())
			}
			for _, try := range []struct {
				name   string
				status int
			}{{name, 200}, {other, 401}} {
				resp := c.env.Do(http.MethodGet, "/auth/session", "", "", append([]string{"Cookie", try.name + "=" + got.Value}, c.headers...)...)
				if raw := nodetest.Read(t, resp); resp.StatusCode != try.status {
					t.Errorf("GET /auth/session with %s: %d %s, want %d", try.name, resp.StatusCode, raw, try.status)
				}
			}
		})
	}
}

// Strict-Transport-Security goes on every answer over the listener's TLS when server.hsts is
// set (errors included), never over plain HTTP, where a TLS proxy in front is the one to
// send it; a node without TLS refuses the setting.
func TestHSTSOnAnswersOverThisListenersTLS(t *testing.T) {
	withHSTS := strings.Replace(nodetest.DefaultCatalog, "server: {", "server: {hsts: 8760h, ", 1)
	simless := func(cat string) []byte { return []byte(strings.ReplaceAll(cat, "{{SIM}}", "http://127.0.0.1:1")) }
	hsts := nodetest.Start(t, withHSTS, nodetest.Options{TLS: true})
	noHSTS := nodetest.Start(t, "", nodetest.Options{TLS: true})
	plain := nodetest.Start(t, "", nodetest.Options{})
	withServer(t, plain, "trusted_proxies: [127.0.0.1]")
	cases := []struct {
		name    string
		env     *nodetest.Env
		path    string
		key     bool
		headers []string
		status  int
		want    string
	}{
		{name: "an answer", env: hsts, path: "/healthz", status: 200, want: "max-age=31536000"},
		{name: "an API answer", env: hsts, path: "/v1/models", key: true, status: 200, want: "max-age=31536000"},
		{name: "an error", env: hsts, path: "/v1/models", status: 401, want: "max-age=31536000"},
		{name: "a path no endpoint serves", env: hsts, path: "/nowhere", status: 404, want: "max-age=31536000"},
		{name: "TLS without hsts", env: noHSTS, path: "/healthz", status: 200},
		{name: "plain HTTP behind a trusted TLS proxy", env: plain, path: "/healthz", headers: []string{"X-Forwarded-Proto", "https"}, status: 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := ""
			if c.key {
				key = c.env.Key
			}
			resp := c.env.Do(http.MethodGet, c.path, key, "", c.headers...)
			nodetest.Read(t, resp)
			if resp.StatusCode != c.status || resp.Header.Get("Strict-Transport-Security") != c.want {
				t.Fatalf("%d Strict-Transport-Security %q, want %d %q", resp.StatusCode, resp.Header.Get("Strict-Transport-Security"), c.status, c.want)
			}
		})
	}

	dir := t.TempDir()
	catPath := filepath.Join(dir, "catalog.yaml")
	os.WriteFile(catPath, simless(withHSTS), 0o600)
	n, err := node.Start(node.Config{DataDir: dir, CatalogPath: catPath, Addr: "127.0.0.1:0", MetricsAddr: "off", AdminToken: "t"})
	if err == nil {
		n.Close(t.Context())
		t.Fatal("a node without TLS started with server.hsts")
	}
	if want := "server.hsts: the listener has no TLS"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q, want it to say %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pebble")); !os.IsNotExist(err) {
		t.Fatalf("the refused start touched the data directory: %v", err)
	}
}

// servedCert is the certificate a new TLS connection to env is served.
func servedCert(t *testing.T, env *nodetest.Env) *x509.Certificate {
	t.Helper()
	conn, err := tls.Dial("tcp", strings.TrimPrefix(env.Node.URL, "https://"), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

// waitServed waits until new connections are served want (the files are read every
// TLSPollEvery).
func waitServed(t *testing.T, env *nodetest.Env, want *x509.Certificate) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !servedCert(t, env).Equal(want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still served %s, want %s", servedCert(t, env).Subject, want.Subject)
		}
	}
}

// The certificate files are read again when they change and on a reload (SIGHUP): new
// connections get the new pair. A pair that does not load (a key of another certificate,
// an expired certificate, a missing file) leaves the current one serving and is logged
// once, not at every read; a start with such a pair fails.
func TestCertificateFilesAreReadAgainAndABadPairKeepsTheCurrentOne(t *testing.T) {
	logs := &nodetest.LogBuffer{}
	env := nodetest.Start(t, "", nodetest.Options{TLS: true, TLSPollEvery: 20 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if got := servedCert(t, env); !got.Equal(env.Cert) {
		t.Fatalf("served %s, want the start's certificate", got.Subject)
	}
	other := t.TempDir()
	next := nodetest.WriteSelfSigned(t, filepath.Join(other, "next.crt"), filepath.Join(other, "next.key"), "next")
	copyFile := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err == nil {
			err = os.WriteFile(to, b, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	// The new certificate without its key yet: a rotation half done.
	copyFile(filepath.Join(other, "next.crt"), env.CertFile)
	waitLogged(t, logs, "TLS certificate not reloaded; the current one keeps serving", 1)
	if !strings.Contains(logs.String(), "private key does not match public key") {
		t.Fatalf("the log does not say why: %s", logs)
	}
	time.Sleep(100 * time.Millisecond) // five reads of the same files
	if n := strings.Count(logs.String(), "TLS certificate not reloaded"); n != 1 {
		t.Fatalf("the same bad pair was logged %d times", n)
	}
	if got := servedCert(t, env); !got.Equal(env.Cert) {
		t.Fatalf("a bad pair replaced the current one: served %s", got.Subject)
	}
	// The key follows: the next read takes the pair.
	copyFile(filepath.Join(other, "next.key"), env.KeyFile)
	waitServed(t, env, next)
	if _, err := nodetest.TLSClient(env.Cert).Get(env.Node.URL + "/healthz"); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("a client trusting only the old certificate: %v", err)
	}
	if resp, err := nodetest.TLSClient(next).Get(env.Node.URL + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("a client trusting the new certificate: %v", err)
	} else {
		resp.Body.Close()
	}

	// A reload (SIGHUP) reads the files even when the watch has not yet.
	os.Remove(env.KeyFile)
	env.Node.Reload()
	waitLogged(t, logs, "no such file or directory", 1)
	third := nodetest.WriteSelfSigned(t, env.CertFile, env.KeyFile, "third")
	env.Node.Reload()
	if got := servedCert(t, env); !got.Equal(third) {
		t.Fatalf("after a reload served %s, want third", got.Subject)
	}

	// A start with a bad pair fails, naming the files.
	os.WriteFile(env.KeyFile, []byte("not a key"), 0o600)
	dir := t.TempDir()
	catPath := filepath.Join(dir, "catalog.yaml")
	cat := strings.Replace(nodetest.DefaultCatalog, "server: {", "server: {tls: {cert_file: '"+env.CertFile+"', key_file: '"+env.KeyFile+"'}, ", 1)
	os.WriteFile(catPath, []byte(strings.ReplaceAll(cat, "{{SIM}}", "http://127.0.0.1:1")), 0o600)
	if n, err := node.Start(node.Config{DataDir: dir, CatalogPath: catPath, Addr: "127.0.0.1:0", MetricsAddr: "off", AdminToken: "t"}); err == nil {
		n.Close(t.Context())
		t.Fatal("a node started with a key that is no key")
	} else if !strings.Contains(err.Error(), "TLS: "+env.CertFile+" and "+env.KeyFile) {
		t.Fatalf("error %q does not name the files", err)
	}
}

// waitLogged waits until the log holds text n times.
func waitLogged(t *testing.T, logs *nodetest.LogBuffer, text string, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); strings.Count(logs.String(), text) < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never said %q %d times:\n%s", text, n, logs)
		}
	}
}

package peer

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestRead(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	cases := []struct {
		name    string
		remote  string
		tls     bool
		headers map[string][]string
		want    Info
	}{
		{name: "no proxy", remote: "203.0.113.5:4000", want: Info{Addr: netip.MustParseAddr("203.0.113.5")}},
		{name: "tls here", remote: "203.0.113.5:4000", tls: true, want: Info{Addr: netip.MustParseAddr("203.0.113.5"), HTTPS: true}},
		{name: "headers from an untrusted client are ignored", remote: "203.0.113.5:4000",
			headers: map[string][]string{"X-Forwarded-For": {"1.2.3.4"}, "X-Forwarded-Proto": {"https"}, "X-Forwarded-Host": {"evil.example"}, "Forwarded": {"for=1.2.3.4;proto=https"}},
			want:    Info{Addr: netip.MustParseAddr("203.0.113.5")}},
		{name: "trusted proxy", remote: "10.1.1.1:4000",
			headers: map[string][]string{"X-Forwarded-For": {"198.51.100.7"}, "X-Forwarded-Proto": {"https"}, "X-Forwarded-Host": {"llm.example.com"}},
			want:    Info{Addr: netip.MustParseAddr("198.51.100.7"), HTTPS: true, ForwardedHost: "llm.example.com", Proxied: true}},
		{name: "a client's own X-Forwarded-For left of the proxy's hop is passed over", remote: "10.1.1.1:4000",
			headers: map[string][]string{"X-Forwarded-For": {"6.6.6.6, 198.51.100.7"}},
			want:    Info{Addr: netip.MustParseAddr("198.51.100.7"), Proxied: true}},
		{name: "two trusted proxies", remote: "10.1.1.1:4000",
			headers: map[string][]string{"X-Forwarded-For": {"198.51.100.7, 10.2.2.2"}},
			want:    Info{Addr: netip.MustParseAddr("198.51.100.7"), Proxied: true}},
		{name: "several header lines", remote: "10.1.1.1:4000",
			headers: map[string][]string{"X-Forwarded-For": {"6.6.6.6", "198.51.100.7"}},
			want:    Info{Addr: netip.MustParseAddr("198.51.100.7"), Proxied: true}},
		{name: "the nearest proxy's proto wins", remote: "10.1.1.1:4000",
			headers: map[string][]string{"X-Forwarded-For": {"198.51.100.7"}, "X-Forwarded-Proto": {"https, http"}},
			want:    Info{Addr: netip.MustParseAddr("198.51.100.7"), Proxied: true}},
		{name: "Forwarded over X-Forwarded-*", remote: "[::1]:4000",
			headers: map[string][]string{"Forwarded": {`for="[2001:db8::9]:1234";proto=https;host=llm.example.com`}, "X-Forwarded-For": {"6.6.6.6"}},
			want:    Info{Addr: netip.MustParseAddr("2001:db8::9"), HTTPS: true, ForwardedHost: "llm.example.com", Proxied: true}},
		{name: "an obfuscated hop leaves the proxy as the client", remote: "10.1.1.1:4000",
			headers: map[string][]string{"Forwarded": {"for=_hidden"}},
			want:    Info{Addr: netip.MustParseAddr("10.1.1.1"), Proxied: true}},
		{name: "a bad forwarded host is dropped", remote: "10.1.1.1:4000",
			headers: map[string][]string{"X-Forwarded-Host": {"evil.example/path"}},
			want:    Info{Addr: netip.MustParseAddr("10.1.1.1"), Proxied: true}},
		{name: "a mapped IPv4 connection", remote: "[::ffff:203.0.113.5]:4000", want: Info{Addr: netip.MustParseAddr("203.0.113.5")}},
		{name: "no address", remote: "pipe", want: Info{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = c.remote
			if c.tls {
				r.TLS = &tls.ConnectionState{}
			}
			for k, v := range c.headers {
				r.Header[http.CanonicalHeaderKey(k)] = v
			}
			if got := Read(r, proxies); got != c.want {
				t.Fatalf("Read = %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestResolveAndOf: handlers behind Resolve read what it found; without it, the connection.
func TestResolveAndOf(t *testing.T) {
	var got Info
	h := Resolve(func() []netip.Prefix { return []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")} },
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = Of(r) }))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "10.0.0.1:1"
	r.Header.Set("X-Forwarded-For", "198.51.100.7")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got.String() != "198.51.100.7" || !got.Proxied {
		t.Fatalf("behind Resolve: %+v", got)
	}
	if bare := Of(r); bare.String() != "10.0.0.1" || bare.Proxied {
		t.Fatalf("without Resolve: %+v", bare)
	}
}

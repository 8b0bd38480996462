package catalog

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Edge is how the gateway meets clients on the open internet: TLS, the admin plane's own
// listener, which proxies may say who the client is, and the bounds a slow, greedy or
// guessing client meets (docs/running.md says what each protects). Listener settings (TLS,
// HSTS, admin_addr) are read at start; the rest apply to each request from the catalog it
// started with, so a reload changes them.
type Edge struct {
	// TLS serves the public listener over HTTPS (HTTP/2 and HTTP/1.1, TLS 1.2+) with this
	// certificate and key, re-read when the files change; zero: plain HTTP.
	TLS TLSFiles
	// HSTS is the max-age of the Strict-Transport-Security header sent on HTTPS answers
	// (server.hsts); 0 sends none. The node refuses it on a plain listener: the certificate
	// may come from serve's --tls-cert instead of server.tls, which the file cannot know.
	HSTS time.Duration
	// TrustedProxies are the addresses whose X-Forwarded-For/-Proto/-Host and Forwarded
	// headers are believed; from anyone else they are ignored. Default none.
	TrustedProxies []netip.Prefix
	// AdminAddr is where /admin/v1 and /admin/cluster listen (host:port or "off"); "" when
	// the file does not say (the node's default, DefaultAdminAddr, applies). Read at start.
	AdminAddr string
	// AdminTLS is the admin listener's TLS: zero for plain HTTP, or its own files;
	// AdminTLSSame reuses TLS.
	AdminTLS     TLSFiles
	AdminTLSSame bool
	// BodyTimeout is the longest a request body may take to arrive; BodyMinRate the slowest
	// it may arrive, in bytes per second, after the first BodyGrace.
	BodyTimeout time.Duration
	BodyMinRate int64
	// MaxBodyBytesInFlight caps the body bytes held by all requests in flight at once (a
	// body's buffers while it is read, then the body until its request ends); 0: sized from
	// the machine's memory at start (transport/edge). When set, at least max_body_bytes.
	MaxBodyBytesInFlight int64
	// MaxConnsPerIP caps one address's open connections to the public listener.
	MaxConnsPerIP int
	// AuthFailuresPerMinute is how many failed key, token, session or password checks one
	// client may make in a minute: the last of them starts AuthPenalty, during which its auth
	// attempts are refused with 429 (transport/authlimit).
	AuthFailuresPerMinute int
	AuthPenalty           time.Duration
	// FetchAllow are private addresses the gateway's own downloads (an upstream's image
	// link) may reach on purpose: a self-hosted upstream inside the operator's network. A
	// cloud metadata address stays refused (transport/fetch).
	FetchAllow []netip.Prefix
}

// TLSFiles is a certificate chain and its private key, PEM files.
type TLSFiles struct {
	CertFile string
	KeyFile  string
}

// Enabled reports whether files are set.
func (t TLSFiles) Enabled() bool { return t.CertFile != "" }

// Defaults of the edge settings a file leaves out.
const (
	DefaultAdminAddr             = "127.0.0.1:9465"
	DefaultBodyTimeout           = 30 * time.Second
	DefaultBodyMinRate           = 4 << 10
	BodyGrace                    = 5 * time.Second
	DefaultMaxConnsPerIP         = 256
	DefaultAuthFailuresPerMinute = 30
	DefaultAuthPenalty           = time.Minute
	// HeaderTimeout is how long a request's headers may take to arrive (not configurable:
	// no client needs longer).
	HeaderTimeout = 10 * time.Second
	// WriteTimeout is how long one write to a client (a piece of at most WritePiece bytes,
	// a flush) may wait for the client to read: a client that stops reading is cut after it,
	// a stream that lasts long is not (not configurable: it bounds a stall, not a duration).
	WriteTimeout = 30 * time.Second
	WritePiece   = 64 << 10
)

// AdminOff as admin_addr serves no admin plane at all.
const AdminOff = "off"

type edgeDoc struct {
	TLS                   *tlsDoc  `yaml:"tls"`
	HSTS                  string   `yaml:"hsts"`
	TrustedProxies        []string `yaml:"trusted_proxies"`
	AdminAddr             string   `yaml:"admin_addr"`
	AdminTLS              *tlsDoc  `yaml:"admin_tls"`
	BodyTimeout           string   `yaml:"body_timeout"`
	BodyMinRate           *int64   `yaml:"body_min_rate"`
	MaxBodyBytesInFlight  int64    `yaml:"max_body_bytes_in_flight"`
	MaxConnsPerIP         *int     `yaml:"max_conns_per_ip"`
	AuthFailuresPerMinute *int     `yaml:"auth_failures_per_minute"`
	AuthPenalty           string   `yaml:"auth_penalty"`
	FetchAllow            []string `yaml:"fetch_allow"`
}

// tlsDoc is {cert_file, key_file}, or (admin_tls only) the word "same".
type tlsDoc struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	Same     bool   `yaml:"-"`
}

func (t *tlsDoc) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if n.Value != "same" {
			return fmt.Errorf("line %d: %q: a TLS setting is {cert_file, key_file} (admin_tls may also be \"same\")", n.Line, n.Value)
		}
		t.Same = true
		return nil
	}
	type plain tlsDoc
	return n.Decode((*plain)(t))
}

func (v *validator) edge(d edgeDoc, maxBody int64) Edge {
	e := Edge{
		HSTS:        v.optionalDuration("server.hsts", d.HSTS),
		AdminAddr:   v.listenAddr("server.admin_addr", d.AdminAddr, AdminOff),
		BodyTimeout: v.duration("", "server.body_timeout", d.BodyTimeout, DefaultBodyTimeout),
		AuthPenalty: v.duration("", "server.auth_penalty", d.AuthPenalty, DefaultAuthPenalty),
	}
	e.TrustedProxies = v.prefixes("server.trusted_proxies", d.TrustedProxies)
	e.FetchAllow = v.prefixes("server.fetch_allow", d.FetchAllow)
	if d.TLS != nil {
		if d.TLS.Same {
			v.fail("", "server.tls", `"same" is for admin_tls; tls is {cert_file, key_file}`)
		}
		e.TLS = v.tlsFiles("server.tls", *d.TLS)
	}
	if d.AdminTLS != nil {
		if d.AdminTLS.Same {
			e.AdminTLSSame = true
			if d.TLS == nil {
				v.fail("", "server.admin_tls", `"same" needs server.tls`)
			}
		} else {
			e.AdminTLS = v.tlsFiles("server.admin_tls", *d.AdminTLS)
		}
	}
	e.BodyMinRate = DefaultBodyMinRate
	if d.BodyMinRate != nil {
		if e.BodyMinRate = *d.BodyMinRate; e.BodyMinRate < 0 {
			v.fail("", "server.body_min_rate", "must be 0 (no minimum) or more bytes per second")
		}
	}
	switch e.MaxBodyBytesInFlight = d.MaxBodyBytesInFlight; {
	case e.MaxBodyBytesInFlight < 0:
		v.fail("", "server.max_body_bytes_in_flight", "must be 0 (sized from memory) or more bytes")
	case e.MaxBodyBytesInFlight > 0 && e.MaxBodyBytesInFlight < maxBody:
		// A body the cap cannot hold even alone would be refused 503 forever.
		v.fail("", "server.max_body_bytes_in_flight", fmt.Sprintf("%d must be at least max_body_bytes (%d), or 0", e.MaxBodyBytesInFlight, maxBody))
	}
	e.MaxConnsPerIP = v.positiveInt("server.max_conns_per_ip", d.MaxConnsPerIP, DefaultMaxConnsPerIP)
	e.AuthFailuresPerMinute = v.positiveInt("server.auth_failures_per_minute", d.AuthFailuresPerMinute, DefaultAuthFailuresPerMinute)
	return e
}

// optionalDuration is a duration that may be absent or 0 (off).
func (v *validator) optionalDuration(field, s string) time.Duration {
	if s == "" || s == "0" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		v.fail("", field, fmt.Sprintf("%q is not a duration such as 8760h (or 0 for none)", s))
		return 0
	}
	return d
}

// listenAddr checks a host:port (port 0 picks a free one), or off.
func (v *validator) listenAddr(field, s, off string) string {
	if s == "" || s == off {
		return s
	}
	_, port, err := net.SplitHostPort(s)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		v.fail("", field, fmt.Sprintf("%q must be host:port (such as 127.0.0.1:9465) or %s", s, off))
		return ""
	}
	return s
}

// prefixes reads a list of CIDRs or single addresses (a /32 or /128).
func (v *validator) prefixes(field string, list []string) []netip.Prefix {
	var out []netip.Prefix
	for i, s := range list {
		s = strings.TrimSpace(s)
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				v.fail("", fmt.Sprintf("%s[%d]", field, i), fmt.Sprintf("%q is not a CIDR such as 10.0.0.0/8 or an address", s))
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out
}

func (v *validator) tlsFiles(field string, d tlsDoc) TLSFiles {
	if d.CertFile == "" || d.KeyFile == "" {
		v.fail("", field, "needs both cert_file and key_file (PEM files)")
	}
	return TLSFiles{CertFile: d.CertFile, KeyFile: d.KeyFile}
}

func (v *validator) positiveInt(field string, p *int, def int) int {
	if p == nil {
		return def
	}
	if *p < 1 {
		v.fail("", field, fmt.Sprintf("%d must be at least 1", *p))
		return def
	}
	return *p
}

// Package fetch is the one way the gateway downloads a file an upstream's answer points at (an
// image route's link): the provider names the URL, so the download must not reach what only
// the gateway can reach. It dials only addresses of the internet (check.AddressClass), judged
// on the address each connection is made to, after resolution, so a name that resolves to
// loopback or a rebinding DNS answer is refused like a literal; every redirect is dialled
// through the same check (at most MaxRedirects of them); no proxy is taken from the
// environment; only http and https; the size and the time are bounded; and the file's type
// is what its bytes are (codec/media), never what the server labelled them.
//
// Configured upstream calls (a route's base URL, a video's content from it) are not fetches:
// the operator chose those addresses. docs/running.md, "The gateway's own downloads".
package fetch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/media"
)

// A refused download's error wraps one of these.
var (
	ErrScheme    = errors.New("fetch: not an http or https URL")
	ErrAddress   = errors.New("fetch: address refused")
	ErrRedirects = errors.New("fetch: too many redirects")
	ErrStatus    = errors.New("fetch: the server did not answer 200")
	ErrTooLarge  = errors.New("fetch: too large")
	ErrType      = errors.New("fetch: not a type asked for")
)

const (
	// MaxRedirects is how many redirects a download follows.
	MaxRedirects = 3
	// DefaultTimeout bounds a whole download, redirects and body included.
	DefaultTimeout = 60 * time.Second
	// dialTimeout bounds one connection attempt, headerTimeout the wait for an answer's headers.
	dialTimeout   = 10 * time.Second
	headerTimeout = 30 * time.Second
)

// Want is what one download may be.
type Want struct {
	MaxBytes int64    // a longer body is ErrTooLarge
	Types    []string // what the bytes may be (media.Images, media.Videos)
	// Allow are addresses reached on purpose although not the internet's (server.fetch_allow);
	// a cloud metadata address stays refused.
	Allow []netip.Prefix
}

// File is a download's bytes and their type (one of Want.Types).
type File struct {
	Data []byte
	Type string
}

// Fetcher downloads. Its zero value is ready: the system resolver, DefaultTimeout.
type Fetcher struct {
	Timeout time.Duration
	// Lookup resolves a host name; nil is the system resolver. Tests map names with it; the
	// address it gives is checked as it is dialled, like any other.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Get downloads rawURL as want says. An error names the host, never the whole URL (a
// provider's link may carry a signature).
func (f *Fetcher) Get(ctx context.Context, rawURL string, want Want) (File, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return File{}, fmt.Errorf("%w: the link does not parse", ErrScheme)
	}
	if err := checkScheme(u); err != nil {
		return File{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(f.Timeout, DefaultTimeout))
	defer cancel()
	g := guard{allow: want.Allow, lookup: f.Lookup}
	tr := &http.Transport{
		Proxy:                  nil, // never HTTP_PROXY: a proxy would dial what the guard refuses
		DialContext:            g.dial,
		DisableKeepAlives:      true, // every hop, every download dials, so every one is checked
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    dialTimeout,
		ResponseHeaderTimeout:  headerTimeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: checkRedirect}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return File{}, fmt.Errorf("%w: %s", ErrScheme, u.Host)
	}
	req.Header.Set("Accept", strings.Join(want.Types, ", "))
	req.Header.Set("User-Agent", "modelgate")
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text holds the whole URL
		}
		return File{}, fmt.Errorf("download from %s: %w", u.Host, err)
	}
	defer resp.Body.Close()
	return read(resp, u.Host, want)
}

// read takes the answer's body within the size and checks what its bytes are.
func read(resp *http.Response, host string, want Want) (File, error) {
	if resp.StatusCode != http.StatusOK {
		return File{}, fmt.Errorf("%w: %s answered %d", ErrStatus, host, resp.StatusCode)
	}
	if resp.ContentLength > want.MaxBytes {
		return File{}, fmt.Errorf("%w: %s announced %d bytes, more than %d", ErrTooLarge, host, resp.ContentLength, want.MaxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, want.MaxBytes+1))
	if err != nil {
		return File{}, fmt.Errorf("download from %s: %w", host, err)
	}
	if int64(len(data)) > want.MaxBytes {
		return File{}, fmt.Errorf("%w: %s sent more than %d bytes", ErrTooLarge, host, want.MaxBytes)
	}
	typ := media.Sniff(data)
	if typ == "" || !slices.Contains(want.Types, typ) {
		return File{}, fmt.Errorf("%w: the %d bytes from %s are %s (labelled %q), not %s", ErrType, len(data), host,
			cmp.Or(typ, http.DetectContentType(data)), resp.Header.Get("Content-Type"), strings.Join(want.Types, ", "))
	}
	return File{Data: data, Type: typ}, nil
}

func checkScheme(u *url.URL) error {
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: %q", ErrScheme, u.Scheme+":")
	}
	return nil
}

// checkRedirect follows at most MaxRedirects redirects, each to http or https; the address
// of each is checked as it is dialled.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return fmt.Errorf("%w: more than %d, the last to %s", ErrRedirects, MaxRedirects, req.URL.Host)
	}
	return checkScheme(req.URL)
}

// guard dials only addresses of the internet, and those allowed.
type guard struct {
	allow  []netip.Prefix
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// dial resolves the host and connects to its addresses in turn, each judged by control
// before its connection is attempted.
func (g guard) dial(ctx context.Context, network, hostport string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, err
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: dialTimeout, ControlContext: g.control}
	var errs []error
	for _, a := range addrs {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func (g guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	lookup := g.lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	addrs, err := lookup(ctx, host)
	if err == nil && len(addrs) == 0 {
		err = fmt.Errorf("%s has no address", host)
	}
	return addrs, err
}

// control runs once the socket exists and before it connects: the address it is about to
// reach is the one judged, whatever name led to it.
func (g guard) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q is not an address", ErrAddress, address)
	}
	a := ap.Addr()
	class := check.AddressClass(a)
	if class == "" || (!check.CloudMetadata(a) && g.allowed(a)) {
		return nil
	}
	return fmt.Errorf("%w: %s is %s; no connection attempted", ErrAddress, a, class)
}

func (g guard) allowed(a netip.Addr) bool {
	a = a.Unmap()
	return slices.ContainsFunc(g.allow, func(p netip.Prefix) bool { return p.Contains(a) })
}

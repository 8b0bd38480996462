package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/media"
	"github.com/modelgate/modelgate/transport/fetch/fetchtest"
)

// fixture is a real file of testdata/media.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "media", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var publicAllow = fetchtest.Allow()

func images(allow ...netip.Prefix) Want {
	return Want{MaxBytes: 1 << 20, Types: media.Images, Allow: allow}
}

// names maps host names to addresses, as a resolver would.
func names(m map[string]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, a := range strings.Split(m[host], ",") {
			if a != "" {
				out = append(out, netip.MustParseAddr(a))
			}
		}
		if out == nil {
			return nil, fmt.Errorf("no such host %s", host)
		}
		return out, nil
	}
}

// TestEveryClassOfAddressIsRefusedAtTheDial: each address class that is not the internet's,
// written as a literal and as a name a resolver maps to it, is refused once resolved, before a
// connection is attempted: the loopback server sees none.
func TestEveryClassOfAddressIsRefusedAtTheDial(t *testing.T) {
	in := fetchtest.StartInternal(t)
	cases := []struct{ host, addr, class string }{
		{"127.0.0.1", "127.0.0.1", "loopback"},
		{"127.9.9.9", "127.9.9.9", "loopback"},
		{"[::1]", "::1", "loopback"},
		{"[::ffff:127.0.0.1]", "::ffff:127.0.0.1", "loopback"},
		{"0.0.0.0", "0.0.0.0", "unspecified"}, // Linux connects it to loopback
		{"[::]", "::", "unspecified"},
		{"10.0.0.1", "10.0.0.1", "private"},
		{"172.16.0.1", "172.16.0.1", "private"},
		{"192.168.1.1", "192.168.1.1", "private"},
		{"[fd00::1]", "fd00::1", "private"},
		{"169.254.1.1", "169.254.1.1", "link-local"},
		{"[fe80::1%25lo]", "fe80::1%lo", "link-local"},
		{"224.0.0.1", "224.0.0.1", "multicast"},
		{"[ff02::1]", "ff02::1", "multicast"},
		{"169.254.169.254", "169.254.169.254", "cloud metadata"},
		{"[fd00:ec2::254]", "fd00:ec2::254", "cloud metadata"},
		{"168.63.129.16", "168.63.129.16", "cloud metadata"},
		{"100.100.100.200", "100.100.100.200", "cloud metadata"},
		{"0.1.2.3", "0.1.2.3", "this network"},
		{"100.64.0.1", "100.64.0.1", "carrier-grade NAT"},
		{"192.0.0.8", "192.0.0.8", "IETF protocol assignment"},
		{"198.18.0.1", "198.18.0.1", "benchmarking"},
		{"240.0.0.1", "240.0.0.1", "reserved"},
		{"[::7f00:1]", "::7f00:1", "IPv4-compatible"},
		{"[64:ff9b::7f00:1]", "64:ff9b::7f00:1", "loopback through NAT64"},
		{"[64:ff9b::a00:1]", "64:ff9b::a00:1", "private through NAT64"},
	}
	f := &Fetcher{Lookup: names(map[string]string{})}
	for _, c := range cases {
		for _, via := range []string{"literal", "name"} {
			t.Run(c.class+"/"+c.addr+"/"+via, func(t *testing.T) {
				host := c.host
				if via == "name" {
					host = "internal.example"
					f.Lookup = names(map[string]string{host: c.addr})
				}
				_, err := f.Get(context.Background(), "http://"+host+":"+in.Port+"/latest/meta-data/", images())
				dialled := netip.MustParseAddr(c.addr).Unmap() // an IPv4-mapped address is dialled as IPv4
				want := dialled.String() + " is " + c.class + "; no connection attempted"
				if !errors.Is(err, ErrAddress) || !strings.Contains(err.Error(), want) {
					t.Fatalf("err %v, want ErrAddress saying %q", err, want)
				}
			})
		}
	}
	if n := in.Accepted(); n != 0 {
		t.Errorf("the loopback server accepted %d connections", n)
	}
}

// TestANameIsJudgedByEveryAddressItResolvesTo: a name resolving to an internal address and a
// public one reaches only the public one; to internal ones only, none (DNS rebinding: the
// address dialled is the one judged).
func TestANameIsJudgedByEveryAddressItResolvesTo(t *testing.T) {
	in := fetchtest.StartInternal(t)
	png := fixture(t, "python.png")
	srv := fetchtest.Public(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(png) }))
	port := srv[strings.LastIndex(srv, ":")+1:]
	f := &Fetcher{Lookup: names(map[string]string{"mixed.example": "127.0.0.1,127.0.0.2", "inside.example": "10.0.0.1,127.0.0.1"})}
	got, err := f.Get(context.Background(), "http://mixed.example:"+port+"/a.png", images(publicAllow...))
	if err != nil || got.Type != media.PNG || string(got.Data) != string(png) {
		t.Fatalf("mixed: %v, %s", err, got.Type)
	}
	_, err = f.Get(context.Background(), "http://inside.example:"+in.Port+"/a.png", images(publicAllow...))
	if !errors.Is(err, ErrAddress) || !strings.Contains(err.Error(), "10.0.0.1 is private") || !strings.Contains(err.Error(), "127.0.0.1 is loopback") {
		t.Fatalf("inside: %v", err)
	}
	if n := in.Accepted(); n != 0 {
		t.Errorf("the loopback server accepted %d connections", n)
	}
}

// TestRedirectsAreCheckedAtEveryHop: a public link that redirects inside (to loopback, by
// name through the system resolver, to the metadata address) is refused at that hop; three
// redirects are followed, a fourth is not; a redirect to another scheme is refused.
func TestRedirectsAreCheckedAtEveryHop(t *testing.T) {
	in := fetchtest.StartInternal(t)
	png := fixture(t, "python.png")
	var base string
	base = fetchtest.Public(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch to := r.URL.Query().Get("to"); {
		case to != "":
			http.Redirect(w, r, to, http.StatusFound)
		case r.URL.Query().Get("hops") != "" && r.URL.Query().Get("hops") != "0":
			n := int(r.URL.Query().Get("hops")[0] - '1')
			http.Redirect(w, r, fmt.Sprintf("%s/hop?hops=%d", base, n), http.StatusMovedPermanently)
		default:
			w.Write(png)
		}
	}))
	cases := []struct {
		name, url string
		err       error
		says      string
	}{
		{"to loopback", base + "/?to=http://127.0.0.1:" + in.Port + "/admin", ErrAddress, "127.0.0.1 is loopback"},
		{"to localhost (the system resolver)", base + "/?to=http://localhost:" + in.Port + "/admin", ErrAddress, "is loopback"},
		{"to the metadata address", base + "/?to=http://169.254.169.254/latest/meta-data/iam/", ErrAddress, "169.254.169.254 is cloud metadata"},
		{"to a file", base + "/?to=file:///etc/passwd", ErrScheme, `"file:"`},
		{"to ftp", base + "/?to=ftp://example.com/a.png", ErrScheme, `"ftp:"`},
		{"three redirects", base + "/hop?hops=3", nil, ""},
		{"four redirects", base + "/hop?hops=4", ErrRedirects, "more than 3, the last to 127.0.0.2"},
	}
	f := &Fetcher{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := f.Get(context.Background(), c.url, images(publicAllow...))
			switch {
			case c.err == nil && (err != nil || got.Type != media.PNG):
				t.Fatalf("%v, %q; want the PNG", err, got.Type)
			case c.err != nil && (!errors.Is(err, c.err) || !strings.Contains(err.Error(), c.says)):
				t.Fatalf("err %v; want %v saying %q", err, c.err, c.says)
			}
		})
	}
	if n := in.Accepted(); n != 0 {
		t.Errorf("the loopback server accepted %d connections", n)
	}
}

// TestFetchAllowAdmitsAPrivateUpstreamButNoMetadata: server.fetch_allow reaches an internal
// server on purpose; no prefix admits a cloud metadata address.
func TestFetchAllowAdmitsAPrivateUpstreamButNoMetadata(t *testing.T) {
	png := fixture(t, "python.png")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(png) })) // on loopback
	defer srv.Close()
	f := &Fetcher{}
	got, err := f.Get(context.Background(), srv.URL+"/a.png", images(netip.MustParsePrefix("127.0.0.0/8")))
	if err != nil || got.Type != media.PNG || string(got.Data) != string(png) {
		t.Fatalf("allowed: %v, %q", err, got.Type)
	}
	if _, err := f.Get(context.Background(), srv.URL+"/a.png", images(netip.MustParsePrefix("10.0.0.0/8"))); !errors.Is(err, ErrAddress) {
		t.Fatalf("another prefix allowed: %v", err)
	}
	_, err = f.Get(context.Background(), "http://169.254.169.254/latest/", images(netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("0.0.0.0/0")))
	if !errors.Is(err, ErrAddress) || !strings.Contains(err.Error(), "169.254.169.254 is cloud metadata") {
		t.Fatalf("metadata allowed: %v", err)
	}
}

// TestTheTypeIsWhatTheBytesAre: each stored type, from a real file's bytes, whatever the label;
// HTML labelled image/png, a video where an image is wanted and a BMP are refused.
func TestTheTypeIsWhatTheBytesAre(t *testing.T) {
	mp4 := []byte("\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41\x00\x00\x00\x08free")
	webm := []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\xf3\x81\x08\x42\x82\x84webm\x42\x87\x81\x04\x42\x85\x81\x02\x18\x53\x80\x67")
	cases := []struct {
		name  string
		body  []byte
		label string
		types []string
		want  string // "" = ErrType
	}{
		{"PNG", fixture(t, "python.png"), "application/octet-stream", media.Images, media.PNG},
		{"JPEG", fixture(t, "python.jpg"), "image/png", media.Images, media.JPEG},
		{"WebP", fixture(t, "python.webp"), "", media.Images, media.WebP},
		{"GIF", fixture(t, "python.gif"), "image/gif", media.Images, media.GIF},
		{"PNG labelled text/html", fixture(t, "python.png"), "text/html", media.Images, media.PNG},
		{"MP4", mp4, "video/quicktime", media.Videos, media.MP4},
		{"WebM", webm, "video/webm", media.Videos, media.WebM},
		{"HTML labelled image/png", []byte("<!doctype html><script>alert(document.cookie)</script>"), "image/png", media.Images, ""},
		{"SVG labelled image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), "image/svg+xml", media.Images, ""},
		{"BMP", fixture(t, "python.bmp"), "image/bmp", media.Images, ""},
		{"an MP4 where an image is wanted", mp4, "image/png", media.Images, ""},
		{"a PNG where a video is wanted", fixture(t, "python.png"), "video/mp4", media.Videos, ""},
		{"nothing", nil, "image/png", media.Images, ""},
	}
	var body []byte
	var label string
	srv := fetchtest.Public(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", label)
		w.Write(body)
	}))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body, label = c.body, c.label
			got, err := (&Fetcher{}).Get(context.Background(), srv+"/f", Want{MaxBytes: 1 << 20, Types: c.types, Allow: publicAllow})
			switch {
			case c.want != "" && (err != nil || got.Type != c.want || string(got.Data) != string(c.body)):
				t.Fatalf("%v, %q; want %s", err, got.Type, c.want)
			case c.want == "" && !errors.Is(err, ErrType):
				t.Fatalf("%v, %q; want ErrType", err, got.Type)
			}
		})
	}
}

// TestSizeStatusSchemeAndTimeAreBounded: a body over the cap (announced or not), an answer
// other than 200, a scheme other than http(s), and a server that never answers.
func TestSizeStatusSchemeAndTimeAreBounded(t *testing.T) {
	png := fixture(t, "python.png")
	srv := fetchtest.Public(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/exact", "/announced":
			w.Write(png)
		case "/streamed": // no Content-Length: the cap is found while reading
			w.Write(png[:10])
			w.(http.Flusher).Flush()
			w.Write(png[10:])
		case "/missing":
			http.NotFound(w, r)
		case "/stall":
			<-r.Context().Done()
		}
	}))
	exact := int64(len(png))
	cases := []struct {
		name, url string
		max       int64
		err       error
		says      string
	}{
		{"exactly the cap", srv + "/exact", exact, nil, ""},
		{"announced over the cap", srv + "/announced", exact - 1, ErrTooLarge, fmt.Sprintf("announced %d bytes, more than %d", exact, exact-1)},
		{"streamed over the cap", srv + "/streamed", exact - 1, ErrTooLarge, fmt.Sprintf("sent more than %d bytes", exact-1)},
		{"404", srv + "/missing", exact, ErrStatus, "answered 404"},
		{"ftp", "ftp://example.com/a.png", exact, ErrScheme, `"ftp:"`},
		{"a file", "file:///etc/passwd", exact, ErrScheme, `"file:"`},
		{"a data URL", "data:image/png;base64,iVBORw0KGgo=", exact, ErrScheme, `"data:"`},
		{"no host", "http:///a.png", exact, ErrScheme, `"http:"`},
		{"not a URL", "http://[::1", exact, ErrScheme, "does not parse"},
	}
	f := &Fetcher{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := f.Get(context.Background(), c.url, Want{MaxBytes: c.max, Types: media.Images, Allow: publicAllow})
			switch {
			case c.err == nil && (err != nil || len(got.Data) != len(png)):
				t.Fatalf("%v, %d bytes", err, len(got.Data))
			case c.err != nil && (!errors.Is(err, c.err) || !strings.Contains(err.Error(), c.says)):
				t.Fatalf("err %v; want %v saying %q", err, c.err, c.says)
			}
		})
	}
	began := time.Now()
	_, err := (&Fetcher{Timeout: 200 * time.Millisecond}).Get(context.Background(), srv+"/stall", images(publicAllow...))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(began) > 10*time.Second {
		t.Fatalf("a stalled server: %v after %v", err, time.Since(began))
	}
}

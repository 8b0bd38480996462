package check

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/check/checktest"
	"github.com/modelgate/modelgate/codec/ir"
)

// answers checks a check's answer: none when want is "", else the 400 on param saying want.
func answers(t *testing.T, e *ir.Error, param, want string) {
	t.Helper()
	switch {
	case want == "" && e != nil:
		t.Fatalf("refused: %s", e.Message)
	case want == "":
	case e == nil:
		t.Fatalf("passed, want %q", want)
	case e.Status != 400 || e.Param != param || e.Message != want:
		t.Errorf("got %d %q %q\nwant 400 %q %q", e.Status, e.Param, e.Message, param, want)
	}
}

// TestMediaURL: the URLs a client may hand the model — every scheme, every class of host a
// fetcher inside a network would reach (in the numeric spellings fetchers read), data: URLs
// of each kind — each refused with the message naming the field, or passed.
func TestMediaURL(t *testing.T) {
	notURL := func(u string) string {
		return "image_url must be an https:, http: or data: URL of an image; got " + QuoteString(u)
	}
	private := func(u string) string {
		return "image_url must not point at a private, loopback or link-local address; got " + QuoteString(u)
	}
	wrongImage := func(u string) string {
		return "image_url must be a data URL of an image: data:TYPE;base64,… with TYPE one of image/png, image/jpeg, image/webp, image/gif; got " + QuoteString(u)
	}
	notBase64 := func(u string) string {
		return "image_url is a data URL whose data is not valid base64; got " + QuoteString(u)
	}
	long := "https://example.com/" + strings.Repeat("a", 2030)
	cases := []struct {
		name, url string
		media     Media
		want      string // "" = passes
	}{
		{"https", "https://example.com/cat.png", Image, ""},
		{"http", "http://cdn.example.com:8080/a.jpg?x=1#f", Image, ""},
		{"HTTPS in capitals", "HTTPS://EXAMPLE.COM/A.PNG", Image, ""},
		{"a public address", "http://8.8.8.8/a.png", Image, ""},
		{"a public address as one number", "http://134744072/a.png", Image, ""},
		{"a public IPv6 address", "https://[2606:4700::1111]/a.png", Image, ""},
		{"user info naming a private host", "https://127.0.0.1@example.com/a.png", Image, ""},
		{"a URL of 2048 bytes", long[:2048], Image, ""},
		{"a URL over 2048 bytes", long[:2049], Image, `image_url must be an https:, http: or data: URL of an image; got "https://example.com/aaaaaaaaaaaaaaaaaaa…`},
		{"file:", "file:///etc/passwd", Image, notURL("file:///etc/passwd")},
		{"ftp:", "ftp://example.com/a.png", Image, notURL("ftp://example.com/a.png")},
		{"gopher:", "gopher://127.0.0.1:6379/_INFO", Image, notURL("gopher://127.0.0.1:6379/_INFO")},
		{"javascript:", "javascript:alert(1)", Image, notURL("javascript:alert(1)")},
		{"gs:", "gs://bucket/a.png", Image, notURL("gs://bucket/a.png")},
		{"no scheme", "//example.com/a.png", Image, notURL("//example.com/a.png")},
		{"a bare path", "/etc/passwd", Image, notURL("/etc/passwd")},
		{"not a url", "not a url", Image, notURL("not a url")},
		{"empty", "", Image, notURL("")},
		{"no host", "http:///a.png", Image, notURL("http:///a.png")},
		{"a space before the scheme", " http://example.com/", Image, notURL(" http://example.com/")},
		{"loopback", "http://127.0.0.1:6379/", Image, private("http://127.0.0.1:6379/")},
		{"loopback in capitals of a name", "http://LOCALHOST/a.png", Image, private("http://LOCALHOST/a.png")},
		{"loopback as one number", "http://2130706433/", Image, private("http://2130706433/")},
		{"loopback in hex", "http://0x7f000001/", Image, private("http://0x7f000001/")},
		{"loopback in short hex", "http://0x7f.1/", Image, private("http://0x7f.1/")},
		{"loopback in octal", "http://0177.0.0.1/", Image, private("http://0177.0.0.1/")},
		{"loopback shortened", "http://127.1/", Image, private("http://127.1/")},
		{"loopback with a trailing dot", "http://127.0.0.1./", Image, private("http://127.0.0.1./")},
		{"loopback percent-encoded", "http://%31%32%37.0.0.1/", Image, notURL("http://%31%32%37.0.0.1/")},
		{"IPv6 loopback", "http://[::1]/a.png", Image, private("http://[::1]/a.png")},
		{"IPv4-mapped loopback", "http://[::ffff:127.0.0.1]/", Image, private("http://[::ffff:127.0.0.1]/")},
		{"IPv4-mapped loopback in hex", "http://[::ffff:7f00:1]/", Image, private("http://[::ffff:7f00:1]/")},
		{"IPv4-mapped metadata address", "http://[::ffff:a9fe:a9fe]/", Image, private("http://[::ffff:a9fe:a9fe]/")},
		{"the unspecified address", "http://0.0.0.0:8080/", Image, private("http://0.0.0.0:8080/")},
		{"zero", "http://0/", Image, private("http://0/")},
		{"the cloud metadata address", "http://169.254.169.254/latest/meta-data/", Image, private("http://169.254.169.254/latest/meta-data/")},
		{"the metadata name", "http://metadata.google.internal/computeMetadata/v1/", Image, private("http://metadata.google.internal/computeMetadata/v1/")},
		{"a private network", "https://10.1.2.3/a.png", Image, private("https://10.1.2.3/a.png")},
		{"a private 172.16/12 address", "http://172.31.255.1/", Image, private("http://172.31.255.1/")},
		{"a home network", "http://192.168.0.1/", Image, private("http://192.168.0.1/")},
		{"carrier-grade NAT", "http://100.64.0.1/", Image, private("http://100.64.0.1/")},
		{"an IPv6 unique local address", "http://[fd00::1]/", Image, private("http://[fd00::1]/")},
		{"an IPv6 link-local address with a zone", "http://[fe80::1%25eth0]/", Image, private("http://[fe80::1%25eth0]/")},
		{"a .local name", "http://printer.local/", Image, private("http://printer.local/")},
		{"a name under localhost", "http://app.localhost:3000/", Image, private("http://app.localhost:3000/")},
		{"a PNG data URL", "data:image/png;base64," + checktest.PNG, Image, ""},
		{"a data URL in capitals", "DATA:IMAGE/JPEG;BASE64,/9j/", Image, ""},
		{"a webp data URL without padding", "data:image/webp;base64,UklGRg", Image, ""},
		{"a gif data URL", "data:image/gif;base64,R0lGODlh", Image, ""},
		{"a data URL with line breaks", "data:image/png;base64,iVBO\r\nRw0K", Image, ""},
		{"invalid base64", "data:image/png;base64,@@@", Image, notBase64("data:image/png;base64,@@@")},
		{"base64 of one character too many", "data:image/png;base64,iVBOR", Image, notBase64("data:image/png;base64,iVBOR")},
		{"data after the padding", "data:image/png;base64,iV==BO", Image, notBase64("data:image/png;base64,iV==BO")},
		{"too much padding", "data:image/png;base64,iVBO===", Image, notBase64("data:image/png;base64,iVBO===")},
		{"URL-safe base64", "data:image/png;base64,_-8A", Image, notBase64("data:image/png;base64,_-8A")},
		{"empty data", "data:image/png;base64,", Image, notBase64("data:image/png;base64,")},
		{"an SVG", "data:image/svg+xml;base64,PHN2Zz4=", Image, wrongImage("data:image/svg+xml;base64,PHN2Zz4=")},
		{"HTML", "data:text/html;base64,PHNjcmlwdD4=", Image, wrongImage("data:text/html;base64,PHNjcmlwdD4=")},
		{"a data URL without base64", "data:image/png,rawbytes", Image, wrongImage("data:image/png,rawbytes")},
		{"a data URL with parameters", "data:image/png;name=a.png;base64,iVBO", Image, wrongImage("data:image/png;name=a.png;base64,iVBO")},
		{"a data URL without a comma", "data:image/png;base64", Image, wrongImage("data:image/png;base64")},
		{"a data URL without a type", "data:;base64,iVBO", Image, wrongImage("data:;base64,iVBO")},
		{"a PDF as a file", "data:application/pdf;base64,JVBERi0=", File, ""},
		{"any type as a file", "data:text/plain;base64,aGk=", File, ""},
		{"a file without a subtype", "data:text/;base64,aGk=", File,
			`image_url must be a data URL of a file: data:TYPE;base64,… with TYPE any type/subtype; got "data:text/;base64,aGk="`},
		{"a private file URL", "http://10.0.0.1/a.pdf", File, private("http://10.0.0.1/a.pdf")},
		{"an audio clip", "data:audio/mpeg;base64,SUQz", Audio, ""},
		{"an image as an audio", "data:image/png;base64,iVBO", Audio,
			`image_url must be a data URL of an audio: data:TYPE;base64,… with TYPE audio/…; got "data:image/png;base64,iVBO"`},
		{"a file: video", "file:///tmp/a.mp4", Video, `image_url must be an https:, http: or data: URL of a video; got "file:///tmp/a.mp4"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			answers(t, MediaURL("image_url", c.url, c.media), "image_url", c.want)
		})
	}
}

// TestInline: media sent as a type and base64 data in two members; each refusal names the
// member at fault.
func TestInline(t *testing.T) {
	cases := []struct {
		name, mediaType, data string
		media                 Media
		param, want           string // "" = passes
	}{
		{"a PNG", "image/png", checktest.PNG, Image, "", ""},
		{"a type in capitals", "IMAGE/JPEG", "/9j/", Image, "", ""},
		{"an SVG", "image/svg+xml", "PHN2Zz4=", Image, "source.media_type",
			`source.media_type must be one of image/png, image/jpeg, image/webp, image/gif for an image; got "image/svg+xml"`},
		{"a PDF as an image", "application/pdf", "JVBERi0=", Image, "source.media_type",
			`source.media_type must be one of image/png, image/jpeg, image/webp, image/gif for an image; got "application/pdf"`},
		{"invalid base64", "image/png", "not base64!", Image, "source.data", `source.data must be valid base64; got "not base64!"`},
		{"empty data", "image/png", "", Image, "source.data", `source.data must be valid base64; got ""`},
		{"a PDF", "application/pdf", "JVBERi0=", File, "", ""},
		{"a file without a subtype", "application", "JVBERi0=", File, "source.media_type",
			`source.media_type must be any type/subtype for a file; got "application"`},
		{"a file of invalid base64", "application/pdf", "%PDF-1.7", File, "source.data", `source.data must be valid base64; got "%PDF-1.7"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			answers(t, Inline("source.media_type", c.mediaType, "source.data", c.data, c.media), c.param, c.want)
		})
	}
	if e := Inline("", "", "input_audio.data", "UklGRg==", Audio); e != nil {
		t.Errorf("data without a type member: %s", e.Message)
	}
}

// TestDataURL: the one splitter of data: URLs every format reads them with.
func TestDataURL(t *testing.T) {
	cases := []struct {
		in, mediaType, data string
		ok                  bool
	}{
		{"data:image/png;base64,iVBO", "image/png", "iVBO", true},
		{"Data:image/png;BASE64,iVBO", "image/png", "iVBO", true},
		{"data:application/pdf;base64,", "application/pdf", "", true},
		{"data:image/png,iVBO", "", "", false},
		{"data:image/png;base64", "", "", false},
		{"https://example.com/a.png", "", "", false},
		{"", "", "", false},
	}
	for _, c := range cases {
		mt, data, ok := DataURL(c.in)
		if mt != c.mediaType || data != c.data || ok != c.ok {
			t.Errorf("DataURL(%q) = %q, %q, %v; want %q, %q, %v", c.in, mt, data, ok, c.mediaType, c.data, c.ok)
		}
	}
}

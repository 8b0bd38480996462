package badinput_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// edgeCases: what a client says about where it reached the gateway never writes a link. The
// suite's node has no public_url and trusts no proxy, so an image's url starts with the
// listen address whatever Host, X-Forwarded-* or Forwarded the client sends, and so does the
// base URL an unknown path's message suggests.
func edgeCases() []badCase {
	const p = "/v1/images/generations"
	image := func(name string, headers ...string) badCase {
		eff := servedBy(1000)
		eff.images, eff.files = 1, 1
		return post("edge", name, p, `{"model":"img","prompt":"a lighthouse"}`, ok200, eff).withHeaders(headers...).checking(linkAtListenAddress)
	}
	return []badCase{
		image("an image, Host: evil.example", "Host", "evil.example"),
		image("an image, an untrusted X-Forwarded-Host and -Proto", "X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "https"),
		image("an image, an untrusted Forwarded", "Forwarded", "for=203.0.113.9;proto=https;host=evil.example"),
		image("an image, all of them", "Host", "evil.example:443", "X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "https",
			"X-Forwarded-For", "203.0.113.9", "Forwarded", "host=evil.example;proto=https"),
		{endpoint: "edge", name: "the version twice, Host: evil.example", method: "POST", path: "/v1/v1/chat/completions",
			headers: []string{"Host", "evil.example", "X-Forwarded-Host", "evil.example"}, eff: nothing,
			want: chatErr(404, "invalid_request_error", "unknown_url", "", "drop /v1 from the base URL (use http://127.0.0.1:"),
			check: func(t *testing.T, s *suite, _ *caseAccount, raw []byte) {
				if e, err := nodetest.ReadEnvelope(raw); err != nil || !strings.Contains(e.Message, "(use "+s.env.Node.URL+")") {
					t.Errorf("message %q, want it to suggest %s", e.Message, s.env.Node.URL)
				}
			}},
	}
}

// linkAtListenAddress: the image's url is the listen address's /assets/gen/ file.
func linkAtListenAddress(t *testing.T, s *suite, _ *caseAccount, raw []byte) {
	var out struct{ Data []struct{ URL string } }
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Data) != 1 {
		t.Fatalf("image answer %s", raw)
	}
	if u := out.Data[0].URL; !strings.HasPrefix(u, s.env.Node.URL+"/assets/gen/") || strings.Contains(u, "evil") {
		t.Errorf("url %s, want it under %s/assets/gen/", u, s.env.Node.URL)
	}
}

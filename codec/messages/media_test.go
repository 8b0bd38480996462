package messages

import (
	"testing"

	"github.com/modelgate/modelgate/codec/check/checktest"
)

// TestMessagesMediaIsChecked: an image's or a document's source (in a turn or a tool result)
// points only at a public web address or holds valid base64 of an allowed type; each refusal
// is a 400 in the messages envelope whose message starts with the field.
func TestMessagesMediaIsChecked(t *testing.T) {
	block := func(b string) string {
		return `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"look"},` + b + `]}]}`
	}
	image := func(source string) string { return block(`{"type":"image","source":` + source + `}`) }
	const url = "messages[0].content[1].source.url"
	private := func(u string) string {
		return url + ` must not point at a private, loopback or link-local address; got "` + u + `"`
	}
	cases := []checktest.Refusal{
		{"a local file", image(`{"type":"url","url":"file:///etc/passwd"}`), url, url + ` must be an https:, http: or data: URL of an image; got "file:///etc/passwd"`},
		{"the metadata service", image(`{"type":"url","url":"http://169.254.169.254/latest/meta-data/"}`), url,
			url + ` must not point at a private, loopback or link-local address; got "http://169.254.169.254/latest/meta-data…`},
		{"a loopback port", image(`{"type":"url","url":"http://127.0.0.1:6379/"}`), url, private("http://127.0.0.1:6379/")},
		{"loopback as one number", image(`{"type":"url","url":"http://2130706433/"}`), url, private("http://2130706433/")},
		{"not a url", image(`{"type":"url","url":"not a url"}`), url, url + ` must be an https:, http: or data: URL of an image; got "not a url"`},
		{"invalid base64", image(`{"type":"base64","media_type":"image/png","data":"@@@"}`),
			"messages[0].content[1].source.data", `messages[0].content[1].source.data must be valid base64; got "@@@"`},
		{"an SVG", image(`{"type":"base64","media_type":"image/svg+xml","data":"PHN2Zz4="}`), "messages[0].content[1].source.media_type",
			`messages[0].content[1].source.media_type must be one of image/png, image/jpeg, image/webp, image/gif for an image; got "image/svg+xml"`},
		{"a private document", block(`{"type":"document","source":{"type":"url","url":"http://10.0.0.7/a.pdf"}}`), url, private("http://10.0.0.7/a.pdf")},
		{"a document of invalid base64", block(`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"%PDF-1.7"}}`),
			"messages[0].content[1].source.data", `messages[0].content[1].source.data must be valid base64; got "%PDF-1.7"`},
		{"an image in a tool result", `{"model":"m","max_tokens":10,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"type":"url","url":"http://[::1]/a.png"}}]}]}]}`,
			"messages[1].content[0].content[0].source.url", `messages[1].content[0].content[0].source.url must not point at a private, loopback or link-local address; got "http://[::1]/a.png"`},
	}
	checkRefusals(t, cases)
}

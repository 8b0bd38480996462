package responses

import (
	"testing"

	"github.com/modelgate/modelgate/codec/check/checktest"
)

// TestResponsesMediaIsChecked: input_image's image_url and input_file's file_url and
// file_data point only at a public web address or hold valid base64; each refusal is a 400
// in the chat envelope naming the member.
func TestResponsesMediaIsChecked(t *testing.T) {
	part := func(p string) string {
		return `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"look"},` + p + `]}]}`
	}
	const img = "input[0].content[1].image_url"
	private := func(param, u string) string {
		return param + ` must not point at a private, loopback or link-local address; got "` + u + `"`
	}
	cases := []checktest.Refusal{
		{"a local file", part(`{"type":"input_image","image_url":"file:///etc/passwd"}`), img, img + ` must be an https:, http: or data: URL of an image; got "file:///etc/passwd"`},
		{"the metadata service", part(`{"type":"input_image","image_url":"http://169.254.169.254/"}`), img, private(img, "http://169.254.169.254/")},
		{"a loopback port", part(`{"type":"input_image","image_url":"http://127.0.0.1:6379/"}`), img, private(img, "http://127.0.0.1:6379/")},
		{"IPv4-mapped loopback", part(`{"type":"input_image","image_url":"http://[::ffff:127.0.0.1]/"}`), img, private(img, "http://[::ffff:127.0.0.1]/")},
		{"not a url", part(`{"type":"input_image","image_url":"not a url"}`), img, img + ` must be an https:, http: or data: URL of an image; got "not a url"`},
		{"invalid base64", part(`{"type":"input_image","image_url":"data:image/png;base64,!!"}`), img, img + ` is a data URL whose data is not valid base64; got "data:image/png;base64,!!"`},
		{"a private file_url", part(`{"type":"input_file","file_url":"http://192.168.0.2/a.pdf"}`),
			"input[0].content[1].file_url", private("input[0].content[1].file_url", "http://192.168.0.2/a.pdf")},
		{"file_data of invalid base64", part(`{"type":"input_file","filename":"a.pdf","file_data":"%PDF-1.7"}`),
			"input[0].content[1].file_data", `input[0].content[1].file_data must be valid base64; got "%PDF-1.7"`},
		{"a file_data data URL without base64", part(`{"type":"input_file","file_data":"data:application/pdf,%PDF"}`),
			"input[0].content[1].file_data", `input[0].content[1].file_data must be a data URL of a file: data:TYPE;base64,… with TYPE any type/subtype; got "data:application/pdf,%PDF"`},
	}
	checkRefusals(t, cases)
}

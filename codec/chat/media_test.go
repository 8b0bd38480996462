package chat

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/check/checktest"
)

// withParts is a chat request whose user turn holds the content parts given.
func withParts(parts string) string {
	return `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"look"},` + parts + `]}]}`
}

// TestChatMediaIsCheckedInTheLightParse: the body a chat route is handed as it is points at
// nothing the client may not name. The light parse (no decode) and the full decode refuse the
// same parts with the same 400 naming the member, whatever spelling the key has; what passes
// reports whether it holds an image.
func TestChatMediaIsCheckedInTheLightParse(t *testing.T) {
	private := func(param, u string) string {
		return param + " must not point at a private, loopback or link-local address; got \"" + u + "\""
	}
	const img = "messages[1].content[1].image_url.url"
	cases := []struct {
		name, parts, param, message string
	}{
		{"a local file", `{"type":"image_url","image_url":{"url":"file:///etc/passwd"}}`,
			img, img + ` must be an https:, http: or data: URL of an image; got "file:///etc/passwd"`},
		{"the metadata service", `{"type":"image_url","image_url":{"url":"http://169.254.169.254/x"}}`, img, private(img, "http://169.254.169.254/x")},
		{"a loopback port", `{"type":"image_url","image_url":{"url":"http://127.0.0.1:6379/"}}`, img, private(img, "http://127.0.0.1:6379/")},
		{"not a url", `{"type":"image_url","image_url":{"url":"not a url"}}`, img, img + ` must be an https:, http: or data: URL of an image; got "not a url"`},
		{"invalid base64", `{"type":"image_url","image_url":{"url":"data:image/png;base64,@@"}}`,
			img, img + ` is a data URL whose data is not valid base64; got "data:image/png;base64,@@"`},
		{"an HTML data URL", `{"type":"image_url","image_url":{"url":"data:text/html;base64,PGI+"}}`,
			img, img + ` must be a data URL of an image: data:TYPE;base64,… with TYPE one of image/png, image/jpeg, image/webp, image/gif; got "data:text/html;base64,PGI+"`},
		{"an escaped key", `{"type":"image_url","image\u005furl":{"url":"http:\/\/[::1]\/"}}`, img, private(img, "http://[::1]/")},
		{"the last of two urls", `{"type":"image_url","image_url":{"url":"https://example.com/a.png","url":"http://10.0.0.1/"}}`, img, private(img, "http://10.0.0.1/")},
		{"a bare string image_url", `{"type":"image_url","image_url":"http://localhost/a.png"}`,
			"messages[1].content[1].image_url", private("messages[1].content[1].image_url", "http://localhost/a.png")},
		{"an image_url without url", `{"type":"image_url","image_url":{"detail":"low"}}`,
			"messages[1].content[1].image_url.url", "messages[1].content[1].image_url.url is required: the URL of an image"},
		{"an image_url of a number", `{"type":"image_url","image_url":7}`,
			"messages[1].content[1].image_url", `messages[1].content[1].image_url must be an object {"url": …}; got 7`},
		{"a video_url (vLLM)", `{"type":"video_url","video_url":{"url":"http://192.168.1.5/v.mp4"}}`,
			"messages[1].content[1].video_url.url", private("messages[1].content[1].video_url.url", "http://192.168.1.5/v.mp4")},
		{"an audio_url (vLLM)", `{"type":"audio_url","audio_url":{"url":"gopher://x/"}}`,
			"messages[1].content[1].audio_url.url", `messages[1].content[1].audio_url.url must be an https:, http: or data: URL of an audio; got "gopher://x/"`},
		{"a file's data", `{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,%PDF"}}`,
			"messages[1].content[1].file.file_data", `messages[1].content[1].file.file_data is a data URL whose data is not valid base64; got "data:application/pdf;base64,%PDF"`},
		{"an input_audio's data", `{"type":"input_audio","input_audio":{"data":"RIFF....","format":"wav"}}`,
			"messages[1].content[1].input_audio.data", `messages[1].content[1].input_audio.data must be valid base64; got "RIFF...."`},
	}
	refusals := make([]checktest.Refusal, len(cases))
	for i, c := range cases {
		refusals[i] = checktest.Refusal{Name: c.name, Body: withParts(c.parts), Param: c.param, Message: c.message}
	}
	checkRefusals(t, refusals)
}

// TestChatMediaThatPasses: web and inline media of the allowed kinds pass the light parse,
// which says whether an image is among them, as the full decode's IR does.
func TestChatMediaThatPasses(t *testing.T) {
	cases := []struct {
		name, body string
		images     bool
	}{
		{"text only", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, false},
		{"text parts", withParts(`{"type":"text","text":"image_url: http://127.0.0.1/ in words"}`), false},
		{"an https image", withParts(`{"type":"image_url","image_url":{"url":"https://example.com/a.png","detail":"low"}}`), true},
		{"an inline PNG", withParts(`{"type":"image_url","image_url":{"url":"data:image/png;base64,` + checktest.PNG + `"}}`), true},
		{"an image in a tool result", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":[{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}]}`, true},
		{"a PDF file", withParts(`{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjcK"}}`), false},
		{"a file id", withParts(`{"type":"file","file":{"file_id":"file-abc"}}`), false},
		{"an audio clip", withParts(`{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}`), false},
		{"a null image_url", withParts(`{"type":"text","text":"x","image_url":null}`), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseRequest([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if r.Images != c.images {
				t.Errorf("Images = %v, want %v", r.Images, c.images)
			}
		})
	}
	for _, c := range cases[:5] {
		req, err := DecodeIR([]byte(c.body))
		if err != nil || req.HasImages() != c.images {
			t.Errorf("%s: the IR has images %v (%v), want %v", c.name, req != nil && req.HasImages(), err, c.images)
		}
	}
}

// What checking a chat body's media costs the hot path, beside the full decode it avoids: a
// turn of text, an https image and a 96 KiB inline PNG.
//
//	go test -run '^$' -bench ChatMedia -benchmem ./codec/chat/
func BenchmarkChatMedia(b *testing.B) {
	inline := strings.Repeat("A", 96<<10)
	body := []byte(withParts(`{"type":"text","text":"` + strings.Repeat("words ", 200) + `"},` +
		`{"type":"image_url","image_url":{"url":"https://example.com/a.png"}},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,` + inline + `"}}`))
	for name, decode := range map[string]func([]byte) error{
		"light parse": func(b []byte) error { _, err := ParseRequest(b); return err },
		"full decode": func(b []byte) error { _, err := DecodeIR(b); return err },
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := decode(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

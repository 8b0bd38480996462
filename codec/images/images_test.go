package images

import (
	"encoding/base64"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

// TestSizeWithoutSizes: a model without sizes of its own makes any size of at most MaxSide
// a side at the closest aspect ratio of the gateway's Sizes.
func TestSizeWithoutSizes(t *testing.T) {
	cases := map[string]string{
		"":          "2048x2048",
		"1024x1024": "2048x2048",
		"1792x1024": "2752x1536", // 1.75: 2752x1536 (1.79) is closer than 2496x1664 (1.5)
		"1024x1792": "1536x2752",
		"1920x1080": "2752x1536",
		"2560x720":  "2560x720",
		"100x300":   "1344x3136",
		"4000x1000": "2560x720", // 2560x720 and 3072x864 share 32:9; the first listed wins
		"4096x4096": "2048x2048",
	}
	for in, want := range cases {
		got, err := Options{}.size(in)
		if err != nil || got != want {
			t.Errorf("size(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestDecodeRequest(t *testing.T) {
	cases := []struct {
		body  string
		param string // "" = valid
	}{
		{`{"model":"m","prompt":"a cat"}`, ""},
		{`{"model":"m","prompt":"a cat","n":1,"response_format":"b64_json","size":"1024x1024"}`, ""},
		{`{"model":"m"}`, "prompt"},
		{`{"model":"m","prompt":"  "}`, "prompt"},
		{`{"prompt":"x"}`, "model"},
		{`{"model":"m","prompt":"x","n":2}`, "n"},
		{`{"model":"m","prompt":"x","response_format":"jpeg"}`, "response_format"},
		{`{"model":"m","prompt":"x","size":"huge"}`, "size"},
		{`{"model":"m","prompt":"x","size":"0x10"}`, "size"},
		{`{"model":"m","prompt":"x","size":"-5x5"}`, "size"},
		{`{"model":"m","prompt":"x","size":"10x"}`, "size"},
	}
	for _, c := range cases {
		_, err := DecodeRequest([]byte(c.body))
		if c.param == "" && err != nil || c.param != "" && (err == nil || err.(*ir.Error).Param != c.param) {
			t.Errorf("%s: err %v, want param %q", c.body, err, c.param)
		}
	}
}

func TestDecodeAnswers(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nrest")
	b64 := base64.StdEncoding.EncodeToString(png)
	img, err := DecodeChat([]byte(`{"created":1,"data":[{"b64_json":"` + b64 + `","revised_prompt":"r"}],"usage":{"input_tokens":3,"output_tokens":1056}}`))
	if err != nil || string(img.Data) != string(png) || img.MediaType != "image/png" || img.InputTokens != 3 || img.OutputTokens != 1056 || img.RevisedPrompt != "r" {
		t.Fatalf("chat: %+v %v", img, err)
	}
	img, err = DecodeChat([]byte(`{"data":[{"url":"http://x/y.png"}]}`))
	if err != nil || img.URL != "http://x/y.png" || img.Data != nil {
		t.Fatalf("chat url: %+v %v", img, err)
	}
	img, err = DecodeGemini([]byte(`{"candidates":[{"content":{"parts":[{"text":"here"},{"inlineData":{"mimeType":"image/png","data":"` + b64 + `"}}]}}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":1290}}`))
	if err != nil || string(img.Data) != string(png) || img.InputTokens != 4 || img.OutputTokens != 1290 {
		t.Fatalf("gemini: %+v %v", img, err)
	}
	if _, err := DecodeGemini([]byte(`{"candidates":[{"content":{"parts":[{"text":"no"}]}}]}`)); err == nil {
		t.Fatal("answer without image accepted")
	}
	for size, want := range map[string]string{"2560x720": "21:9", "2048x2048": "1:1", "2752x1536": "16:9", "1536x2752": "9:16", "1824x2272": "4:5"} {
		if got := AspectRatio(size); got != want {
			t.Errorf("AspectRatio(%s) = %s, want %s", size, got, want)
		}
	}
}

// TestAnswersTheGatewayCannotServeAreRefused (found by FuzzDecodeChat): an
// upstream image the gateway could not store (empty, or bytes that are not PNG, JPEG, WebP or
// GIF whatever the answer calls them) is a broken answer, so the next route may serve it; the
// type is the bytes', never the label's; a negative token count is none.
func TestAnswersTheGatewayCannotServeAreRefused(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nrest"))
	jpeg := base64.StdEncoding.EncodeToString([]byte("\xff\xd8\xff\xe0\x00\x10JFIF"))
	html := base64.StdEncoding.EncodeToString([]byte("<html><script>alert(1)</script></html>"))
	const notServable = "the answer's image is not PNG, JPEG, WebP or GIF"
	cases := []struct {
		name   string
		decode func([]byte) (*Image, error)
		body   string
		err    string // "" = decodes to mediaType
		media  string
	}{
		{"chat, bytes of no image type", DecodeChat, `{"data":[{"b64_json":"AAAA"}],"output_format":"avif"}`, notServable, ""},
		{"chat, the magic number wins", DecodeChat, `{"data":[{"b64_json":"` + png + `"}],"output_format":"avif"}`, "", "image/png"},
		{"chat, JPEG bytes called png", DecodeChat, `{"data":[{"b64_json":"` + jpeg + `"}],"output_format":"png"}`, "", "image/jpeg"},
		{"chat, HTML called png", DecodeChat, `{"data":[{"b64_json":"` + html + `"}],"output_format":"png"}`, notServable, ""},
		{"gemini, empty data", DecodeGemini, `{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":""}}]}}]}`, "the answer's image is empty", ""},
		{"gemini, HTML labelled image/png", DecodeGemini, `{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"` + html + `"}}]}}]}`, notServable, ""},
		{"gemini, PNG bytes labelled image/tiff", DecodeGemini, `{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/tiff","data":"` + png + `"}}]}}]}`, "", "image/png"},
		{"gemini, an image type not served", DecodeGemini, `{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/tiff","data":"AAAA"}}]}}]}`, notServable, ""},
	}
	for _, c := range cases {
		img, err := c.decode([]byte(c.body))
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%s: %+v, %v; want error %q", c.name, img, err, c.err)
		case c.err == "" && (err != nil || img.MediaType != c.media):
			t.Errorf("%s: %+v, %v; want %s", c.name, img, err, c.media)
		}
	}
	img, err := DecodeChat([]byte(`{"data":[{"url":"https://x/y.png"}],"usage":{"input_tokens":-5,"output_tokens":-1}}`))
	if err != nil || img.InputTokens != 0 || img.OutputTokens != 0 {
		t.Errorf("negative counts: %+v, %v", img, err)
	}
}

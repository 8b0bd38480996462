package videos

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/check/checktest"
)

// TestVideoInputsMustBeWebOrInlineMedia: frames and references are https:, http: or data: URLs
// of the right media; a mode that does not use a frame or a reference refuses it; an aspect
// ratio the model does not make is refused with the ones it does. Each is a 400 naming the
// field, in the OpenAI envelope the videos endpoint speaks.
func TestVideoInputsMustBeWebOrInlineMedia(t *testing.T) {
	const head = `{"model":"v","prompt":"waves",`
	cases := []struct {
		name, body, param, message string
	}{
		{"a local file as the first frame", head + `"mode":"keyframe","first_frame":"file:///etc/passwd"}`,
			"first_frame", `first_frame must be an https:, http: or data: URL of an image; got "file:///etc/passwd"`},
		{"an ftp last frame", head + `"mode":"keyframe","last_frame":"ftp://host/a.png"}`,
			"last_frame", `last_frame must be an https:, http: or data: URL of an image; got "ftp://host/a.png"`},
		{"a bare path", head + `"mode":"keyframe","first_frame":"/tmp/a.png"}`,
			"first_frame", `first_frame must be an https:, http: or data: URL of an image; got "/tmp/a.png"`},
		{"an http URL without a host", head + `"mode":"keyframe","first_frame":"http:///a.png"}`,
			"first_frame", `first_frame must be an https:, http: or data: URL of an image; got "http:///a.png"`},
		{"the cloud's metadata service as the first frame", head + `"mode":"keyframe","first_frame":"http://169.254.169.254/latest/"}`,
			"first_frame", `first_frame must not point at a private, loopback or link-local address; got "http://169.254.169.254/latest/"`},
		{"localhost as the last frame", head + `"mode":"keyframe","last_frame":"https://localhost:8080/a.png"}`,
			"last_frame", `last_frame must not point at a private, loopback or link-local address; got "https://localhost:8080/a.png"`},
		{"a private network's reference audio", head + `"mode":"reference","audios":["http://[fd00::1]/a.mp3"]}`,
			"audios[0]", `audios[0] must not point at a private, loopback or link-local address; got "http://[fd00::1]/a.mp3"`},
		{"a data URL of text as a frame", head + `"mode":"keyframe","first_frame":"data:text/plain;base64,aGk="}`,
			"first_frame", `first_frame must be a data URL of an image: data:TYPE;base64,… with TYPE one of image/png, image/jpeg, image/webp, image/gif; got "data:text/plain;base64,aGk="`},
		{"a data URL without base64", head + `"mode":"keyframe","first_frame":"data:image/png,abc"}`,
			"first_frame", `first_frame must be a data URL of an image: data:TYPE;base64,… with TYPE one of image/png, image/jpeg, image/webp, image/gif; got "data:image/png,abc"`},
		{"a data URL whose payload is not base64 (FuzzDecodeCreate)", head + `"mode":"reference","audios":["dAtA:Audio/mpeg;base64,0"]}`,
			"audios[0]", `audios[0] is a data URL whose data is not valid base64; got "dAtA:Audio/mpeg;base64,0"`},
		{"a data URL without a subtype", head + `"mode":"keyframe","first_frame":"data:image/;base64,aGk="}`,
			"first_frame", `first_frame must be a data URL of an image: data:TYPE;base64,… with TYPE one of image/png, image/jpeg, image/webp, image/gif; got "data:image/;base64,aGk="`},
		{"a reference image on the local disk", head + `"mode":"reference","images":["https://x/a.png","file:///etc/shadow"]}`,
			"images[1]", `images[1] must be an https:, http: or data: URL of an image; got "file:///etc/shadow"`},
		{"an SVG as a frame: not one of the image types", head + `"mode":"keyframe","first_frame":"data:image/svg+xml;base64,PHN2Zy8+"}`,
			"first_frame", `first_frame must be a data URL of an image: data:TYPE;base64,… with TYPE one of image/png, image/jpeg, image/webp, image/gif; got "data:image/svg+xml;base64,PHN2Zy8+"`},
		{"an image as a reference audio", head + `"mode":"reference","audios":["data:image/png;base64,iVBO"]}`,
			"audios[0]", `audios[0] must be a data URL of an audio: data:TYPE;base64,… with TYPE audio/…; got "data:image/png;base64,iVBO"`},
		{"mode text with a first frame", head + `"mode":"text","first_frame":"https://x/a.png"}`,
			"first_frame", "mode text makes a video from the prompt alone: drop first_frame, or use mode keyframe"},
		{"mode text with reference images", head + `"mode":"text","images":["https://x/a.png"]}`,
			"images", "mode text makes a video from the prompt alone: drop images, or use mode reference"},
		{"mode keyframe with reference audios", head + `"mode":"keyframe","last_frame":"https://x/a.png","audios":["https://x/a.mp3"]}`,
			"audios", "mode keyframe takes first_frame and last_frame, not audios: use mode reference for reference media"},
		{"mode reference with a last frame", head + `"mode":"reference","images":["https://x/a.png"],"last_frame":"https://x/b.png"}`,
			"last_frame", "mode reference takes images and audios, not last_frame: use mode keyframe for frames"},
		{"mode reference without references", head + `"mode":"reference"}`,
			"images", "mode reference needs images or audios (URLs of the reference media)"},
		{"an aspect ratio the model does not make", head + `"mode":"text","aspect_ratio":"21:9"}`,
			"aspect_ratio", `aspect_ratio "21:9" is not offered by this model: use one of 16:9, 9:16, 1:1`},
		{"a body that is not JSON", `{"model":`, "",
			"the request body must be a JSON object of the videos format: it is not valid JSON (unexpected end of JSON input at byte 9)"},
		{"a field of the wrong type", head + `"mode":"text","images":"https://x/a.png"}`, "",
			"the request body must be a JSON object of the videos format: images must be an array, not string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeCreate([]byte(c.body))
			e := checktest.Invalid(t, err, c.param)
			msg, _ := json.Marshal(c.message)
			param := `null`
			if c.param != "" {
				param = `"` + c.param + `"`
			}
			want := `{"error":{"message":` + string(msg) + `,"type":"invalid_request_error","param":` + param + `,"code":"invalid_request"}}`
			if got := string(chat.EncodeError(e)); got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestVideoAcceptsWebAndInlineMedia: https, http and base64 data URLs of the right media,
// in the mode that uses them, and each offered aspect ratio pass.
func TestVideoAcceptsWebAndInlineMedia(t *testing.T) {
	for _, body := range []string{
		`{"model":"v","prompt":"p","mode":"keyframe","first_frame":"https://cdn.example.com/a.png?sig=1","last_frame":"data:image/jpeg;base64,/9j/4AAQ"}`,
		`{"model":"v","prompt":"p","mode":"keyframe","first_frame":"HTTP://example.com/a.png"}`,
		`{"model":"v","prompt":"p","mode":"reference","images":["http://example.com/a.png"],"audios":["data:audio/mpeg;base64,SUQz"]}`,
		`{"model":"v","prompt":"p","mode":"reference","audios":["https://example.com/a.mp3"]}`,
		`{"model":"v","prompt":"p","mode":"text","aspect_ratio":"16:9"}`,
		`{"model":"v","prompt":"p","mode":"text","aspect_ratio":"9:16"}`,
		`{"model":"v","prompt":"p","mode":"text","aspect_ratio":"1:1","first_frame":""}`,
	} {
		if _, err := DecodeCreate([]byte(body)); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
	long := `{"model":"v","prompt":"p","mode":"keyframe","first_frame":"https://x/` + strings.Repeat("a", 2100) + `"}`
	if _, err := DecodeCreate([]byte(long)); err == nil {
		t.Error("a 2 KB web address passed")
	}
}

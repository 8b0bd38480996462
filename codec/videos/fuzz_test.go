package videos

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/check/checktest"
	"github.com/modelgate/modelgate/codec/ir"
)

// createParam matches the members a create error may name ("" = the body as a whole).
var createParam = regexp.MustCompile(`^(|model|prompt|mode|n|seconds|size|aspect_ratio|first_frame|last_frame|images|audios|(images|audios)\[\d+\])$`)

// FuzzDecodeCreate: any body is a 400 naming a member of the request, or a
// request within the model's limits (4-12 s, 720P, a listed aspect ratio, the inputs its mode
// takes, each a web or data URL) that the client's format writes back to the same request and
// whose upstream body states the same seconds and frame.
func FuzzDecodeCreate(f *testing.F) {
	f.Add(checktest.Recorded(f, "videos_create.request.json"))
	for _, s := range []string{
		`{"model":"v","prompt":"a cat","mode":"text","seconds":"12","size":"720p","aspect_ratio":"9:16"}`,
		`{"model":"v","prompt":"p","mode":"keyframe","first_frame":"https://x/a.png","last_frame":"data:image/png;base64,AA","seconds":4}`,
		`{"model":"v","prompt":"p","mode":"reference","images":["https://x/1.png"],"audios":["data:audio/mpeg;base64,AA"],"n":1}`,
		`{"model":"v","prompt":"p","mode":"reference","images":["file:///etc/passwd"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeCreate(body)
		if err != nil {
			var e *ir.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Message == "" || !createParam.MatchString(e.Param) {
				t.Fatalf("error %#v is not a 400 naming a member of the request", err)
			}
			return
		}
		checkCreate(t, r)
		again, err := json.Marshal(map[string]any{"model": r.Model, "prompt": r.Prompt, "mode": r.Mode, "seconds": strconv.Itoa(r.Seconds),
			"size": r.Size, "aspect_ratio": r.AspectRatio, "first_frame": r.FirstFrame, "last_frame": r.LastFrame, "images": r.Images, "audios": r.Audios})
		if err != nil {
			t.Fatal(err)
		}
		if r2, err := DecodeCreate(again); err != nil || !sameRequest(r2, r) {
			t.Fatalf("written back as %s it decodes to %+v, %v; want %+v", again, r2, err, r)
		}
		var up struct{ Seconds, Size, Mode string }
		if err := json.Unmarshal(UpstreamBody(r, "up"), &up); err != nil || up.Seconds != strconv.Itoa(r.Seconds) ||
			up.Size != Dimensions(r.AspectRatio) || up.Mode != r.Mode {
			t.Fatalf("upstream body %s: %v", UpstreamBody(r, "up"), err)
		}
	})
}

// checkCreate fails on a request outside the model's limits.
func checkCreate(t *testing.T, r *Request) {
	t.Helper()
	frames, refs := r.FirstFrame != "" || r.LastFrame != "", len(r.Images)+len(r.Audios) > 0
	switch {
	case r.Model == "" || strings.TrimSpace(r.Prompt) == "":
		t.Fatalf("accepted without model or prompt: %+v", r)
	case r.Seconds < MinSeconds || r.Seconds > MaxSeconds || r.Size != Size720P:
		t.Fatalf("accepted %d s at %s", r.Seconds, r.Size)
	case r.AspectRatio != "" && !slices.Contains(AspectRatios, r.AspectRatio):
		t.Fatalf("accepted aspect ratio %q", r.AspectRatio)
	case r.Mode == "text" && (frames || refs), r.Mode == "keyframe" && (!frames || refs), r.Mode == "reference" && (frames || !refs),
		!slices.Contains([]string{"text", "keyframe", "reference"}, r.Mode):
		t.Fatalf("mode %q with frames %v, references %v", r.Mode, frames, refs)
	case len(r.Images) > MaxImages || len(r.Audios) > MaxAudios:
		t.Fatalf("%d images, %d audios", len(r.Images), len(r.Audios))
	}
	for _, u := range append([]string{r.FirstFrame, r.LastFrame}, append(r.Images, r.Audios...)...) {
		lower := strings.ToLower(u)
		_, payload, _ := strings.Cut(u, ";base64,")
		_, err1 := base64.StdEncoding.DecodeString(payload)
		_, err2 := base64.RawStdEncoding.DecodeString(payload)
		switch {
		case u == "" || strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://"):
		case !strings.HasPrefix(lower, "data:"):
			t.Fatalf("accepted input %q", u)
		case err1 != nil && err2 != nil:
			t.Fatalf("accepted a data URL that is not base64: %q", u)
		}
	}
}

// sameRequest compares two requests, an empty list and none being the same.
func sameRequest(a, b *Request) bool {
	return a.Model == b.Model && a.Prompt == b.Prompt && a.Mode == b.Mode && a.Seconds == b.Seconds && a.Size == b.Size &&
		a.AspectRatio == b.AspectRatio && a.FirstFrame == b.FirstFrame && a.LastFrame == b.LastFrame &&
		slices.Equal(a.Images, b.Images) && slices.Equal(a.Audios, b.Audios)
}

// FuzzDecodeJob: any create or poll answer is an error or a job with an
// id, a progress of 0-100 and seconds of at least 0, which the API's video object writes back
// to the same job; an error object's message string is kept whatever its code is.
func FuzzDecodeJob(f *testing.F) {
	f.Add(checktest.Recorded(f, "videos_create.json"))
	for _, s := range []string{
		`{"id":"v1","status":"in_progress","progress":140.5,"seconds":8}`,
		`{"id":"v1","status":"failed","error":{"code":"timeout","message":"took too long"}}`,
		`{"id":"v1","status":"failed","error":"boom"}`,
		`{"id":"v1","status":"completed","seconds":" 8 ","error":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		j, err := DecodeJob(body)
		if err != nil {
			return
		}
		if j.ID == "" || j.Progress < 0 || j.Progress > 100 || j.Seconds < 0 {
			t.Fatalf("out of range: %+v", j)
		}
		var raw struct{ Error json.RawMessage }
		json.Unmarshal(body, &raw)
		if want, ok := errorMessage(raw.Error); ok && j.Error.Message != want {
			t.Fatalf("error %s read as %+v: message %q lost", raw.Error, j.Error, want)
		}
		again, _ := json.Marshal(map[string]any{"id": j.ID, "status": j.Status, "progress": j.Progress, "seconds": strconv.Itoa(j.Seconds),
			"error": map[string]string{"code": j.Error.Code, "message": j.Error.Message}})
		if j2, err := DecodeJob(again); err != nil || j2 != j {
			t.Fatalf("written back as %s it decodes to %+v, %v; want %+v", again, j2, err, j)
		}
	})
}

// errorMessage is the message a job's error states: the string itself, or an object's
// "message" string (when no other member spells message in another case).
func errorMessage(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return "", false
	}
	for name := range obj {
		if strings.EqualFold(name, "message") && name != "message" {
			return "", false
		}
	}
	return s, json.Unmarshal(obj["message"], &s) == nil
}

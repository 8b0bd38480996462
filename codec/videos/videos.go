// Package videos checks video generation requests (gateway-api.md, POST /videos) and builds
// the body of the asynchronous job API of chat-completions providers.
package videos

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
)

// Limits of the video models the spec describes.
const (
	MinSeconds     = 4
	MaxSeconds     = 12
	DefaultSeconds = 5
	Size720P       = "720P"
	MaxImages      = 5
	MaxAudios      = 3
)

// Request is a checked create request.
type Request struct {
	Model       string
	Prompt      string
	Mode        string // text | keyframe | reference
	Seconds     int
	Size        string // 720P
	AspectRatio string // e.g. 16:9; "" = the model's default
	FirstFrame  string
	LastFrame   string
	Images      []string
	Audios      []string
}

func bad(param, format string, args ...any) *ir.Error { return check.Bad(param, format, args...) }

// AspectRatios are the frames the 720P model makes (Dimensions); another ratio is refused
// rather than silently made as 16:9.
var AspectRatios = []string{"16:9", "9:16", "1:1"}

// DecodeCreate checks a create request; each violation is a 400 naming its field.
func DecodeCreate(body []byte) (*Request, error) {
	var in struct {
		Model       string          `json:"model"`
		Prompt      *string         `json:"prompt"`
		Mode        string          `json:"mode"`
		Seconds     json.RawMessage `json:"seconds"`
		Size        string          `json:"size"`
		AspectRatio string          `json:"aspect_ratio"`
		N           *int            `json:"n"`
		FirstFrame  string          `json:"first_frame"`
		LastFrame   string          `json:"last_frame"`
		Images      []string        `json:"images"`
		Audios      []string        `json:"audios"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, bad("", "the request body must be a JSON object of the videos format: %s", check.JSONProblem(err))
	}
	r := &Request{Model: in.Model, Mode: in.Mode, AspectRatio: in.AspectRatio, FirstFrame: in.FirstFrame,
		LastFrame: in.LastFrame, Images: in.Images, Audios: in.Audios, Seconds: DefaultSeconds, Size: Size720P}
	switch {
	case r.Model == "":
		return nil, bad("model", "model is required")
	case in.Prompt == nil || strings.TrimSpace(*in.Prompt) == "":
		return nil, bad("prompt", "prompt is required")
	case r.Mode == "":
		return nil, bad("mode", "mode is required: text, keyframe or reference")
	case r.Mode != "text" && r.Mode != "keyframe" && r.Mode != "reference":
		return nil, bad("mode", "mode %q must be text, keyframe or reference", r.Mode)
	case in.N != nil && *in.N != 1:
		return nil, bad("n", "n must be 1: one clip per request")
	}
	r.Prompt = *in.Prompt
	if len(in.Seconds) > 0 && string(in.Seconds) != "null" {
		s, err := seconds(in.Seconds)
		if err != nil {
			return nil, err
		}
		r.Seconds = s
	}
	if in.Size != "" {
		if !strings.EqualFold(in.Size, Size720P) {
			return nil, bad("size", "size %q is not offered: this model makes %s clips", in.Size, Size720P)
		}
	}
	if r.AspectRatio != "" && !slices.Contains(AspectRatios, r.AspectRatio) {
		return nil, bad("aspect_ratio", "aspect_ratio %q is not offered by this model: use one of %s", r.AspectRatio, strings.Join(AspectRatios, ", "))
	}
	if e := r.checkInputs(); e != nil {
		return nil, e
	}
	return r, nil
}

// checkInputs checks the frames and references against the mode: each is an image (or, for
// audios, a sound) the provider fetches, so only a web address or inline data; and a mode
// that does not use one refuses it rather than make a video that silently ignores it.
func (r *Request) checkInputs() *ir.Error {
	frames, refs := r.FirstFrame != "" || r.LastFrame != "", len(r.Images) > 0 || len(r.Audios) > 0
	switch {
	case r.Mode == "text" && frames:
		return bad(r.frame(), "mode text makes a video from the prompt alone: drop %s, or use mode keyframe", r.frame())
	case r.Mode == "text" && refs:
		return bad(r.reference(), "mode text makes a video from the prompt alone: drop %s, or use mode reference", r.reference())
	case r.Mode == "keyframe" && !frames:
		return bad("first_frame", "mode keyframe needs first_frame or last_frame (an image URL)")
	case r.Mode == "keyframe" && refs:
		return bad(r.reference(), "mode keyframe takes first_frame and last_frame, not %s: use mode reference for reference media", r.reference())
	case r.Mode == "reference" && frames:
		return bad(r.frame(), "mode reference takes images and audios, not %s: use mode keyframe for frames", r.frame())
	case r.Mode == "reference" && !refs:
		return bad("images", "mode reference needs images or audios (URLs of the reference media)")
	case len(r.Images) > MaxImages:
		return bad("images", "mode reference allows at most %d images, got %d", MaxImages, len(r.Images))
	case len(r.Audios) > MaxAudios:
		return bad("audios", "mode reference allows at most %d audios, got %d", MaxAudios, len(r.Audios))
	}
	for _, in := range []struct {
		param, url string
	}{{"first_frame", r.FirstFrame}, {"last_frame", r.LastFrame}} {
		if e := check.MediaURL(in.param, in.url, check.Image); in.url != "" && e != nil {
			return e
		}
	}
	for _, list := range []struct {
		name  string
		media check.Media
		urls  []string
	}{{"images", check.Image, r.Images}, {"audios", check.Audio, r.Audios}} {
		for i, u := range list.urls {
			if e := check.MediaURL(fmt.Sprintf("%s[%d]", list.name, i), u, list.media); e != nil {
				return e
			}
		}
	}
	return nil
}

// frame names the first frame member the request sets, reference the first reference one.
func (r *Request) frame() string {
	if r.FirstFrame != "" {
		return "first_frame"
	}
	return "last_frame"
}

func (r *Request) reference() string {
	if len(r.Images) > 0 {
		return "images"
	}
	return "audios"
}

func seconds(raw json.RawMessage) (int, error) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var n int
		if json.Unmarshal(raw, &n) != nil {
			return 0, bad("seconds", "seconds must be a string such as \"5\"")
		}
		s = strconv.Itoa(n)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < MinSeconds || n > MaxSeconds {
		return 0, bad("seconds", "seconds %q must be \"%d\" to \"%d\"", s, MinSeconds, MaxSeconds)
	}
	return n, nil
}

// Dimensions is the 720P frame for the aspect ratio (the providers' videos API takes WxH).
func Dimensions(aspect string) string {
	switch aspect {
	case "9:16":
		return "720x1280"
	case "1:1":
		return "720x720"
	}
	return "1280x720"
}

// UpstreamBody is the create body for a chat-format route's videos API. Mode, frames and
// references travel as extra fields the provider's API takes for its own models.
func UpstreamBody(r *Request, upstreamModel string) []byte {
	out := map[string]any{"model": upstreamModel, "prompt": r.Prompt, "seconds": strconv.Itoa(r.Seconds), "size": Dimensions(r.AspectRatio), "mode": r.Mode}
	if r.AspectRatio != "" {
		out["aspect_ratio"] = r.AspectRatio
	}
	if r.FirstFrame != "" {
		out["first_frame"] = r.FirstFrame
	}
	if r.LastFrame != "" {
		out["last_frame"] = r.LastFrame
	}
	if len(r.Images) > 0 {
		out["images"] = r.Images
	}
	if len(r.Audios) > 0 {
		out["audios"] = r.Audios
	}
	b, _ := json.Marshal(out)
	return b
}

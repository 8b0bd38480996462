// Package videos checks video generation requests (gateway-api.md, POST /videos) and builds
// the body of the asynchronous job API of chat-completions providers.
package videos

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

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

func bad(param, format string, args ...any) *ir.Error {
	return &ir.Error{Status: 400, Kind: ir.ErrInvalidRequest, Code: "invalid_request", Param: param, Message: fmt.Sprintf(format, args...)}
}

var ratioPattern = regexp.MustCompile(`^[1-9][0-9]{0,2}:[1-9][0-9]{0,2}$`)

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
		return nil, bad("", "the request body must be a JSON object of the videos format: %v", err)
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
	if r.AspectRatio != "" && !ratioPattern.MatchString(r.AspectRatio) {
		return nil, bad("aspect_ratio", "aspect_ratio %q must look like 16:9, 9:16 or 1:1", r.AspectRatio)
	}
	switch r.Mode {
	case "keyframe":
		if r.FirstFrame == "" && r.LastFrame == "" {
			return nil, bad("first_frame", "mode keyframe needs first_frame or last_frame (an image URL)")
		}
	case "reference":
		if len(r.Images) > MaxImages {
			return nil, bad("images", "mode reference allows at most %d images, got %d", MaxImages, len(r.Images))
		}
		if len(r.Audios) > MaxAudios {
			return nil, bad("audios", "mode reference allows at most %d audios, got %d", MaxAudios, len(r.Audios))
		}
	}
	return r, nil
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

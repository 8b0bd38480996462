package videos

import (
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

func TestDecodeCreate(t *testing.T) {
	cases := []struct {
		name, body, param string // param "" = valid
		seconds           int
	}{
		{"minimal", `{"model":"v","prompt":"a cat","mode":"text"}`, "", 5},
		{"seconds string", `{"model":"v","prompt":"p","mode":"text","seconds":"12"}`, "", 12},
		{"seconds number", `{"model":"v","prompt":"p","mode":"text","seconds":4}`, "", 4},
		{"size 720P any case", `{"model":"v","prompt":"p","mode":"text","size":"720p"}`, "", 5},
		{"keyframe with last frame", `{"model":"v","prompt":"p","mode":"keyframe","last_frame":"https://x/a.png"}`, "", 5},
		{"reference at the limits", `{"model":"v","prompt":"p","mode":"reference","images":["https://x/1.png","https://x/2.png","https://x/3.png","https://x/4.png","https://x/5.png"],"audios":["https://x/a.mp3","https://x/b.mp3","https://x/c.mp3"]}`, "", 5},
		{"no model", `{"prompt":"p","mode":"text"}`, "model", 0},
		{"no prompt", `{"model":"v","mode":"text"}`, "prompt", 0},
		{"blank prompt", `{"model":"v","prompt":" ","mode":"text"}`, "prompt", 0},
		{"no mode", `{"model":"v","prompt":"p"}`, "mode", 0},
		{"bad mode", `{"model":"v","prompt":"p","mode":"remix"}`, "mode", 0},
		{"seconds 3", `{"model":"v","prompt":"p","mode":"text","seconds":"3"}`, "seconds", 0},
		{"seconds 13", `{"model":"v","prompt":"p","mode":"text","seconds":"13"}`, "seconds", 0},
		{"seconds word", `{"model":"v","prompt":"p","mode":"text","seconds":"five"}`, "seconds", 0},
		{"size 1080P", `{"model":"v","prompt":"p","mode":"text","size":"1080P"}`, "size", 0},
		{"n 2", `{"model":"v","prompt":"p","mode":"text","n":2}`, "n", 0},
		{"keyframe without frames", `{"model":"v","prompt":"p","mode":"keyframe"}`, "first_frame", 0},
		{"six images", `{"model":"v","prompt":"p","mode":"reference","images":["https://x/1.png","https://x/2.png","https://x/3.png","https://x/4.png","https://x/5.png","https://x/6.png"]}`, "images", 0},
		{"four audios", `{"model":"v","prompt":"p","mode":"reference","audios":["https://x/1.mp3","https://x/2.mp3","https://x/3.mp3","https://x/4.mp3"]}`, "audios", 0},
		{"bad ratio", `{"model":"v","prompt":"p","mode":"text","aspect_ratio":"wide"}`, "aspect_ratio", 0},
	}
	for _, c := range cases {
		r, err := DecodeCreate([]byte(c.body))
		if c.param == "" {
			if err != nil || r.Seconds != c.seconds {
				t.Errorf("%s: %v %+v", c.name, err, r)
			}
			continue
		}
		e, ok := err.(*ir.Error)
		if !ok || e.Param != c.param {
			t.Errorf("%s: err %v, want param %q", c.name, err, c.param)
		}
	}
}

func TestUpstreamBody(t *testing.T) {
	r, _ := DecodeCreate([]byte(`{"model":"v","prompt":"p","mode":"keyframe","first_frame":"https://x/u.png","aspect_ratio":"9:16","seconds":"6"}`))
	got := string(UpstreamBody(r, "up-v"))
	want := `{"aspect_ratio":"9:16","first_frame":"https://x/u.png","mode":"keyframe","model":"up-v","prompt":"p","seconds":"6","size":"720x1280"}`
	if got != want {
		t.Fatalf("%s", got)
	}
}

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
		{"reference at the limits", `{"model":"v","prompt":"p","mode":"reference","images":["1","2","3","4","5"],"audios":["a","b","c"]}`, "", 5},
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
		{"six images", `{"model":"v","prompt":"p","mode":"reference","images":["1","2","3","4","5","6"]}`, "images", 0},
		{"four audios", `{"model":"v","prompt":"p","mode":"reference","audios":["1","2","3","4"]}`, "audios", 0},
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
	r, _ := DecodeCreate([]byte(`{"model":"v","prompt":"p","mode":"keyframe","first_frame":"u","aspect_ratio":"9:16","seconds":"6"}`))
	got := string(UpstreamBody(r, "up-v"))
	want := `{"aspect_ratio":"9:16","first_frame":"u","mode":"keyframe","model":"up-v","prompt":"p","seconds":"6","size":"720x1280"}`
	if got != want {
		t.Fatalf("%s", got)
	}
}

package images

import (
	"encoding/json"
	"testing"

	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/check/checktest"
)

// TestForChecksWhatTheModelMakes: size, quality and style against the model's options, each
// refusal a 400 in the chat envelope naming the member and what the model takes; what passes
// is the size, quality and style the chat route is asked for.
func TestForChecksWhatTheModelMakes(t *testing.T) {
	listed := Options{Sizes: []string{"1024x1024", "1536x1024"}, Qualities: []string{"low", "high"}, Styles: []string{"vivid", "natural"}}
	cases := []struct {
		name    string
		opts    Options
		members string
		param   string // "" = made
		message string // the refusal, or the chat route's body when made
	}{
		{"100000x100000 without sizes", Options{}, `"size":"100000x100000"`, "size", `size "100000x100000" is too large: each side is at most 4096`},
		{"a side past the bound", Options{}, `"size":"4097x10"`, "size", `size "4097x10" is too large: each side is at most 4096`},
		{"a size not listed", listed, `"size":"1000x1000"`, "size", `size "1000x1000" is not offered by this model: use one of 1024x1024, 1536x1024, or auto`},
		{"100000x100000 with sizes", listed, `"size":"100000x100000"`, "size", `size "100000x100000" is not offered by this model: use one of 1024x1024, 1536x1024, or auto`},
		{"a quality not listed", listed, `"quality":"ultra"`, "quality", `quality "ultra" is not offered by this model: use one of low, high`},
		{"a quality of a model without qualities", Options{}, `"quality":"hd"`, "quality", `quality "hd" is not offered: this model takes no quality setting; leave quality out`},
		{"a style not listed", listed, `"style":"baroque"`, "style", `style "baroque" is not offered by this model: use one of vivid, natural`},
		{"a style of a model without styles", Options{}, `"style":"vivid"`, "style", `style "vivid" is not offered: this model takes no style setting; leave style out`},
		{"a listed size, quality and style", listed, `"size":"1536X1024","quality":"high","style":"natural"`, "",
			`{"model":"up","n":1,"prompt":"p","quality":"high","response_format":"b64_json","size":"1536x1024","style":"natural"}`},
		{"auto: the first listed size", listed, `"size":"auto","quality":"auto"`, "",
			`{"model":"up","n":1,"prompt":"p","response_format":"b64_json","size":"1024x1024"}`},
		{"auto quality of a model without qualities", Options{}, `"quality":"auto","size":"1920x1080"`, "",
			`{"model":"up","n":1,"prompt":"p","response_format":"b64_json","size":"2752x1536"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := DecodeRequest([]byte(`{"model":"m","prompt":"p",` + c.members + `}`))
			if err != nil {
				t.Fatal(err)
			}
			e := r.For(c.opts)
			if c.param == "" {
				if e != nil {
					t.Fatalf("refused: %v", e)
				}
				if got := string(ChatBody(r, "up")); got != c.message {
					t.Errorf("chat route body\n got %s\nwant %s", got, c.message)
				}
				return
			}
			checktest.Invalid(t, e, c.param)
			msg, _ := json.Marshal(c.message)
			want := `{"error":{"message":` + string(msg) + `,"type":"invalid_request_error","param":"` + c.param + `","code":"invalid_request"}}`
			if got := string(chat.EncodeError(e)); got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestOptionsCheck: what the catalog refuses in an image model's options.
func TestOptionsCheck(t *testing.T) {
	cases := []struct {
		opts Options
		want string
	}{
		{Options{Sizes: []string{"1024x1024"}, Qualities: []string{"low", "high"}, Styles: []string{"vivid"}}, ""},
		{Options{}, ""},
		{Options{Sizes: []string{"big"}}, `sizes: "big" must be WIDTHxHEIGHT, for example 1024x1024`},
		{Options{Sizes: []string{"0x10"}}, `sizes: "0x10" must be WIDTHxHEIGHT, for example 1024x1024`},
		{Options{Sizes: []string{"1024x1024", "1024x1024"}}, `sizes: "1024x1024" is listed twice`},
		{Options{Qualities: []string{"high", ""}}, "qualities: an empty value"},
		{Options{Styles: []string{"vivid", "vivid"}}, `styles: "vivid" is listed twice`},
	}
	for _, c := range cases {
		list, problem := c.opts.Check()
		if got := list + ": " + problem; list == "" && c.want != "" || list != "" && got != c.want {
			t.Errorf("%+v: %q, want %q", c.opts, got, c.want)
		}
	}
}

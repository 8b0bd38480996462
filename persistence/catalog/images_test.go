package catalog

import (
	"reflect"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/images"
)

// An image model's sizes, qualities and styles: read as written (none: the gateway's
// defaults), kept through a write-back, refused on another kind of model or when malformed,
// each error naming the file, the model and the field.
func TestImageModelOptions(t *testing.T) {
	route := "routes: [{id: r, format: chat, base_url: 'http://x'}]"
	model := func(kind, fields string) string {
		return "models:\n  - {id: m, kind: " + kind + ", " + fields + route + "}\n"
	}
	cases := []struct {
		name, yaml string
		want       images.Options
		err        string
	}{
		{name: "none: the defaults", yaml: model("image", ""), want: images.Options{}},
		{name: "all three", yaml: model("image", "sizes: [1024x1024, 1536x1024], qualities: [low, high], styles: [vivid, natural], "),
			want: images.Options{Sizes: []string{"1024x1024", "1536x1024"}, Qualities: []string{"low", "high"}, Styles: []string{"vivid", "natural"}}},
		{name: "sizes on a chat model", yaml: model("chat", "sizes: [1024x1024], "), err: "f.yaml: model m: sizes: only image models list sizes (this one is chat)"},
		{name: "qualities on a video model", yaml: model("video", "qualities: [hd], "), err: "f.yaml: model m: qualities: only image models list qualities (this one is video)"},
		{name: "styles on an embedding model", yaml: model("embedding", "styles: [vivid], "), err: "f.yaml: model m: styles: only image models list styles (this one is embedding)"},
		{name: "a size that is no size", yaml: model("image", "sizes: [large], "), err: `f.yaml: model m: sizes: "large" must be WIDTHxHEIGHT, for example 1024x1024`},
		{name: "auto as a size", yaml: model("image", "sizes: [auto], "), err: `f.yaml: model m: sizes: "auto" must be WIDTHxHEIGHT, for example 1024x1024`},
		{name: "a size twice", yaml: model("image", "sizes: [1024x1024, 1024x1024], "), err: `f.yaml: model m: sizes: "1024x1024" is listed twice`},
		{name: "an empty quality", yaml: model("image", "qualities: [high, ''], "), err: "f.yaml: model m: qualities: an empty value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := parseCase(t, c.yaml, c.err)
			if cat == nil {
				return
			}
			m, _ := cat.Lookup("m")
			if !reflect.DeepEqual(m.Images, c.want) {
				t.Fatalf("images %+v, want %+v", m.Images, c.want)
			}
			m2, _ := reload(t, cat).Lookup("m")
			if !reflect.DeepEqual(m2.Images, c.want) {
				t.Fatalf("written back: images %+v, want %+v", m2.Images, c.want)
			}
		})
	}
}

// parseCase parses a test's catalog as f.yaml: nil when it is refused with an error holding
// wantErr, as it must be when wantErr is set; the test stops on any other outcome.
func parseCase(t *testing.T, yaml, wantErr string) *Catalog {
	t.Helper()
	cat, err := Parse("f.yaml", []byte(yaml))
	switch {
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Fatalf("error = %v\nwant it to contain %q", err, wantErr)
	case wantErr != "":
		return nil
	case err != nil:
		t.Fatal(err)
	}
	return cat
}

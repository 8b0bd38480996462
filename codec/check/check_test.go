package check

import (
	"encoding/json"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

func TestRangeNamesTheFieldAndWhatItAllows(t *testing.T) {
	temperature := Range{Param: "temperature", Min: 0, Max: 2}
	maxTokens := Range{Param: "max_output_tokens", Min: 16, Max: Unbounded, Integer: true}
	cases := []struct {
		r    Range
		raw  string
		want string // "" = passes
	}{
		{temperature, ``, ""},
		{temperature, `null`, ""},
		{temperature, `0`, ""},
		{temperature, `2`, ""},
		{temperature, `1.5e0`, ""},
		{temperature, `2.0001`, "temperature must be a number from 0 to 2; got 2.0001"},
		{temperature, `-0.1`, "temperature must be a number from 0 to 2; got -0.1"},
		{temperature, `"1"`, `temperature must be a number from 0 to 2; got "1"`},
		{temperature, `true`, "temperature must be a number from 0 to 2; got true"},
		{temperature, `1e400`, "temperature must be a number from 0 to 2; got 1e400"},
		{maxTokens, `16`, ""},
		{maxTokens, `15`, "max_output_tokens must be an integer of at least 16; got 15"},
		{maxTokens, `16.0`, "max_output_tokens must be an integer of at least 16; got 16.0"},
		{maxTokens, `9223372036854775807`, ""},
		{maxTokens, `99999999999999999999`, "max_output_tokens must be an integer of at least 16, at most 9223372036854775807; got 99999999999999999999"},
		{maxTokens, `[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]`, "max_output_tokens must be an integer of at least 16; got [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,…"},
		{Range{Param: "x", Min: -2, Max: 2}, `-2`, ""},
		{Range{Param: "x", Min: -Unbounded, Max: 5}, `9`, "x must be a number of at most 5; got 9"},
	}
	for _, c := range cases {
		e := c.r.Check([]byte(c.raw))
		switch {
		case c.want == "" && e != nil:
			t.Errorf("%s %s: %v", c.r.Param, c.raw, e)
		case c.want != "" && (e == nil || e.Message != c.want || e.Param != c.r.Param || e.Status != 400):
			t.Errorf("%s %s: got %+v, want %q", c.r.Param, c.raw, e, c.want)
		}
	}
}

func TestToolsNamesAreValidUniqueAndChosenFromTheOffer(t *testing.T) {
	tools := NewTools(GeminiNames)
	steps := []struct {
		err  func() error
		want string
	}{
		{func() error { return errOf(tools.Add("a[0]", "ns.tool:v1")) }, ""},
		{func() error { return errOf(tools.Add("a[1]", "bad name")) }, `a[1] "bad name" must be 1 to 128 characters of a-z, A-Z, 0-9, '_' and '-' (and '.', ':')`},
		{func() error { return errOf(tools.Add("a[2]", "")) }, `a[2] "" must be 1 to 128 characters of a-z, A-Z, 0-9, '_' and '-' (and '.', ':')`},
		{func() error { return errOf(tools.AddAny("a[3]", "web_search")) }, ""},
		{func() error { return errOf(tools.Add("a[4]", "web_search")) }, `a[4] "web_search" is already the name of a[3]: tool names must be unique`},
		{func() error { return errOf(tools.Chosen("choice", "web_search")) }, ""},
		{func() error { return errOf(tools.Chosen("choice", "nope")) }, `choice names the tool "nope", which is not one of the tools offered (ns.tool:v1, web_search)`},
		{func() error { return errOf(NewTools(OpenAINames).Chosen("choice", "x")) }, `choice names the tool "x", but the request offers no tools`},
	}
	for i, s := range steps {
		err := s.err()
		if got := msg(err); got != s.want {
			t.Errorf("step %d: %q, want %q", i, got, s.want)
		}
	}
}

func TestJSONProblemHasNoGoWords(t *testing.T) {
	var v struct {
		N int `json:"n"`
	}
	cases := map[string]string{
		`{"n":"x"}`: `n must be an integer, not string`,
		`{"n":`:     `it is not valid JSON (unexpected end of JSON input at byte 5)`,
		`{"n" 1}`:   `it is not valid JSON (invalid character '1' after object key at byte 6)`,
		`[1]`:       `got array`,
	}
	for body, want := range cases {
		if got := JSONProblem(json.Unmarshal([]byte(body), &v)); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}

func TestOneOf(t *testing.T) {
	if e := OneOf("mode", "text", "text", "keyframe"); e != nil {
		t.Fatal(e)
	}
	if e := OneOf("mode", "x", "text", "keyframe"); e == nil || e.Message != `mode must be one of text, keyframe; got "x"` {
		t.Fatalf("%+v", e)
	}
}

func errOf(e *ir.Error) error {
	if e == nil {
		return nil
	}
	return e
}

func msg(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

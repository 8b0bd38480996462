package jsonpatch

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/modelgate/modelgate/codec/jsonscan"
)

func TestApplyKeepsEveryOtherByte(t *testing.T) {
	model := Set("model", []byte(`"up-1"`))
	cases := []struct {
		name, in string
		ops      []Op
		want     string
	}{
		{"replaced in place, order kept", `{"z":1,"model":"pub","a":[1, 2]}`, []Op{model}, `{"z":1,"model":"up-1","a":[1, 2]}`},
		{"any value replaced", `{"model":{"x":[1,{"y":null}]},"b":2}`, []Op{model}, `{"model":"up-1","b":2}`},
		{"absent: added at the end", `{"b":2,"a":1}`, []Op{model}, `{"b":2,"a":1,"model":"up-1"}`},
		{"absent from an empty object", `{}`, []Op{model}, `{"model":"up-1"}`},
		{"absent from an empty object with spaces", " { \n } ", []Op{model}, ` {"model":"up-1" 
 } `},
		{"whitespace kept", "{ \"b\" : 2 ,\n \"model\" :\t\"pub\" \n}", []Op{model}, "{ \"b\" : 2 ,\n \"model\" :\t\"up-1\" \n}"},
		{"added before closing whitespace", "{\"b\": 2\n}", []Op{model}, "{\"b\": 2,\"model\":\"up-1\"\n}"},
		{"escaped key is the same key", `{"mod\u0065l":"pub","b":1}`, []Op{model}, `{"mod\u0065l":"up-1","b":1}`},
		{"case differs: another key", `{"Model":"pub"}`, []Op{model}, `{"Model":"pub","model":"up-1"}`},
		{"duplicates: written once, where the name first stood", `{"model":"a","b":1,"model":"c","d":2}`, []Op{model}, `{"model":"up-1","b":1,"d":2}`},
		{"duplicates: the first removed, then the rest", `{"model":"a","model":"c","d":2}`, []Op{Remove("model")}, `{"d":2}`},
		{"duplicates already equal", `{"model":"up-1","model":"up-1"}`, []Op{model}, `{"model":"up-1"}`},
		{"removed: first", `{"t":1, "b":2}`, []Op{Remove("t")}, `{ "b":2}`},
		{"removed: middle", `{"a":1, "t":{}, "b":2}`, []Op{Remove("t")}, `{"a":1, "b":2}`},
		{"removed: last", `{"a":1 , "t":true }`, []Op{Remove("t")}, `{"a":1 }`},
		{"removed: the only one", `{ "t":1 }`, []Op{Remove("t")}, `{ }`},
		{"removed: every duplicate", `{"t":1,"a":2,"t":3}`, []Op{Remove("t")}, `{"a":2}`},
		{"removed: absent", `{"a":1}`, []Op{Remove("t")}, `{"a":1}`},
		{"removed first, set later", `{"t":1,"a":2}`, []Op{Remove("t"), Set("m", []byte("3"))}, `{"a":2,"m":3}`},
		{"the last op for a key counts", `{"t":1}`, []Op{Remove("t"), Set("t", []byte("2"))}, `{"t":2}`},
		{"set then removed", `{"a":1}`, []Op{Set("t", []byte("2")), Remove("t")}, `{"a":1}`},
		{"several ops", `{"max_tokens":10,"model":"pub","thinking":{"type":"enabled"},"x":"<&>"}`,
			[]Op{model, Remove("thinking"), Set("max_tokens", []byte("5")), Set("output_config", []byte(`{"effort":"high"}`))},
			`{"max_tokens":5,"model":"up-1","x":"<&>","output_config":{"effort":"high"}}`},
		{"key that needs escapes", `{}`, []Op{Set("a\"<b", []byte("1"))}, `{"a\"<b":1}`},
		{"unchanged: the text itself", `{"model":"up-1"}`, []Op{model}, `{"model":"up-1"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Apply([]byte(c.in), c.ops...)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			checkSemantics(t, []byte(c.in), c.ops, got)
		})
	}
}

func TestApplyRefusesWhatDecodersRefuse(t *testing.T) {
	for _, in := range []string{``, `[]`, `"model"`, `{"model":}`, `{"a":1,}`, `{"a":1} x`, `{"a":"\x"}`, `{"a":01}`, `{a:1}`, `{"a":1`, `null`} {
		_, err := Apply([]byte(in), Set("model", []byte(`"x"`)))
		if !errors.Is(err, jsonscan.ErrSyntax) {
			t.Errorf("%q: err %v, want ErrSyntax", in, err)
		}
	}
}

func TestValueIsTheLastOccurrence(t *testing.T) {
	o, err := Scan([]byte(`{"a":1,"mod\u0065l":"x","model" : "y"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(o.Value("model")); got != `"y"` {
		t.Errorf("model %s", got)
	}
	if got := o.Value("b"); got != nil {
		t.Errorf("b %s", got)
	}
}

// checkSemantics: the patched text decodes as the text decoded, the ops made on the map.
func checkSemantics(t testing.TB, in []byte, ops []Op, got []byte) {
	t.Helper()
	var want, have map[string]any
	if err := json.Unmarshal(in, &want); err != nil {
		t.Fatalf("the input does not decode: %v", err)
	}
	for _, op := range ops {
		if op.Value == nil {
			delete(want, op.Key)
			continue
		}
		var v any
		if err := json.Unmarshal(op.Value, &v); err != nil {
			t.Fatalf("op value %q: %v", op.Value, err)
		}
		want[op.Key] = v
	}
	if err := json.Unmarshal(got, &have); err != nil {
		t.Fatalf("the output does not decode: %v\n%s", err, got)
	}
	if !reflect.DeepEqual(want, have) {
		t.Errorf("decoded\n%v\nwant\n%v\n(output %s)", have, want, got)
	}
}

// FuzzApply: for any text, the patcher fails exactly when encoding/json refuses the text as an
// object, and otherwise its output decodes as decode -> set -> encode would.
func FuzzApply(f *testing.F) {
	for _, s := range []string{`{"model":"a","b":[1,2]}`, `{"mod\u0065l":1,"model":2}`, `{}`, ` { "x" : {"model":1} } `,
		`{"thinking":{"type":"enabled"},"max_tokens":1}`, `[1]`, `{"a":"\ud800"}`, "{\"\xff\":1}"} {
		f.Add([]byte(s), "model", []byte(`"up"`), "thinking", false)
	}
	f.Fuzz(func(t *testing.T, in []byte, key string, value []byte, other string, remove bool) {
		if !utf8.ValidString(key) || !utf8.ValidString(other) {
			t.Skip("the gateway's keys are its own constants, valid UTF-8")
		}
		if !json.Valid(value) {
			value = []byte(`"up"`)
		}
		second := Set(other, []byte(`{"effort":"high"}`))
		if remove {
			second = Remove(other)
		}
		ops := []Op{Set(key, value), second}
		got, err := Apply(in, ops...)
		var m map[string]any
		decodeErr := json.Unmarshal(in, &m)
		if decodeErr != nil || m == nil {
			if err == nil {
				t.Fatalf("accepted what encoding/json refuses as an object (%v): %q", decodeErr, in)
			}
			return
		}
		if err != nil {
			t.Fatalf("refused an object encoding/json accepts: %q: %v", in, err)
		}
		checkSemantics(t, in, ops, got)
	})
}

func TestAnswerReplacesTheModelAndReadsTheUsage(t *testing.T) {
	cases := []struct{ name, in, out, usage string }{
		{"both", `{"model" : "up","x":[1],"usage":{"n":1}}`, `{"model" : "pub","x":[1],"usage":{"n":1}}`, `{"n":1}`},
		{"no model: never added", `{"x":1,"usage":null}`, `{"x":1,"usage":null}`, `null`},
		{"escaped, duplicated", `{"mod\u0065l":"a","model":"b"}`, `{"mod\u0065l":"pub"}`, ``},
		{"not an object", `{"model":"up"`, `{"model":"up"`, ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, usage := Answer([]byte(c.in), "model", []byte(`"pub"`), "usage")
			if string(out) != c.out || string(usage) != c.usage {
				t.Errorf("got %s, usage %s\nwant %s, usage %s", out, usage, c.out, c.usage)
			}
		})
	}
}

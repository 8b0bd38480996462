package jsonscan

import (
	"bytes"
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

func TestMembers(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string // key=value, raw
		ok   bool
	}{
		{"compact", `{"a":1,"b":"x"}`, []string{`a=1`, `b="x"`}, true},
		{"pretty", "{\n  \"model\" : \"gpt-4o\",\r\n\t\"n\": [1, {\"x\": null}]\n}\n", []string{`model="gpt-4o"`, `n=[1, {"x": null}]`}, true},
		{"empty", ` { } `, nil, true},
		{"escaped key stays raw", `{"mod\u0065l":true}`, []string{`mod\u0065l=true`}, true},
		{"quote and brace in string", `{"t":"a\"}{,b","u":false}`, []string{`t="a\"}{,b"`, `u=false`}, true},
		{"numbers", `{"a":-0.5e+10,"b":0,"c":12.25E-3}`, []string{`a=-0.5e+10`, `b=0`, `c=12.25E-3`}, true},
		{"cut object", `{"a":1,"b":{"c":`, []string{`a=1`}, false},
		{"cut string", `{"a":"ab`, nil, false},
		{"trailing comma", `{"a":1,}`, []string{`a=1`}, false},
		{"trailing data", `{"a":1} x`, []string{`a=1`}, false},
		{"leading zero", `{"a":01}`, []string{`a=0`}, false},
		{"bad escape", `{"a":"\x"}`, nil, false},
		{"raw control char", "{\"a\":\"\t\"}", nil, false},
		{"array is not an object", `[1]`, nil, false},
		{"bare word", `{"a":nul}`, nil, false},
		{"missing colon", `{"a" 1}`, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			err := Members([]byte(c.in), func(k []byte, v Span) bool {
				got = append(got, string(k)+"="+c.in[v.Start:v.End])
				return true
			})
			if (err == nil) != c.ok || strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("got %q, %v; want %q, ok %v", got, err, c.want, c.ok)
			}
			if c.ok != (json.Valid([]byte(c.in)) && strings.HasPrefix(strings.TrimSpace(c.in), "{")) {
				t.Fatalf("the case disagrees with encoding/json")
			}
		})
	}
}

func TestMembersStopsEarly(t *testing.T) {
	n := 0
	err := Members([]byte(`{"model":"m","rest":garbage`), func(k []byte, v Span) bool {
		n++
		return false
	})
	if err != nil || n != 1 {
		t.Fatalf("n %d err %v", n, err)
	}
}

func TestElements(t *testing.T) {
	in := `[ {"index":1}, "s" ,[],null ]`
	var got []string
	if err := Elements([]byte(in), func(v Span) bool { got = append(got, in[v.Start:v.End]); return true }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != `{"index":1}|"s"|[]|null` {
		t.Fatalf("got %q", got)
	}
	if err := Elements([]byte(`[1,`), func(Span) bool { return true }); err == nil {
		t.Fatal("a cut array is not an error")
	}
}

func TestMemberLastWins(t *testing.T) {
	in := []byte(`{"model":"a","x":{"model":"inner"},"model":"b"}`)
	sp, ok := Member(in, "model")
	if !ok || string(in[sp.Start:sp.End]) != `"b"` {
		t.Fatalf("%v %q", ok, in[sp.Start:sp.End])
	}
	if _, ok := Member(in, "absent"); ok {
		t.Fatal("found an absent member")
	}
}

func TestReplace(t *testing.T) {
	top := [][]string{{"model"}}
	nested := [][]string{{"model"}, {"message", "model"}}
	cases := []struct {
		name  string
		in    string
		paths [][]string
		want  string
	}{
		{"compact", `{"id":"x","model":"gpt-4o-2024-08-06","n":1}`, top, `{"id":"x","model":"mine","n":1}`},
		{"pretty, spacing kept", "{\n  \"model\" :  \"gpt-4o\" ,\n  \"n\": 1\n}", top, "{\n  \"model\" :  \"mine\" ,\n  \"n\": 1\n}"},
		{"every duplicate", `{"model":"a","model":"b"}`, top, `{"model":"mine","model":"mine"}`},
		{"nested only where the path says", `{"type":"message_start","message":{"id":"m","model":"claude-x"},"delta":{"model":"keep"}}`, nested, `{"type":"message_start","message":{"id":"m","model":"mine"},"delta":{"model":"keep"}}`},
		{"a model inside content is text", `{"text":"\"model\":\"gpt-4o\"","model":"gpt-4o"}`, top, `{"text":"\"model\":\"gpt-4o\"","model":"mine"}`},
		{"escaped key", `{"mod\u0065l":"x"}`, top, `{"mod\u0065l":"mine"}`},
		{"non-string value", `{"model":null}`, top, `{"model":"mine"}`},
		{"path through a non-object", `{"message":"model"}`, nested, `{"message":"model"}`},
		{"nothing to change", `{"model":"mine"}`, top, `{"model":"mine"}`},
		{"no model", `{"choices":[]}`, top, `{"choices":[]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Replace([]byte(c.in), []byte(`"mine"`), c.paths...)
			if err != nil || string(got) != c.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, c.want)
			}
		})
	}
	in := []byte(`{"model":"a"`)
	if got, err := Replace(in, []byte(`"mine"`), top...); err == nil || !bytes.Equal(got, in) {
		t.Fatalf("a cut object: %s, %v", got, err)
	}
	same := []byte(`{"model":"mine"}`)
	if got, _ := Replace(same, []byte(`"mine"`), top...); &got[0] != &same[0] {
		t.Fatal("an unchanged text was copied")
	}
}

func TestApply(t *testing.T) {
	in := []byte(`{"index":1,"x":[{"index":3}]}`)
	got := Apply(in, []Edit{{Span{9, 10}, []byte("0")}, {Span{25, 26}, []byte("12")}})
	if string(got) != `{"index":0,"x":[{"index":12}]}` {
		t.Fatalf("%s", got)
	}
}

func TestDepthLimitMatchesEncodingJSON(t *testing.T) {
	for _, depth := range []int{maxDepth, maxDepth + 1} {
		in := []byte(`{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`)
		if got, want := Members(in, func([]byte, Span) bool { return true }) == nil, json.Valid(in); got != want {
			t.Errorf("depth %d: scanner ok %v, encoding/json %v", depth, got, want)
		}
	}
}

// Whatever the text: the scanner accepts exactly what encoding/json accepts, finds the members
// encoding/json finds (by resolved name, the last duplicate winning) with the same raw values,
// and a Replace keeps the text valid and changes only the members it names.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_A","function":{"name":"f","arguments":""}}]},"finish_reason":null}],"usage":null}`,
		"{\n  \"model\" : \"gpt-4o-2024-08-06\",\n  \"usage\": {\"total_tokens\": 135}\n}",
		`{"type":"message_start","message":{"model":"claude","content":[]}}`,
		`{"mod\u0065l":1,"model":2,"\ud83d\ude00":"\u00e9"}`,
		`{"a":-0.0e-0,"b":[true,false,null,{}],"c":"\\\/\b\f\n\r\t"}`,
		`{"a":1,}`, `{"a":01}`, `{"a":"x`, `[1,2]`, `"s"`, `{}`, ``, "{\"a\":\"\x01\"}", "{\"\xff\":1}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		ours := map[string]json.RawMessage{}
		err := Members(text, func(k []byte, v Span) bool {
			ours[Key(k)] = json.RawMessage(text[v.Start:v.End])
			return true
		})
		trimmed := bytes.TrimLeft(text, " \t\r\n")
		want := json.Valid(text) && len(trimmed) > 0 && trimmed[0] == '{'
		if (err == nil) != want {
			t.Fatalf("scanner error %v, encoding/json valid object %v", err, want)
		}
		if Valid(text) != json.Valid(text) {
			t.Fatalf("Valid %v, encoding/json %v", Valid(text), json.Valid(text))
		}
		if err != nil {
			return
		}
		var theirs map[string]json.RawMessage
		if err := json.Unmarshal(text, &theirs); err != nil {
			t.Fatal(err)
		}
		if !maps.EqualFunc(ours, theirs, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
			t.Fatalf("members %q, encoding/json %q", ours, theirs)
		}
		out, err := Replace(text, []byte(`"client-model"`), []string{"model"})
		if err != nil || !json.Valid(out) {
			t.Fatalf("Replace: %v, %s", err, out)
		}
		var after map[string]json.RawMessage
		_ = json.Unmarshal(out, &after)
		if _, had := theirs["model"]; had {
			theirs["model"] = json.RawMessage(`"client-model"`)
		}
		if !maps.EqualFunc(after, theirs, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
			t.Fatalf("after Replace %q, want %q", after, theirs)
		}
	})
}

func TestMemberSpansLocateKeys(t *testing.T) {
	in := []byte("{ \"reasoning\" :\"r\", \"a\\\"b\":1}")
	var keys []string
	err := MemberSpans(in, func(key []byte, k, v Span) bool {
		if string(in[k.Start:k.End]) != string(key) {
			t.Errorf("key span %q, key %q", in[k.Start:k.End], key)
		}
		keys = append(keys, string(in[k.Start:k.End])+"="+string(in[v.Start:v.End]))
		return true
	})
	if err != nil || len(keys) != 2 || keys[0] != `reasoning="r"` || keys[1] != `a\"b=1` {
		t.Fatalf("%v %v", keys, err)
	}
}

func TestCompact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"{ \"a\" : [1, 2] }\n", `{"a":[1,2]}`},
		{`"x y"`, `"x y"`},
		{"{ not json", "{ not json"},
	} {
		if got := string(Compact([]byte(c.in))); got != c.want {
			t.Errorf("Compact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if b, _ := json.Marshal(map[string]any{"s": Compact([]byte(`{ "k": 1 }`))}); string(b) != `{"s":{"k":1}}` {
		t.Errorf("marshals as %s, want the JSON itself", b)
	}
}

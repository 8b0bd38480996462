package jsonw

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec/jsonscan"
)

// FuzzMembersOfMatchesMembers: on well-formed text the unchecked walk finds the members and
// elements the checking one finds.
func FuzzMembersOfMatchesMembers(f *testing.F) {
	for _, s := range []string{
		`{"a":"x\"y\\","b":[1,{"c":"]"}],"c":null,"d":-1.5e3,"e":{"a":"\\\\"}}`,
		` { "b" : [ ] , "a" : { } } `, `{}`, `[1,"a",[],{}]`, `{"A":1}`, `{"a":1,"a":2}`,
	} {
		f.Add([]byte(s))
	}
	names := []string{"a", "b", "c", "d"}
	f.Fuzz(func(t *testing.T, text []byte) {
		if !jsonscan.Valid(text) {
			return
		}
		var want, got [4]jsonscan.Span
		wok := Members(text, names, want[:])
		gok := MembersOf(text, names, got[:])
		if wok != gok || wok && want != got {
			t.Fatalf("%s: MembersOf %v %v, Members %v %v", text, gok, got, wok, want)
		}
		var we, ge []jsonscan.Span
		werr := jsonscan.Elements(text, func(v jsonscan.Span) bool { we = append(we, v); return true })
		gok = ElementsOf(text, func(v jsonscan.Span) bool { ge = append(ge, v); return true })
		if (werr == nil) != gok || !reflect.DeepEqual(we, ge) {
			t.Fatalf("%s: ElementsOf %v %v, Elements %v %v", text, gok, ge, werr, we)
		}
	})
}

// FuzzAppendCompactMatchesJSON: on well-formed text AppendCompact writes what json.Compact
// writes, and Strings.Compact gives the same text.
func FuzzAppendCompactMatchesJSON(f *testing.F) {
	for _, s := range []string{
		` { "a" : "x \" y\\" , "b" : [ 1 , 2.50 , -0 , 1e3 ] , "c" : { } } `,
		"{\"a\":\"\xff\u2028 \\u00e9\"}", `{}`, ` [ ] `, `"a b"`, "\t\r\n1\n", `{"a":1,"a":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		if !jsonscan.Valid(text) {
			return
		}
		var want bytes.Buffer
		if err := json.Compact(&want, text); err != nil {
			t.Fatalf("%q: json.Compact: %v", text, err)
		}
		if got := AppendCompact([]byte("x"), text); string(got) != "x"+want.String() {
			t.Fatalf("AppendCompact(%q) = %q, json.Compact gives %q", text, got[1:], want.String())
		}
		var s Strings
		if got := s.Compact(text); got != want.String() {
			t.Fatalf("Strings.Compact(%q) = %q, json.Compact gives %q", text, got, want.String())
		}
	})
}

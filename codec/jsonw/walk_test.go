package jsonw

import (
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

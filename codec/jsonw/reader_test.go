package jsonw

import (
	"testing"

	"github.com/modelgate/modelgate/codec/jsonscan"
)

// FuzzObjectMatchesMembers: reading an object with Object takes the members Members finds,
// and gives up where it gives up.
func FuzzObjectMatchesMembers(f *testing.F) {
	for _, s := range []string{
		`{"a":"x\"y\\","b":[1,{"c":"]"}],"c":null,"d":-1.5e3,"e":{"a":"\\\\"}}`,
		` { "b" : [ ] , "a" : { } } `, `{}`, `[1]`, `{"A":1}`, `{"a":1,"a":2}`, `{"a":null,"a":2}`,
		`{"a":1,"a":null}`, `{"\u0061":1}`, `{"a":1,}`, `{"a":1} x`, `{"é":1}`,
	} {
		f.Add([]byte(s))
	}
	names := []string{"a", "b", "c", "d"}
	f.Fuzz(func(t *testing.T, text []byte) {
		var want, got [4]jsonscan.Span
		wok := Members(text, names, want[:])
		r := jsonscan.NewReader(text)
		gok := Object(&r, names, func(i int) bool {
			var ok bool
			got[i], ok = r.Value()
			return ok
		}) && r.End()
		if wok != gok || wok && want != got {
			t.Fatalf("%s: Object %v %v, Members %v %v", text, gok, got, wok, want)
		}
	})
}

func TestReadStringAndInt(t *testing.T) {
	cases := []struct {
		in  string
		str string
		sok bool
		n   int64
		nok bool
	}{
		{`"plain"`, "plain", true, 0, false},
		{`"esc\"aped \u00e9"`, "esc\"aped é", true, 0, false},
		{"\"bad \xff\"", "bad \uFFFD", true, 0, false},
		{`12`, "", false, 12, true},
		{`-9223372036854775808`, "", false, -9223372036854775808, true},
		{`9223372036854775808`, "", false, 0, false},
		{`1.0`, "", false, 0, false},
		{`1e2`, "", false, 0, false},
		{`true`, "", false, 0, false},
	}
	var s Strings
	for _, c := range cases {
		r := jsonscan.NewReader([]byte(c.in))
		if got, ok := s.Read(&r); got != c.str || ok != c.sok {
			t.Errorf("Read(%s) = %q %v, want %q %v", c.in, got, ok, c.str, c.sok)
		}
		r = jsonscan.NewReader([]byte(c.in))
		if got, ok := ReadInt64(&r); got != c.n || ok != c.nok {
			t.Errorf("ReadInt64(%s) = %d %v, want %d %v", c.in, got, ok, c.n, c.nok)
		}
	}
}

package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// readAll reads the value at r's cursor with the method its kind calls for, descending into
// every container; at depth skip it skips the value whole instead.
func readAll(r *Reader, depth, skip int) bool {
	if depth == skip {
		return r.Skip()
	}
	switch r.next() {
	case '{':
		return r.Object(func([]byte) bool { return readAll(r, depth+1, skip) })
	case '[':
		return r.Array(func() bool { return readAll(r, depth+1, skip) })
	case '"':
		_, _, ok := r.String()
		return ok
	case 't', 'f':
		_, ok := r.Bool()
		return ok
	case 'n':
		return r.Null()
	}
	_, ok := r.Number()
	return ok
}

func TestReaderAcceptsWhatValidAccepts(t *testing.T) {
	cases := []string{
		`{"a":[1,-2.5e3,{"b":"x\"y"}],"c":null,"d":true,"e":false}`, " { } ", ` [ ] `, `"s"`, `0`,
		`{"a":1,}`, `{"a":1} x`, `{"a":01}`, `{"a":"\x"}`, "{\"a\":\"\t\"}", `{"a":nul}`, `{"a" 1}`,
		`[1,]`, `{"a":[1}`, `{"a":"ab`, `{"a":tru}`, `{"a":-}`, `{"a":1.}`, `{"a":"\u12"}`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
		`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	}
	for _, c := range cases {
		for _, skip := range []int{0, 1, 2, -1} {
			r := NewReader([]byte(c))
			got := readAll(&r, 0, skip) && r.End()
			if want := json.Valid([]byte(c)); got != want {
				t.Errorf("%.60q (skip at %d): read %v, encoding/json's Valid %v", c, skip, got, want)
			}
		}
	}
}

func TestReaderStringIsPlain(t *testing.T) {
	cases := []struct {
		in    string
		raw   string
		plain bool
	}{
		{`"abc def ghi jkl mno"`, "abc def ghi jkl mno", true},
		{`""`, "", true},
		{`"a\"b"`, `a\"b`, false},
		{`"0123456789\n"`, `0123456789\n`, false},
		{`"é and more ascii text"`, "é and more ascii text", false},
		{"\"ascii text then \xff\"", "ascii text then \xff", false},
	}
	for _, c := range cases {
		r := NewReader([]byte(c.in))
		raw, plain, ok := r.String()
		if !ok || string(raw) != c.raw || plain != c.plain || !r.End() {
			t.Errorf("%s: %q plain %v ok %v, want %q plain %v", c.in, raw, plain, ok, c.raw, c.plain)
		}
	}
}

// FuzzReader: a Reader descending into every value, or skipping at any depth, accepts
// exactly the texts encoding/json's Valid accepts, and a string it calls plain is its own
// text.
func FuzzReader(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e3,{"b":"x\"y"}],"c":null,"d":true}`, "\"abcdefgh\\u00e9ijklmnop\xff\"", `[1,]`, `{"a":"\u12"}`} {
		f.Add([]byte(s), 1)
	}
	f.Fuzz(func(t *testing.T, text []byte, skip int) {
		r := NewReader(text)
		got := readAll(&r, 0, skip) && r.End()
		if want := json.Valid(text); got != want {
			t.Fatalf("%q (skip at %d): read %v, encoding/json's Valid %v", text, skip, got, want)
		}
		r = NewReader(text)
		if raw, plain, ok := r.String(); ok && plain {
			var s string
			if json.Unmarshal(text[:r.s.i], &s) != nil || s != string(raw) || !utf8.ValidString(s) {
				t.Fatalf("%q: plain %q, encoding/json reads %q", text, raw, s)
			}
		}
	})
}

// FuzzSkipPlain: the eight-bytes-at-a-time scan stops where a byte-at-a-time one does.
func FuzzSkipPlain(f *testing.F) {
	f.Add([]byte("abcdefgh\"ijklmnop"), 0, true)
	f.Add([]byte("abcdefghijklmnop\\q"), 3, false)
	f.Add([]byte("abc\x85defghijklmnop\x1f"), 0, false)
	f.Add([]byte("abc\xffdefgh"), 1, true)
	f.Fuzz(func(t *testing.T, b []byte, i int, high bool) {
		if i < 0 || i > len(b) {
			return
		}
		want := i
		for ; want < len(b); want++ {
			if c := b[want]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 && high {
				break
			}
		}
		if got := skipPlain(b, i, high); got != want {
			t.Fatalf("skipPlain(%q, %d, %v) = %d, want %d", b, i, high, got, want)
		}
	})
}

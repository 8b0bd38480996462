package jsonw

import (
	"encoding/json"
	"testing"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

func TestStringEscapesAsCodecMarshal(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", `"plain"`},
		{`say "hi" \ bye`, `"say \"hi\" \\ bye"`},
		{"\x00\x01\x1f", `"\u0000\u0001\u001f"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"a\u2028b\u2029c", `"a\u2028b\u2029c"`},
		{"bad \xff byte \xc3", "\"bad \uFFFD byte \uFFFD\""},
		{"<b> & </b>", `"<b> & </b>"`},
		{"é ✓ 😀", `"é ✓ 😀"`},
		{"\x7f", "\"\x7f\""},
		{"", `""`},
	}
	for _, c := range cases {
		got := string(String(nil, c.in))
		if got != c.want {
			t.Errorf("String(%q) = %s, want %s", c.in, got, c.want)
		}
		old, _ := codec.Marshal(c.in)
		if got != string(old) {
			t.Errorf("String(%q) = %s, codec.Marshal gives %s", c.in, got, old)
		}
	}
}

func TestUnquoteResolvesAsEncodingJSON(t *testing.T) {
	cases := []struct{ raw, want string }{
		{`plain`, "plain"},
		{`a\"b\\c\/d`, `a"b\c/d`},
		{`\b\f\n\r\t`, "\b\f\n\r\t"},
		{`\u00e9\u2028`, "é\u2028"},
		{`\ud83d\ude00`, "😀"},
		{`\ud83d`, "\uFFFD"},
		{`\ude00x`, "\uFFFDx"},
		{`\ud83d\u0041`, "\uFFFDA"},
		{"bad \xff", "bad \uFFFD"},
	}
	var s Strings
	for _, c := range cases {
		if got := string(Unquote(nil, []byte(c.raw))); got != c.want {
			t.Errorf("Unquote(%q) = %q, want %q", c.raw, got, c.want)
		}
		if got := s.String([]byte(c.raw)); got != c.want {
			t.Errorf("Strings.String(%q) = %q, want %q", c.raw, got, c.want)
		}
	}
}

// TestStringsStayValid: strings from one block are not overwritten by later ones.
func TestStringsStayValid(t *testing.T) {
	var s Strings
	var got []string
	for i := 0; i < 2000; i++ {
		got = append(got, s.String([]byte("text-"+string(rune('a'+i%26)))))
	}
	for i, g := range got {
		if want := "text-" + string(rune('a'+i%26)); g != want {
			t.Fatalf("string %d = %q, want %q", i, g, want)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"a\"b", "\x00\u2028\xff<>&", "😀\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := String(nil, s)
		want, err := codec.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("String(%q) = %s, codec.Marshal gives %s", s, got, want)
		}
	})
}

func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"a\"b"`, `"\ud83d\ude00"`, `"\ud800\ud800"`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, quoted []byte) {
		var want string
		if json.Unmarshal(quoted, &want) != nil || !jsonscan.Valid(quoted) || quoted[0] != '"' || quoted[len(quoted)-1] != '"' {
			return
		}
		raw := quoted[1 : len(quoted)-1]
		if got := string(Unquote(nil, raw)); got != want {
			t.Fatalf("Unquote(%q) = %q, encoding/json gives %q", raw, got, want)
		}
		var s Strings
		if got := s.String(raw); got != want {
			t.Fatalf("Strings.String(%q) = %q, encoding/json gives %q", raw, got, want)
		}
	})
}

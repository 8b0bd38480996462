package jsonw

import (
	"bytes"

	"github.com/modelgate/modelgate/codec/jsonscan"
)

// Members reads the object text into vals, one span per name in names (a zero span when the
// member is absent or null). It is false when encoding/json might read the object otherwise
// than a fixed-shape reader would: a key Lookup is unsure of, a known member repeated
// (encoding/json merges repeated objects), or text that is not one well-formed object.
func Members(text []byte, names []string, vals []jsonscan.Span) bool {
	clear(vals)
	ok := true
	err := jsonscan.Members(text, func(key []byte, v jsonscan.Span) bool {
		i := Lookup(key, names)
		switch {
		case i == Unsure || i >= 0 && vals[i] != (jsonscan.Span{}):
			ok = false
			return false
		case i >= 0 && !IsNull(text[v.Start:v.End]):
			vals[i] = v
		}
		return true
	})
	return ok && err == nil
}

// Present reports a member Members found.
func Present(v jsonscan.Span) bool { return v.End > 0 }

// Plain is the contents of a string value that has no escapes; false for another type or a
// string with escapes.
func Plain(raw []byte) ([]byte, bool) {
	if !IsString(raw) || bytes.IndexByte(raw, '\\') >= 0 {
		return nil, false
	}
	return raw[1 : len(raw)-1], true
}

// Str reads the string member at v of text into s's blocks ("" when absent); false for
// another type.
func (s *Strings) Str(text []byte, v jsonscan.Span) (string, bool) {
	if !Present(v) {
		return "", true
	}
	raw := text[v.Start:v.End]
	if !IsString(raw) {
		return "", false
	}
	return s.String(raw[1 : len(raw)-1]), true
}

// Ints reads integer members into the pointers in order (absent ones leave theirs alone);
// false for a value encoding/json would not read into an int64.
func Ints(text []byte, vals []jsonscan.Span, into ...*int64) bool {
	for i, v := range vals {
		if !Present(v) {
			continue
		}
		n, ok := Int64(text[v.Start:v.End])
		if !ok {
			return false
		}
		*into[i] = n
	}
	return true
}

// IntAt reads an integer member that encoding/json reads into an int.
func IntAt(text []byte, v jsonscan.Span) (int, bool) {
	n, ok := Int64(text[v.Start:v.End])
	if !ok || int64(int(n)) != n {
		return 0, false
	}
	return int(n), true
}

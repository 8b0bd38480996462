package jsonw

import (
	"bytes"

	"github.com/modelgate/modelgate/codec/jsonscan"
)

// The walk over text already checked to be well-formed (a value inside what Members read):
// jsonscan checks the grammar of every byte, so reading an object nested four levels deep
// with it checks its bytes four times; once is enough, and the levels inside only need the
// member boundaries, found here without checking again (strings skipped with IndexByte).

// MembersOf is Members for an object inside text Members (or jsonscan) has checked.
func MembersOf(text []byte, names []string, vals []jsonscan.Span) bool {
	clear(vals)
	ok := true
	isObject := EachMember(text, func(key []byte, v jsonscan.Span) bool {
		k := Lookup(key, names)
		switch {
		case k == Unsure || k >= 0 && vals[k] != (jsonscan.Span{}):
			ok = false
		case k >= 0 && !IsNull(text[v.Start:v.End]):
			vals[k] = v
		}
		return ok
	})
	return ok && isObject
}

// EachMember calls fn with each member of an object inside checked text: its raw key (escapes
// as written) and the span of its value. False when text is not an object or fn said stop.
func EachMember(text []byte, fn func(key []byte, v jsonscan.Span) bool) bool {
	i := ws(text, 0)
	if i >= len(text) || text[i] != '{' {
		return false
	}
	i = ws(text, i+1)
	if i < len(text) && text[i] == '}' {
		return true
	}
	for i < len(text) {
		end := skipString(text, i)
		key := text[i+1 : end-1]
		i = ws(text, end) // at the colon
		i = ws(text, i+1)
		v := jsonscan.Span{Start: i, End: skipValue(text, i)}
		if !fn(key, v) {
			return false
		}
		i = ws(text, v.End)
		if i >= len(text) || text[i] == '}' {
			return true
		}
		i = ws(text, i+1) // after the comma
	}
	return true
}

// ElementsOf calls fn with the span of each element of an array inside checked text; false
// when text is not an array or fn said stop.
func ElementsOf(text []byte, fn func(v jsonscan.Span) bool) bool {
	i := ws(text, 0)
	if i >= len(text) || text[i] != '[' {
		return false
	}
	i = ws(text, i+1)
	if i < len(text) && text[i] == ']' {
		return true
	}
	for i < len(text) {
		v := jsonscan.Span{Start: i, End: skipValue(text, i)}
		if !fn(v) {
			return false
		}
		i = ws(text, v.End)
		if i >= len(text) || text[i] == ']' {
			return true
		}
		i = ws(text, i+1)
	}
	return true
}

func ws(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString is the index after the string that opens at b[i].
func skipString(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		q := i + j
		k := q - 1
		for k >= i && b[k] == '\\' {
			k--
		}
		if (q-1-k)%2 == 0 { // an even run of backslashes: the quote ends the string
			return q + 1
		}
		i = q + 1
	}
}

// skipValue is the index after the value that starts at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// AppendCompact appends the well-formed JSON text raw (checked, e.g. by jsonscan) without the
// white space between its tokens, as json.Compact writes it: strings, escapes and numbers
// stay as they are.
func AppendCompact(b, raw []byte) []byte {
	from := 0 // raw[from:i] is still to copy
	for i := 0; i < len(raw); {
		switch raw[i] {
		case '"':
			i = skipString(raw, i)
		case ' ', '\t', '\n', '\r':
			b = append(b, raw[from:i]...)
			i = ws(raw, i)
			from = i
		default:
			i++
		}
	}
	return append(b, raw[from:]...)
}

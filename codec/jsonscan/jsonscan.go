// Package jsonscan finds the byte spans of a JSON object's members and an array's elements
// without decoding the text, so a relay can read or replace one value and keep every other
// byte exactly as the upstream wrote it.
//
// The scanner checks the grammar as strictly as encoding/json's Valid (strings, escapes,
// numbers, literals, nesting up to the same depth), so a text it accepts in full is one that
// encoding/json accepts, and a cut or garbled event is reported rather than relayed.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// Span locates a value in its text: text[Start:End].
type Span struct{ Start, End int }

// ErrSyntax reports text that is not the JSON value the caller expected.
var ErrSyntax = errors.New("jsonscan: not a well-formed JSON value")

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' { // most often the first test
			return
		}
		s.i++
	}
}

// peek is the next byte, or 0 at the end.
func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// str skips a string starting at its opening quote.
func (s *scanner) str() error {
	_, err := s.plainStr()
	return err
}

// plainStr skips a string starting at its opening quote and reports whether its contents are
// plain: no escapes and only ASCII.
func (s *scanner) plainStr() (plain bool, err error) {
	s.i++ // the opening quote
	plain = true
	for {
		s.i = skipPlain(s.b, s.i, plain)
		if s.i >= len(s.b) {
			return false, ErrSyntax
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return plain, nil
		case c < 0x20:
			return false, ErrSyntax
		case c >= 0x80:
			plain = false
			s.i++
		default: // a backslash
			plain = false
			if s.i+1 >= len(s.b) {
				return false, ErrSyntax
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) {
					return false, ErrSyntax
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !isHex(h) {
						return false, ErrSyntax
					}
				}
				s.i += 6
			default:
				return false, ErrSyntax
			}
		}
	}
}

// SkipPlain is the index of the first byte of b at or after i that is a quote, a backslash, a
// control character or outside ASCII (len(b) if none): the end of the text a JSON string
// holds, or can hold, as it is.
func SkipPlain(b []byte, i int) int { return skipPlain(b, i, true) }

// skipPlain is the index of the first byte at or after i that a string scan must look at: a
// quote, a backslash, a control character, or (with high set) a byte outside ASCII; len(b) if
// none. It takes eight bytes at a time while none of them is one.
func skipPlain(b []byte, i int, high bool) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	var nonASCII uint64 // the bits that mark a byte outside ASCII, when it stops the scan
	if high {
		nonASCII = highs
	}
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (ones * '"')
		bs := x ^ (ones * '\\')
		// A byte is zero in q or bs, or below 0x20 in x, or outside ASCII. A borrow only
		// ever marks a byte above one that is such, so the lowest mark is the first.
		if m := (q-ones)&^q&highs | (bs-ones)&^bs&highs | (x-ones*0x20)&^x&highs | x&nonASCII; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 && high {
			return i
		}
	}
	return i
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// number skips -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() error {
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case c >= '1' && c <= '9':
		s.digits()
	default:
		return ErrSyntax
	}
	if s.peek() == '.' {
		s.i++
		if s.digits() == 0 {
			return ErrSyntax
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if s.digits() == 0 {
			return ErrSyntax
		}
	}
	return nil
}

func (s *scanner) literal(word string) error {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return ErrSyntax
	}
	s.i += len(word)
	return nil
}

// key skips a member name and its colon, leaving the scanner at the value; it returns the
// name's raw bytes.
func (s *scanner) key() ([]byte, error) {
	s.ws()
	if s.peek() != '"' {
		return nil, ErrSyntax
	}
	start := s.i
	j := start + 1
	for j < len(s.b) && plainKeyByte[s.b[j]] { // most keys: a few plain bytes, then a quote
		j++
	}
	if j < len(s.b) && s.b[j] == '"' {
		s.i = j + 1
	} else if err := s.str(); err != nil {
		return nil, err
	}
	name := s.b[start+1 : s.i-1]
	if s.i < len(s.b) && s.b[s.i] == ':' {
		s.i++
		return name, nil
	}
	s.ws()
	if s.peek() != ':' {
		return nil, ErrSyntax
	}
	s.i++
	return name, nil
}

// plainKeyByte marks the bytes a string holds as they are: ASCII but controls, the quote and
// the backslash.
var plainKeyByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// value skips one value (after optional whitespace), nested containers included, without
// recursion: open containers are kept on a stack of their opening bytes, at most limit deep.
func (s *scanner) value(limit int) error {
	var buf [32]byte
	stack := buf[:0]
	for {
		s.ws()
		closed := true // a scalar or an empty container ends here
		switch c := s.peek(); {
		case c == '{' || c == '[':
			if len(stack) == limit { // an empty container counts as a level too
				return ErrSyntax
			}
			s.i++
			s.ws()
			if end := s.peek(); c == '{' && end == '}' || c == '[' && end == ']' {
				s.i++
				break
			}
			stack = append(stack, c)
			if c == '{' {
				if _, err := s.key(); err != nil {
					return err
				}
			}
			closed = false
		case c == '"':
			if err := s.str(); err != nil {
				return err
			}
		case c == 't':
			if err := s.literal("true"); err != nil {
				return err
			}
		case c == 'f':
			if err := s.literal("false"); err != nil {
				return err
			}
		case c == 'n':
			if err := s.literal("null"); err != nil {
				return err
			}
		default:
			if err := s.number(); err != nil {
				return err
			}
		}
		if !closed {
			continue
		}
		// A value ended: close every container it completes, up to the next sibling.
		for {
			if len(stack) == 0 {
				return nil
			}
			s.ws()
			top, c := stack[len(stack)-1], s.peek()
			if c == ',' {
				s.i++
				if top == '{' {
					if _, err := s.key(); err != nil {
						return err
					}
				}
				break
			}
			if top == '{' && c == '}' || top == '[' && c == ']' {
				s.i++
				stack = stack[:len(stack)-1]
				continue
			}
			return ErrSyntax
		}
	}
}

// end checks that only whitespace follows.
func (s *scanner) end() error {
	s.ws()
	if s.i != len(s.b) {
		return ErrSyntax
	}
	return nil
}

// Members calls fn with each member of the JSON object that is the whole of text (whitespace
// around it allowed), in order: the raw key (between its quotes, escapes as written; see
// KeyIs) and the span of its value. It stops when fn returns false; otherwise it scans to the
// end, and the error reports text that is not exactly one well-formed object.
func Members(text []byte, fn func(key []byte, v Span) bool) error {
	return each(text, '{', '}', func(key []byte, _, v Span) bool { return fn(key, v) })
}

// MemberSpans is Members with the span of each key's raw bytes too (between its quotes), for
// a relay that renames a member.
func MemberSpans(text []byte, fn func(key []byte, k, v Span) bool) error {
	return each(text, '{', '}', fn)
}

// Elements calls fn with the span of each element of the JSON array that is the whole of
// text, in order, like Members.
func Elements(text []byte, fn func(v Span) bool) error {
	return each(text, '[', ']', func(_ []byte, _, v Span) bool { return fn(v) })
}

// each walks the object or array that is the whole of text; keys are nil for an array.
func each(text []byte, open, close byte, fn func(key []byte, k, v Span) bool) error {
	s := &scanner{b: text}
	s.ws()
	if s.peek() != open {
		return ErrSyntax
	}
	s.i++
	s.ws()
	if s.peek() == close {
		s.i++
		return s.end()
	}
	for {
		var key []byte
		var k Span
		if open == '{' {
			s.ws()
			at := s.i + 1 // after the opening quote
			var err error
			if key, err = s.key(); err != nil {
				return err
			}
			k = Span{at, at + len(key)}
		}
		s.ws()
		v := s.i
		if err := s.value(maxDepth - 1); err != nil { // inside the container: one level used
			return err
		}
		if !fn(key, k, Span{v, s.i}) {
			return nil
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
		case close:
			s.i++
			return s.end()
		default:
			return ErrSyntax
		}
	}
}

// Valid reports whether text is exactly one well-formed JSON value.
func Valid(text []byte) bool {
	s := &scanner{b: text}
	return s.value(maxDepth) == nil && s.end() == nil
}

// KeyIs reports whether a raw key, as Members passes it, names key once its escapes are
// resolved (as encoding/json resolves them).
func KeyIs(raw []byte, key string) bool {
	if plain(raw) {
		return string(raw) == key
	}
	return Key(raw) == key
}

// plain reports a raw key that is its own name: no escapes, valid UTF-8.
func plain(raw []byte) bool { return bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) }

// Key resolves a raw key's escapes (and, as encoding/json does, replaces invalid UTF-8).
func Key(raw []byte) string {
	if plain(raw) {
		return string(raw)
	}
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	var s string
	_ = json.Unmarshal(q, &s)
	return s
}

// Member returns the span of the member named key of the object text; with duplicate names
// the last one wins, as in encoding/json.
func Member(text []byte, key string) (Span, bool) {
	var at Span
	found := false
	err := Members(text, func(k []byte, v Span) bool {
		if KeyIs(k, key) {
			at, found = v, true
		}
		return true
	})
	return at, found && err == nil
}

// Edit replaces the bytes of a span.
type Edit struct {
	Span
	New []byte
}

// Apply returns text with the edits made; they must be in order and must not overlap. Without
// edits it returns text itself.
func Apply(text []byte, edits []Edit) []byte {
	if len(edits) == 0 {
		return text
	}
	return AppendApply(nil, text, edits)
}

// AppendApply appends text with the edits made to dst (in order, not overlapping, as for
// Apply), so a relay can reuse one buffer for every frame.
func AppendApply(dst, text []byte, edits []Edit) []byte {
	n := len(text)
	for _, e := range edits {
		n += len(e.New) - (e.End - e.Start)
	}
	out := slices.Grow(dst, n)
	at := 0
	for _, e := range edits {
		out = append(out, text[at:e.Start]...)
		out = append(out, e.New...)
		at = e.End
	}
	return append(out, text[at:]...)
}

// Replace returns text with the value of every member found at one of the paths (member
// names from the top level down) set to value, which must be JSON text. A path through a
// member that is not an object finds nothing. Members that already hold exactly value are
// left alone, and text that needs no change is returned as it is. The error reports text
// that is not one well-formed object.
func Replace(text, value []byte, paths ...[]string) ([]byte, error) {
	var edits []Edit
	nonEmpty := paths[:0:0]
	for _, p := range paths {
		if len(p) > 0 {
			nonEmpty = append(nonEmpty, p)
		}
	}
	err := replaceIn(text, 0, value, nonEmpty, 0, &edits)
	if err != nil {
		return text, err
	}
	return Apply(text, edits), nil
}

// replaceIn edits the members of the object text (at base in the whole text) that end one of
// the paths, all of whose names before depth have matched on the way down.
func replaceIn(text []byte, base int, value []byte, paths [][]string, depth int, edits *[]Edit) error {
	return Members(text, func(k []byte, v Span) bool {
		var deeper [][]string
		whole := false
		for _, p := range paths {
			switch {
			case !KeyIs(k, p[depth]):
			case len(p) == depth+1:
				whole = true
			default:
				deeper = append(deeper, p)
			}
		}
		switch {
		case whole: // the whole value goes; a longer path into it has nothing left to edit
			if !bytes.Equal(text[v.Start:v.End], value) {
				*edits = append(*edits, Edit{Span{base + v.Start, base + v.End}, value})
			}
		case len(deeper) > 0 && text[v.Start] == '{':
			// Members has scanned this value whole already, so the nested scan cannot fail.
			_ = replaceIn(text[v.Start:v.End], base+v.Start, value, deeper, depth+1, edits)
		}
		return true
	})
}

// Compact is raw without insignificant white space, or raw itself when it is not valid JSON,
// as a RawMessage, so it marshals as JSON, not as bytes (the caller validates).
func Compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// Package jsonw appends fixed-shape JSON to a caller's buffer and reads JSON strings into
// long-lived Go strings without a heap allocation per string: the pieces the stream codecs need
// to turn one SSE chunk into events, and events into frames, without encoding/json's
// reflection and per-call allocations.
//
// Strings are escaped exactly as codec.Marshal (encoding/json with SetEscapeHTML(false))
// escapes them: `"` and `\` with a backslash, \b \f \n \r \t by name, other control characters
// as \u00XX, U+2028 and U+2029 as \u2028 and \u2029, each byte of invalid UTF-8 as the character U+FFFD
// itself (encoding/json's choice since Go 1.27; it wrote the escape \ufffd before), and
// `<`, `>`, `&` as they are.
package jsonw

import (
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/modelgate/modelgate/codec/jsonscan"
)

const hex = "0123456789abcdef"

// String appends s as a quoted JSON string.
func String(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	text := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	for i := jsonscan.SkipPlain(text, 0); i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			i = jsonscan.SkipPlain(text, i)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Key appends a member name and its colon: `"name":`. name must need no escaping (the codecs'
// own constant names).
func Key(b []byte, name string) []byte {
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// Int appends n in decimal.
func Int(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// Unquote appends the text of a JSON string's contents (raw is what lies between its quotes,
// already checked to be well-formed, e.g. by jsonscan) with its escapes resolved as
// encoding/json resolves them: invalid UTF-8 and lone surrogates become U+FFFD.
func Unquote(b, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\' && i+1 < len(raw):
			i = unescape(&b, raw, i)
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(raw) && raw[j] < utf8.RuneSelf && raw[j] != '\\' {
				j++
			}
			b = append(b, raw[i:j]...)
			i = j
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, "\uFFFD"...)
			} else {
				b = append(b, raw[i:i+size]...)
			}
			i += size
		}
	}
	return b
}

// unescape appends the escape at raw[i] (a backslash) and returns the index after it.
func unescape(b *[]byte, raw []byte, i int) int {
	switch e := raw[i+1]; e {
	case 'b':
		*b = append(*b, '\b')
	case 'f':
		*b = append(*b, '\f')
	case 'n':
		*b = append(*b, '\n')
	case 'r':
		*b = append(*b, '\r')
	case 't':
		*b = append(*b, '\t')
	case 'u':
		r, ok := hex4(raw, i+2)
		if !ok {
			*b = append(*b, raw[i:i+2]...) // not reached for checked text
			return i + 2
		}
		i += 6
		if r >= 0xd800 && r < 0xdc00 { // a high surrogate: a pair needs its low half next
			if lo, ok := hex4(raw, i+2); ok && raw[i] == '\\' && raw[i+1] == 'u' && lo >= 0xdc00 && lo < 0xe000 {
				*b = utf8.AppendRune(*b, 0x10000+(r-0xd800)<<10+(lo-0xdc00))
				return i + 6
			}
			r = utf8.RuneError
		} else if r >= 0xdc00 && r < 0xe000 {
			r = utf8.RuneError
		}
		*b = utf8.AppendRune(*b, r)
		return i
	default: // '"', '\\', '/'
		*b = append(*b, e)
	}
	return i + 2
}

func hex4(raw []byte, at int) (rune, bool) {
	if at < 0 || at+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Strings makes Go strings out of JSON string contents, carved from blocks it never writes
// again, so a decoder gets long-lived strings at the cost of one allocation per block rather
// than one per string. A string keeps its whole block alive.
type Strings struct{ block []byte }

// Blocks start small (most streams are short) and double up to blockSize.
const (
	firstBlock = 256
	blockSize  = 4 << 10
)

// String returns raw's contents (between the quotes, well-formed) as a string.
func (s *Strings) String(raw []byte) string {
	return s.carve(raw, 3*len(raw), Unquote) // an invalid byte becomes three (U+FFFD)
}

// Compact returns the well-formed JSON text raw without the white space between its tokens
// (AppendCompact) as a string.
func (s *Strings) Compact(raw []byte) string {
	return s.carve(raw, len(raw), AppendCompact)
}

// Plain returns raw, the contents of a string with no escapes and only ASCII (its text as it
// is), as a string.
func (s *Strings) Plain(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	at := s.room(len(raw))
	s.block = append(s.block, raw...)
	return unsafe.String(&s.block[at], len(raw))
}

// room makes the block hold need more bytes and returns where they start.
func (s *Strings) room(need int) int {
	if cap(s.block)-len(s.block) < need {
		s.block = make([]byte, 0, max(min(2*cap(s.block), blockSize), firstBlock, need))
	}
	return len(s.block)
}

// carve appends what write makes of raw (at most need bytes) to the block and returns it.
func (s *Strings) carve(raw []byte, need int, write func(b, raw []byte) []byte) string {
	if len(raw) == 0 {
		return ""
	}
	at := s.room(need)
	s.block = write(s.block, raw)
	if len(s.block) == at {
		return ""
	}
	return unsafe.String(&s.block[at], len(s.block)-at)
}

// Int64 reads an integer JSON number as encoding/json reads one into an int64: false for a
// fraction, an exponent or a value out of range (encoding/json's error).
func Int64(raw []byte) (int64, bool) {
	neg := len(raw) > 0 && raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	if len(raw) == 0 || len(raw) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	switch {
	case neg && n <= 1<<63:
		return int64(-n), true
	case !neg && n < 1<<63:
		return int64(n), true
	}
	return 0, false
}

// IsNull reports the literal null.
func IsNull(raw []byte) bool { return string(raw) == "null" }

// IsString reports a string value (a span starting at its quote).
func IsString(raw []byte) bool { return len(raw) >= 2 && raw[0] == '"' }

// Unsure is Lookup's answer for a key a byte-level reader cannot be sure encoding/json would
// read as it does: one with escapes or non-ASCII bytes, or one that differs from a known name
// only in case (encoding/json matches names case-insensitively). The caller falls back to
// encoding/json.
const Unsure = -2

// Lookup is the index in names of the raw member key (as jsonscan passes it), -1 for a key
// encoding/json would ignore, or Unsure.
func Lookup(key []byte, names []string) int {
	for i, n := range names {
		if string(key) == n {
			return i
		}
	}
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			return Unsure
		}
	}
	for _, n := range names {
		if foldEqual(key, n) {
			return Unsure
		}
	}
	return -1
}

func foldEqual(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i, c := range key {
		if lower(c) != lower(name[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

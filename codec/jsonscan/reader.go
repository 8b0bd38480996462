package jsonscan

// Reader reads one JSON text in a single pass: the caller descends into the values it wants
// (Object, Array, String, Number, Bool) and skips the rest (Skip), and every byte is checked
// as strictly as Valid checks it, once. Members followed by a walk of each member it wants
// reads a nested value once per level; a stream decoder reading a small chunk four levels
// deep for a few strings spends most of its time doing that.
//
// A method that finds text other than what it reads makes the Reader fail: it returns false,
// and so does every later call, so a caller can stop at its first false.
type Reader struct {
	s     scanner
	depth int // containers open around the cursor
	bad   bool
}

// NewReader reads text from its start.
func NewReader(text []byte) Reader { return Reader{s: scanner{b: text}} }

func (r *Reader) fail() bool {
	r.bad = true
	return false
}

// next is the first byte of the next value (after white space), 0 at the end.
func (r *Reader) next() byte {
	r.s.ws()
	return r.s.peek()
}

// Object reads an object, calling fn with each member's raw key (between its quotes,
// escapes as written; see KeyIs) with the cursor at the member's value, which fn must read
// or skip. fn returns false to stop, and so does Object.
func (r *Reader) Object(fn func(key []byte) bool) bool {
	return r.container('{', '}', fn)
}

// Array reads an array, calling fn with the cursor at each element, which fn must read or
// skip; fn returns false to stop, and so does Array.
func (r *Reader) Array(fn func() bool) bool {
	return r.container('[', ']', func([]byte) bool { return fn() })
}

func (r *Reader) container(open, close byte, fn func(key []byte) bool) bool {
	if r.bad || r.next() != open || r.depth == maxDepth {
		return r.fail()
	}
	r.s.i++
	r.depth++
	if r.next() == close {
		r.s.i++
		r.depth--
		return true
	}
	for {
		var key []byte
		if open == '{' {
			var err error
			if key, err = r.s.key(); err != nil {
				return r.fail()
			}
		}
		if !fn(key) || r.bad {
			return r.fail()
		}
		switch r.next() {
		case ',':
			r.s.i++
		case close:
			r.s.i++
			r.depth--
			return true
		default:
			return r.fail()
		}
	}
}

// Skip reads any value.
func (r *Reader) Skip() bool {
	_, ok := r.Value()
	return ok
}

// Value reads any value and returns its span.
func (r *Reader) Value() (Span, bool) {
	if r.bad {
		return Span{}, false
	}
	r.s.ws()
	start := r.s.i
	if r.s.value(maxDepth-r.depth) != nil {
		return Span{}, r.fail()
	}
	return Span{start, r.s.i}, true
}

// Null reads the value if it is null, and reports whether it was.
func (r *Reader) Null() bool {
	if r.bad || r.next() != 'n' {
		return false
	}
	if r.s.literal("null") != nil {
		return r.fail()
	}
	return true
}

// String reads a string value and returns its raw contents (between the quotes, escapes as
// written) and whether they are plain: no escapes, no byte outside ASCII, so the contents
// are the string's text.
func (r *Reader) String() (raw []byte, plain, ok bool) {
	if r.bad || r.next() != '"' {
		return nil, false, r.fail()
	}
	start := r.s.i + 1
	plain, err := r.s.plainStr()
	if err != nil {
		return nil, false, r.fail()
	}
	return r.s.b[start : r.s.i-1], plain, true
}

// Number reads a number value and returns its text.
func (r *Reader) Number() ([]byte, bool) {
	if r.bad {
		return nil, false
	}
	r.s.ws()
	start := r.s.i
	if r.s.number() != nil {
		return nil, r.fail()
	}
	return r.s.b[start:r.s.i], true
}

// Bool reads true or false.
func (r *Reader) Bool() (v, ok bool) {
	if r.bad {
		return false, false
	}
	switch r.next() {
	case 't':
		return true, r.s.literal("true") == nil || r.fail()
	case 'f':
		return false, r.s.literal("false") == nil || r.fail()
	}
	return false, r.fail()
}

// End reports a text read whole: nothing failed and only white space follows.
func (r *Reader) End() bool {
	return !r.bad && r.s.end() == nil
}

// Text is the text the Reader reads.
func (r *Reader) Text() []byte { return r.s.b }

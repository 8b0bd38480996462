package jsonw

import "github.com/modelgate/modelgate/codec/jsonscan"

// Readers of a fixed shape on a jsonscan.Reader, in one pass, deciding as Members does what a
// byte-level reader can take as encoding/json would.

// Object reads the object at r's cursor: fn gets the index in names (at most 64) of each
// member whose value is not null, with r at that value, which fn must read; members of other
// names are skipped. It is false, as Members is, for a key Lookup is unsure of, a known member
// repeated (encoding/json merges repeated objects) or text that is not well-formed, and when
// fn is false.
func Object(r *jsonscan.Reader, names []string, fn func(i int) bool) bool {
	var seen uint64
	return r.Object(func(key []byte) bool {
		i := Lookup(key, names)
		switch {
		case i == Unsure:
			return false
		case i < 0:
			return r.Skip()
		case seen&(1<<i) != 0:
			return false
		case r.Null():
			return true
		}
		seen |= 1 << i
		return fn(i)
	})
}

// Read reads the string value at r's cursor into s's blocks; false for another type.
func (s *Strings) Read(r *jsonscan.Reader) (string, bool) {
	raw, plain, ok := r.String()
	switch {
	case !ok:
		return "", false
	case plain:
		return s.Plain(raw), true
	}
	return s.String(raw), true
}

// ReadIf is Read when keep is set; otherwise it only checks that the value is a string, as
// encoding/json would, and returns "" (a value the caller has no use for is not copied).
func (s *Strings) ReadIf(r *jsonscan.Reader, keep bool) (string, bool) {
	if keep {
		return s.Read(r)
	}
	_, _, ok := r.String()
	return "", ok
}

// ReadInt64 reads the number at r's cursor as encoding/json reads one into an int64 (Int64).
func ReadInt64(r *jsonscan.Reader) (int64, bool) {
	raw, ok := r.Number()
	if !ok {
		return 0, false
	}
	return Int64(raw)
}

// ReadInt reads the number at r's cursor as encoding/json reads one into an int.
func ReadInt(r *jsonscan.Reader) (int, bool) {
	n, ok := ReadInt64(r)
	if !ok || int64(int(n)) != n {
		return 0, false
	}
	return int(n), true
}

// Package bincode is the byte layer of the hand-written encodings of the records a cluster
// replica decodes and encodes on every apply (actors/quota/step, cluster/accounts): varints,
// length-prefixed strings and booleans in a fixed field order, no reflection, no field
// names. A Reader keeps the first error and reads zeros after it, so a decoder reads every
// field and checks Err once.
package bincode

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxLen bounds a string or a slice count: a record that claims more is
// malformed (a replica never allocates what a corrupt length says).
const MaxLen = 1 << 24

// Writer appends to B.
type Writer struct{ B []byte }

func (w *Writer) Uint(v uint64) { w.B = binary.AppendUvarint(w.B, v) }
func (w *Writer) Int(v int64)   { w.B = binary.AppendVarint(w.B, v) }
func (w *Writer) Byte(v byte)   { w.B = append(w.B, v) }

func (w *Writer) Bool(v bool) {
	if v {
		w.B = append(w.B, 1)
	} else {
		w.B = append(w.B, 0)
	}
}

func (w *Writer) String(s string) { w.Uint(uint64(len(s))); w.B = append(w.B, s...) }

// Reader reads what a Writer wrote.
type Reader struct {
	b   []byte
	err error
}

// NewReader reads b (the strings it returns do not alias it).
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// ErrMalformed is what a truncated or inconsistent record gives.
var ErrMalformed = errors.New("bincode: malformed record")

func (r *Reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrMalformed, what)
	}
	r.b = nil
}

// Err is the first error met, or, when everything read well, an error if bytes are left.
func (r *Reader) Err() error {
	if r.err == nil && len(r.b) != 0 {
		return fmt.Errorf("%w: %d bytes after the record", ErrMalformed, len(r.b))
	}
	return r.err
}

func (r *Reader) Uint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("a bad unsigned varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *Reader) Int() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("a bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *Reader) Byte() byte {
	if len(r.b) == 0 {
		r.fail("a missing byte")
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *Reader) Bool() bool {
	switch r.Byte() {
	case 0:
		return false
	case 1:
		return true
	}
	r.fail("a boolean that is neither 0 nor 1")
	return false
}

// Len reads a count of items each at least min bytes long, refusing one the record cannot
// hold.
func (r *Reader) Len(min int) int {
	n := r.Uint()
	if n > MaxLen || n*uint64(max(min, 1)) > uint64(len(r.b)) {
		r.fail("a length beyond the record")
		return 0
	}
	return int(n)
}

func (r *Reader) String() string {
	n := r.Len(1)
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// Rest is what is left unread (another record's encoding that follows), and leaves the
// reader at its end.
func (r *Reader) Rest() []byte {
	b := r.b
	r.b = nil
	return b
}

// More reports whether bytes are left: a record whose newer fields come last reads them
// only when they are there, so records written before them still decode.
func (r *Reader) More() bool { return r.err == nil && len(r.b) > 0 }

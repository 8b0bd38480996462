package step

import (
	"bytes"

	"github.com/modelgate/modelgate/internal/bincode"

	"github.com/vmihailenco/msgpack/v5"
)

// Account, Command and Result are encoded in binary (binary.go); records written before
// that, and a Result with a View, are msgpack with map keys sorted. Either way equal values
// encode to equal bytes, so replicas can compare states byte for byte.

// Encode is a's deterministic encoding.
func (a *Account) Encode() ([]byte, error) { return a.AppendBinary(nil), nil }

// Decode replaces a with the Account b encodes.
func (a *Account) Decode(b []byte) error {
	*a = Account{}
	if !isBinary(b) {
		return decode(b, a)
	}
	r := bincode.NewReader(b[1:])
	a.readBinary(r)
	return r.Err()
}

// Encode is c's deterministic encoding.
func (c *Command) Encode() ([]byte, error) { return c.AppendBinary(nil), nil }

// Decode replaces c with the Command b encodes.
func (c *Command) Decode(b []byte) error {
	*c = Command{}
	if !isBinary(b) {
		return decode(b, c)
	}
	r := bincode.NewReader(b[1:])
	c.readBinary(r)
	return r.Err()
}

// Encode is r's deterministic encoding.
func (r *Result) Encode() ([]byte, error) {
	if b, ok := r.appendBinary(nil); ok {
		return b, nil
	}
	return encode(r)
}

// Decode replaces r with the Result b encodes.
func (r *Result) Decode(b []byte) error {
	*r = Result{}
	if !isBinary(b) {
		return decode(b, r)
	}
	rd := bincode.NewReader(b[1:])
	r.readBinary(rd)
	return rd.Err()
}

// encode uses msgpack's pooled encoders (a fresh one per call was a measured share of a
// replica's apply); the bytes it returns are a copy, the buffer goes back with the encoder.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(&buf)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decode(b []byte, v any) error {
	return msgpack.Unmarshal(b, v)
}

package step

import (
	"bytes"

	"github.com/vmihailenco/msgpack/v5"
)

// The encodings are msgpack with map keys sorted: equal values encode to equal bytes, so
// replicas can compare states byte for byte.

// Encode is a's deterministic encoding.
func (a *Account) Encode() ([]byte, error) { return encode(a) }

// Decode replaces a with the Account b encodes.
func (a *Account) Decode(b []byte) error { *a = Account{}; return decode(b, a) }

// Encode is c's deterministic encoding.
func (c *Command) Encode() ([]byte, error) { return encode(c) }

// Decode replaces c with the Command b encodes.
func (c *Command) Decode(b []byte) error { *c = Command{}; return decode(b, c) }

// Encode is r's deterministic encoding.
func (r *Result) Encode() ([]byte, error) { return encode(r) }

// Decode replaces r with the Result b encodes.
func (r *Result) Decode(b []byte) error { *r = Result{}; return decode(b, r) }

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

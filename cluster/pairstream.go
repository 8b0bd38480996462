package cluster

import (
	"bufio"
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// A state machine over the node's store snapshots a key space as a stream of pairs:
//
//	magic (a string naming the format), then key and value (bin) per pair, then nil
//
// The closing nil tells a complete snapshot from a cut-off one.

// WritePairs writes magic, every pair scan hands over, and the closing nil to w.
func WritePairs(w io.Writer, magic string, scan func(pair func(k, v []byte) error) error) error {
	bw := bufio.NewWriter(w)
	enc := msgpack.NewEncoder(bw)
	err := enc.EncodeString(magic)
	if err == nil {
		err = scan(func(k, v []byte) error {
			if err := enc.EncodeBytes(k); err != nil {
				return err
			}
			return enc.EncodeBytes(v)
		})
	}
	if err == nil {
		err = enc.EncodeNil()
	}
	if err == nil {
		err = bw.Flush()
	}
	return err
}

// PairReader reads a stream WritePairs wrote.
type PairReader struct{ dec *msgpack.Decoder }

// ReadPairs checks that r starts with magic and returns a reader of its pairs.
func ReadPairs(r io.Reader, magic string) (*PairReader, error) {
	dec := msgpack.NewDecoder(bufio.NewReader(r))
	got, err := dec.DecodeString()
	if err != nil || got != magic {
		return nil, fmt.Errorf("it starts with %q, not %q (%v)", got, magic, err)
	}
	return &PairReader{dec: dec}, nil
}

// Each calls put for every pair up to the closing nil; a stream cut off before it is an
// error.
func (p *PairReader) Each(put func(k, v []byte) error) error {
	for {
		code, err := p.dec.PeekCode()
		if err != nil {
			return fmt.Errorf("snapshot cut off: %w", err)
		}
		if code == msgpcode.Nil {
			return nil
		}
		k, err := p.dec.DecodeBytes()
		if err != nil {
			return err
		}
		v, err := p.dec.DecodeBytes()
		if err != nil {
			return err
		}
		if err := put(k, v); err != nil {
			return err
		}
	}
}

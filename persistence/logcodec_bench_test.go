package persistence

import (
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// BenchmarkLogValue: encoding and decoding one entry's value, the varint layout against the
// msgpack map it replaced.
func BenchmarkLogValue(b *testing.B) {
	e := newLogWorkload(1).next()
	codes := [5]int64{0, 1, 2, -1, -1}
	dec := &logDecoder{account: e.AccountID, strs: []string{e.KeyID, e.Model, e.Route}}
	b.Run("encode/varint", func(b *testing.B) {
		buf := make([]byte, 0, 96)
		for b.Loop() {
			buf = appendLogValue(buf[:0], &e, &codes)
		}
	})
	b.Run("encode/msgpack", func(b *testing.B) {
		for b.Loop() {
			if _, err := msgpack.Marshal(&e); err != nil {
				b.Fatal(err)
			}
		}
	})
	v := appendLogValue(nil, &e, &codes)
	old, _ := msgpack.Marshal(&e)
	b.Run("decode/varint", func(b *testing.B) {
		for b.Loop() {
			var got LogEntry
			if err := decodeLogValue(v, &got, dec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode/msgpack", func(b *testing.B) {
		for b.Loop() {
			var got LogEntry
			if err := decodeLogValue(old, &got, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package persistence

import (
	"reflect"
	"testing"
)

// FuzzLogValue: any bytes decode to an entry or an error, never a panic; an entry the value
// layout wrote decodes back to itself.
func FuzzLogValue(f *testing.F) {
	e := entry("acct_a", "req_0123456789abcdef01234567", 0)
	f.Add(appendLogValue(nil, &e, &[5]int64{-1, -1, -1, -1, -1}))
	f.Add(appendLogValue(nil, &e, &[5]int64{0, 1, 2, -1, -1}))
	f.Add([]byte{0x81, 0xa3, 'r', 'i', 'd', 0xa1, 'x'}) // the old layout
	f.Fuzz(func(t *testing.T, v []byte) {
		var got LogEntry
		if err := decodeLogValue(v, &got, &logDecoder{account: "acct_a", strs: []string{"k0", "k1", "k2"}}); err != nil {
			return
		}
		if len(v) == 0 || v[0] != logValueV1 {
			return // the old layout: msgpack's to judge
		}
		again := appendLogValue(nil, &got, &[5]int64{-1, -1, -1, -1, -1})
		var back LogEntry
		if err := decodeLogValue(again, &back, nil); err != nil || !reflect.DeepEqual(back, got) {
			t.Fatalf("%+v re-encoded reads %+v, %v", got, back, err)
		}
	})
}

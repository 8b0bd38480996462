package step

import (
	"bytes"
	"errors"
	"math/rand"
	"reflect"
	"testing"
	"testing/quick"

	"github.com/modelgate/modelgate/internal/bincode"
)

// random fills a value of v's type with random contents in every field (slices, pointers
// and nested structs included), so a field the binary codec forgets cannot survive the
// round trip.
func random[T any](t *testing.T, rng *rand.Rand) T {
	t.Helper()
	var zero T
	v, ok := quick.Value(reflect.TypeOf(zero), rng)
	if !ok {
		t.Fatalf("cannot make a random %T", zero)
	}
	return v.Interface().(T)
}

// sameAsMsgpack fails unless a and b have the same msgpack encoding: msgpack (by its field
// tags, with reflection) is the reference for what a record holds.
func sameAsMsgpack(t *testing.T, what string, a, b any) {
	t.Helper()
	ea, err := encode(a)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := encode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ea, eb) {
		t.Fatalf("%s: the binary round trip lost or changed a field\nbefore %+v\nafter  %+v", what, a, b)
	}
}

// Every field of Account, Command and Result survives the binary encoding, the encoding is
// deterministic, and a record in the earlier msgpack encoding still decodes.
func TestBinaryEncodingsKeepEveryField(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	cases := []struct {
		name      string
		roundTrip func(t *testing.T)
	}{
		{"account", func(t *testing.T) {
			a := random[Account](t, rng)
			b := a.AppendBinary(nil)
			var got Account
			if err := got.Decode(b); err != nil {
				t.Fatal(err)
			}
			sameAsMsgpack(t, "account", &a, &got)
			if again := got.AppendBinary(nil); !bytes.Equal(again, b) {
				t.Fatal("the decoded account encodes to other bytes")
			}
			old, _ := encode(&a)
			var fromOld Account
			if err := fromOld.Decode(old); err != nil {
				t.Fatal(err)
			}
			sameAsMsgpack(t, "account from msgpack", &a, &fromOld)
		}},
		{"command", func(t *testing.T) {
			c := random[Command](t, rng)
			b, _ := c.Encode()
			var got Command
			if err := got.Decode(b); err != nil {
				t.Fatal(err)
			}
			sameAsMsgpack(t, "command", &c, &got)
			old, _ := encode(&c)
			var fromOld Command
			if err := fromOld.Decode(old); err != nil {
				t.Fatal(err)
			}
			sameAsMsgpack(t, "command from msgpack", &c, &fromOld)
		}},
		{"result", func(t *testing.T) {
			r := random[Result](t, rng)
			r.View = nil
			b, _ := r.Encode()
			if b[0] != binaryV1 {
				t.Fatal("a result without a view is not binary")
			}
			var got Result
			if err := got.Decode(b); err != nil {
				t.Fatal(err)
			}
			sameAsMsgpack(t, "result", &r, &got)
		}},
		{"result with a view", func(t *testing.T) {
			r := random[Result](t, rng)
			r.View = &State{InFlight: 3}
			b, _ := r.Encode()
			var got Result
			if err := got.Decode(b); err != nil {
				t.Fatal(err)
			}
			sameAsMsgpack(t, "result with a view", &r, &got)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for range 200 {
				tc.roundTrip(t)
			}
		})
	}
}

// A truncated or padded binary record is refused, never half read.
func TestABrokenBinaryRecordIsRefused(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	a := random[Account](t, rng)
	b := a.AppendBinary(nil)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"cut short", b[:len(b)/2]},
		{"only the version", b[:1]},
		{"bytes after it", append(append([]byte{}, b...), 0)},
		{"a length beyond the record", []byte{binaryV1, 0xff, 0xff, 0xff, 0x7f}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got Account
			if err := got.Decode(tc.b); !errors.Is(err, bincode.ErrMalformed) {
				t.Fatalf("Decode = %v, want ErrMalformed", err)
			}
		})
	}
}

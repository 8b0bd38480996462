package persistence

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestMeta(t *testing.T) {
	s, _ := openStore(t)
	if _, err := s.GetMeta("schema"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "schema") {
		t.Fatalf("GetMeta(missing) err = %v, want ErrNotFound naming it", err)
	}
	for _, v := range [][]byte{[]byte("v1"), []byte("v2\x00binary"), {}} {
		if err := s.SetMeta("schema", v); err != nil {
			t.Fatalf("SetMeta(%q): %v", v, err)
		}
		got := must(s.GetMeta("schema"))(t)
		if got == nil || !bytes.Equal(got, v) {
			t.Errorf("GetMeta = %#v, want %#v", got, v)
		}
	}

	// The returned slice is the caller's own.
	if err := s.SetMeta("m", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	got := must(s.GetMeta("m"))(t)
	got[0] = 'X'
	if again := must(s.GetMeta("m"))(t); string(again) != "abc" {
		t.Errorf("mutating a GetMeta result changed the store: %q", again)
	}
}

func TestMetaValidation(t *testing.T) {
	s, _ := openStore(t)
	for _, tc := range []struct {
		name, key string
		v         []byte
	}{
		{"empty name", "", []byte("x")},
		{"space in name", "a b", []byte("x")},
		{"long name", strings.Repeat("n", 129), []byte("x")},
		{"value too large", "big", make([]byte, 1<<20+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.SetMeta(tc.key, tc.v); !errors.Is(err, ErrInvalid) {
				t.Fatalf("SetMeta err = %v, want ErrInvalid", err)
			}
			if _, err := s.GetMeta(tc.key); err == nil {
				t.Errorf("GetMeta found a value after rejected SetMeta")
			}
		})
	}
}

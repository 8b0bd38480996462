package persistence

import (
	"errors"
	"slices"
	"testing"
)

// Every write that changes what a secret's lookup answers, once it has returned, is what the
// next LookupKey gives, though the lookup before it put the old answer in the cache.
func TestLookupKeyAfterEveryWriteThatChangesIt(t *testing.T) {
	type want struct {
		revoked  bool
		models   []string
		disabled bool // LookupKey refuses: the account is disabled
	}
	cases := []struct {
		name  string
		write func(t *testing.T, s *Store, a Account, k Key, secret string)
		want  want
	}{
		{"revoked", func(t *testing.T, s *Store, a Account, k Key, secret string) {
			must(s.RevokeKey(k.ID))(t)
		}, want{revoked: true, models: []string{}}},
		{"models restricted", func(t *testing.T, s *Store, a Account, k Key, secret string) {
			must(s.UpdateKey(k.ID, KeyUpdate{Models: &[]string{"chat"}}))(t)
		}, want{models: []string{"chat"}}},
		{"account disabled", func(t *testing.T, s *Store, a Account, k Key, secret string) {
			must(s.SetAccountDisabled(a.ID, true))(t)
		}, want{disabled: true}},
		{"metadata replaced by an older view (a replica's snapshot recovery)", func(t *testing.T, s *Store, a Account, k Key, secret string) {
			v, err := s.ViewMeta()
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			must(s.RevokeKey(k.ID))(t)
			if got, err := s.LookupKey(secret); err != nil || got.RevokedAt == 0 {
				t.Fatalf("after the revocation: %+v, %v", got, err)
			}
			err = s.ReplaceMeta(nil, func(put func(k, v []byte) error) error {
				return v.Scan(func(k, val []byte) error { return put(k, val) })
			})
			if err != nil {
				t.Fatal(err)
			}
		}, want{models: []string{}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := openStore(t)
			a := must(s.CreateAccount("ada@example.com", "pro"))(t)
			k, secret, err := s.CreateKey(a.ID, KeySpec{Name: "k"})
			if err != nil {
				t.Fatal(err)
			}
			if got := must(s.LookupKey(secret))(t); got.ID != k.ID {
				t.Fatalf("LookupKey = %+v, want key %s", got, k.ID)
			}
			if len(s.keys.m) != 1 {
				t.Fatal("a lookup did not keep the key in the cache")
			}
			c.write(t, s, a, k, secret)
			got, err := s.LookupKey(secret)
			if c.want.disabled {
				if err == nil || !errors.Is(err, ErrDisabled) {
					t.Fatalf("LookupKey after the write = %+v, %v; want the account's refusal", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got.RevokedAt != 0) != c.want.revoked || !slices.Equal(got.Models, c.want.models) {
				t.Errorf("LookupKey after the write = revoked at %d, models %q; want revoked %t, models %q", got.RevokedAt, got.Models, c.want.revoked, c.want.models)
			}
		})
	}
}

// A lookup that began before a write and finishes after it keeps nothing.
func TestALookupThatRacedAWriteKeepsNothing(t *testing.T) {
	s, _ := openStore(t)
	a := must(s.CreateAccount("ada@example.com", "pro"))(t)
	k, secret, err := s.CreateKey(a.ID, KeySpec{Name: "k"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, gen := s.keys.get([32]byte{})
	must(s.RevokeKey(k.ID))(t)
	s.keys.put([32]byte{1}, k, gen) // the lookup's cache half, after the write
	if len(s.keys.m) != 0 {
		t.Fatal("the cache kept a key read before its revocation")
	}
	if got := must(s.LookupKey(secret))(t); got.RevokedAt == 0 {
		t.Error("LookupKey gives the key unrevoked")
	}
}

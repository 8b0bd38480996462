package persistence

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// metaScan is every pair of the metadata key space and of raw, as "key=value" in hex-free
// quoted form, in key order.
func metaScan(t *testing.T, s *Store, raw ...[]byte) []string {
	t.Helper()
	v := must(s.ViewMeta(raw...))(t)
	defer v.Close()
	var out []string
	if err := v.Scan(func(k, val []byte) error {
		out = append(out, fmt.Sprintf("%q=%q", k, val))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// applyAll applies fns to one batch and commits it, returning each one's error.
func applyAll(t *testing.T, s *Store, fns ...func(*MetaBatch) error) []error {
	t.Helper()
	errs := make([]error, len(fns))
	if err := s.UpdateMeta(func(b *MetaBatch) error {
		for i, fn := range fns {
			errs[i] = fn(b)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return errs
}

// Two proposals made against the same view (both pass the proposer's checks), then applied
// in one batch: the apply half sees the first one's writes and refuses the second with the
// error the single node gives, writing nothing for it.
func TestApplyHalfRechecksWhatMustBeUnique(t *testing.T) {
	s, _ := openStore(t)
	owner := must(s.CreateAccount("owner@example.com", "pro"))(t)
	first := must(s.PrepareAccount("Race@Example.com", "pro"))(t)
	second := must(s.PrepareAccount("race@example.com", "free"))(t)
	imp1 := must(s.PrepareImport(owner.ID, KeySpec{Name: "a"}, importedUser))(t)
	imp2 := must(s.PrepareImport(owner.ID, KeySpec{Name: "b"}, importedUser))(t)
	// A key of an account created earlier in the same batch: the batch reads its own writes.
	early, _, err := s.PrepareKey(first.Account.ID, KeySpec{Name: "early"})
	if err != nil {
		t.Fatal(err)
	}

	errs := applyAll(t, s,
		func(b *MetaBatch) error { _, err := b.CreateAccount(first); return err },
		func(b *MetaBatch) error { _, err := b.CreateAccount(second); return err },
		func(b *MetaBatch) error { _, err := b.InsertKey(imp1); return err },
		func(b *MetaBatch) error { _, err := b.InsertKey(imp2); return err },
		func(b *MetaBatch) error { _, err := b.InsertKey(early); return err },
	)
	var taken *EmailTakenError
	if !errors.As(errs[1], &taken) || taken.AccountID != first.Account.ID || taken.Email != "race@example.com" {
		t.Errorf("second create: %v, want *EmailTakenError naming %s", errs[1], first.Account.ID)
	}
	var pe *Error
	if !errors.As(errs[3], &pe) || pe.Kind != ErrConflict || pe.Field != "import_key" || pe.Msg != "secret is already registered" {
		t.Errorf("second import: %#v, want the import_key conflict", errs[3])
	}
	for _, i := range []int{0, 2, 4} {
		if errs[i] != nil {
			t.Errorf("command %d: %v", i, errs[i])
		}
	}
	if _, err := s.GetAccount(second.Account.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("the refused account was stored: %v", err)
	}
	if got := must(s.ListKeys(owner.ID))(t); len(got) != 1 || got[0].ID != imp1.Key.ID {
		t.Errorf("owner's keys = %+v, want only %s", got, imp1.Key.ID)
	}
	if got := must(s.ListKeys(first.Account.ID))(t); len(got) != 1 || got[0].ID != early.Key.ID {
		t.Errorf("new account's keys = %+v, want %s", got, early.Key.ID)
	}
}

// The apply half checks a command as a replica must: a value no proposer makes is refused
// as invalid and writes nothing.
func TestApplyHalfRefusesMalformedCommands(t *testing.T) {
	s, _ := openStore(t)
	owner := must(s.CreateAccount("owner@example.com", "pro"))(t)
	goodAcct := must(s.PrepareAccount("new@example.com", "pro"))(t)
	goodKey, _, err := s.PrepareKey(owner.ID, KeySpec{Name: "k"})
	if err != nil {
		t.Fatal(err)
	}
	key := must2Key(t, s, owner.ID)
	before := metaScan(t, s)

	acct := func(edit func(*NewAccount)) func(*MetaBatch) error {
		c := goodAcct
		edit(&c)
		return func(b *MetaBatch) error { _, err := b.CreateAccount(c); return err }
	}
	newKey := func(edit func(*NewKey)) func(*MetaBatch) error {
		c := goodKey
		edit(&c)
		return func(b *MetaBatch) error { _, err := b.InsertKey(c); return err }
	}
	for _, tc := range []struct {
		name  string
		apply func(*MetaBatch) error
		field string
	}{
		{"account without an order", acct(func(c *NewAccount) { c.Order = 0 }), "id"},
		{"account id without its prefix", acct(func(c *NewAccount) { c.Account.ID = "x" }), "id"},
		{"account e-mail with a NUL", acct(func(c *NewAccount) { c.Account.Email = "a\x00@b" }), "email"},
		{"account without a plan", acct(func(c *NewAccount) { c.Account.Plan = "" }), "plan"},
		{"key hash not hex", newKey(func(c *NewKey) { c.SecretHash = strings.Repeat("G", 64) }), "key"},
		{"key hash upper-case", newKey(func(c *NewKey) { c.SecretHash = strings.ToUpper(c.SecretHash) }), "key"},
		{"key born revoked", newKey(func(c *NewKey) { c.Key.RevokedAt = 1 }), "key"},
		{"key named by spaces", newKey(func(c *NewKey) { c.Key.Name = "  " }), "name"},
		{"plan with a control character", func(b *MetaBatch) error {
			_, err := b.SetAccountPlan(PlanChange{AccountID: owner.ID, Plan: "p\n"})
			return err
		}, "plan"},
		{"revocation at time 0", func(b *MetaBatch) error {
			_, err := b.RevokeKey(KeyRevocation{KeyID: key.ID})
			return err
		}, "at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := applyAll(t, s, tc.apply)[0]
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != ErrInvalid || pe.Field != tc.field {
				t.Fatalf("err = %#v, want invalid naming %q", err, tc.field)
			}
			if after := metaScan(t, s); !reflect.DeepEqual(after, before) {
				t.Fatalf("a refused command changed the store")
			}
		})
	}
}

func must2Key(t *testing.T, s *Store, acct string) Key {
	t.Helper()
	k, _ := must2(t, s, acct, KeySpec{Name: "revocable"})
	return k
}

// ReplaceMeta makes a store's metadata exactly another's view: keys the source lacks are
// gone, other namespaces are untouched, and a pair outside the metadata changes nothing.
func TestReplaceMetaGivesExactlyTheViewsContents(t *testing.T) {
	raw := []byte("metashard/")
	src, _ := openStore(t)
	acct := must(src.CreateAccount("src@example.com", "pro"))(t)
	k, secret := must2(t, src, acct.ID, KeySpec{Name: "k", Models: []string{"m"}})
	must(src.RevokeKey(k.ID))(t)
	if err := src.SetRaw([]byte("metashard/applied"), []byte{7}); err != nil {
		t.Fatal(err)
	}

	dst, _ := openStore(t)
	gone := must(dst.CreateAccount("gone@example.com", "free"))(t)
	must2(t, dst, gone.ID, KeySpec{Name: "gone"})
	for _, kv := range [][2]string{{"metashard/old", "x"}, {"asset/keep", "y"}} {
		if err := dst.SetRaw([]byte(kv[0]), []byte(kv[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := dst.SetMeta("keep", []byte("z")); err != nil {
		t.Fatal(err)
	}

	v := must(src.ViewMeta(raw))(t)
	copyView := func(put func(k, v []byte) error) error {
		return v.Scan(func(k, val []byte) error { return put(bytes.Clone(k), bytes.Clone(val)) })
	}
	if err := dst.ReplaceMeta([][]byte{raw}, copyView); err != nil {
		t.Fatal(err)
	}
	v.Close()
	if got, want := metaScan(t, dst, raw), metaScan(t, src, raw); !reflect.DeepEqual(got, want) || len(want) != 7 {
		t.Fatalf("after replace:\n%v\nwant (7 pairs)\n%v", got, want)
	}
	if got, err := dst.LookupKey(secret); err != nil || got.ID != k.ID || got.RevokedAt == 0 {
		t.Errorf("lookup in the replaced store = %+v, %v", got, err)
	}
	if got, err := dst.LookupKeyHash(secretHash(secret)); err != nil || got.ID != k.ID {
		t.Errorf("lookup by hash = %+v, %v", got, err)
	}
	if _, err := dst.GetAccount(gone.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("an account the snapshot lacks survived: %v", err)
	}
	if got := must(dst.GetRaw([]byte("asset/keep")))(t); string(got) != "y" {
		t.Errorf("asset/keep = %q", got)
	}
	if got := must(dst.GetMeta("keep"))(t); string(got) != "z" {
		t.Errorf("meta keep = %q", got)
	}

	before := metaScan(t, dst, raw)
	err := dst.ReplaceMeta([][]byte{raw}, func(put func(k, v []byte) error) error {
		if err := put([]byte("acct/acct_x"), []byte{0x80}); err != nil {
			return err
		}
		return put([]byte("log/x"), nil)
	})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `"log/x" is not in the metadata key space`) {
		t.Fatalf("replace with a log key: %v", err)
	}
	if after := metaScan(t, dst, raw); !reflect.DeepEqual(after, before) {
		t.Error("a refused replace changed the store")
	}
}

func TestMetaNamespacesAreChecked(t *testing.T) {
	s, _ := openStore(t)
	for _, tc := range []struct {
		raw  string
		want string
	}{
		{"key/", `in the store's own namespace "key/"`},
		{"metashard", `must end in '/'`},
	} {
		if _, err := s.ViewMeta([]byte(tc.raw)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ViewMeta(%q) = %v, want %q", tc.raw, err, tc.want)
		}
	}
	if _, err := s.LookupKeyHash("nothex"); !errors.Is(err, ErrNotFound) {
		t.Errorf("LookupKeyHash of a malformed hash: %v", err)
	}
}

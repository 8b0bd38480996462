package persistence

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// openStore opens a Store in a fresh temp dir and closes it at test end.
func openStore(t testing.TB) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pebble")
	s, err := Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// reopen closes s and opens the same directory again.
func reopen(t testing.TB, s *Store, dir string) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s2, err := Open(dir)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2
}

// must turns a (value, error) pair into the value, failing the test on
// error: must(s.GetAccount(id))(t).
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func TestOpenCreatesNestedDirAndCloseIsIdempotent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "pebble")
	s, err := Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*")); len(m) == 0 {
		t.Fatalf("no Pebble MANIFEST directly in %s", dir)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := Open(""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Open(\"\") = %v, want ErrInvalid", err)
	}
}

func TestPrefixUpper(t *testing.T) {
	for _, tc := range []struct{ in, want []byte }{
		{[]byte("acct/"), []byte("acct0")},
		{[]byte("a\xff"), []byte("b")},
		{[]byte("\xff\xff"), nil},
	} {
		if got := prefixUpper(tc.in); !bytes.Equal(got, tc.want) {
			t.Errorf("prefixUpper(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	s, dir := openStore(t)
	a := must(s.CreateAccount("ada@example.com", "free"))(t)
	a = must(s.SetAccountPlan(a.ID, "pro"))(t)
	k1, sec1, err := s.CreateKey(a.ID, KeySpec{Name: "one", Models: []string{"m"}, ZDR: true})
	if err != nil {
		t.Fatal(err)
	}
	k2 := must(s.ImportKey(a.ID, KeySpec{Name: "two"}, importedUser))(t)
	k1 = must(s.RevokeKey(k1.ID))(t)
	logs := []LogEntry{entry(a.ID, "r1", 0), entry(a.ID, "r2", 0), entry(a.ID, "r3", time.Second)}
	if err := s.AppendLog(logs); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMeta("schema", []byte("1")); err != nil {
		t.Fatal(err)
	}

	s = reopen(t, s, dir)

	if got := must(s.GetAccount(a.ID))(t); got != a {
		t.Errorf("account = %+v, want %+v", got, a)
	}
	if got := must(s.ListAccounts())(t); !reflect.DeepEqual(got, []Account{a}) {
		t.Errorf("ListAccounts = %+v", got)
	}
	if got := must(s.ListKeys(a.ID))(t); !reflect.DeepEqual(got, []Key{k1, k2}) {
		t.Errorf("ListKeys = %+v, want %+v", got, []Key{k1, k2})
	}
	if got := must(s.LookupKey(sec1))(t); !reflect.DeepEqual(got, k1) || got.RevokedAt == 0 {
		t.Errorf("LookupKey(revoked) = %+v, want %+v", got, k1)
	}
	if got := must(s.LookupKey(importedUser))(t); !reflect.DeepEqual(got, k2) {
		t.Errorf("LookupKey(imported) = %+v, want %+v", got, k2)
	}
	if got := must(s.ListLog(a.ID, time.Time{}, time.Time{}, 0))(t); !reflect.DeepEqual(got, logs) {
		t.Errorf("ListLog = %+v, want %+v", got, logs)
	}
	if got := must(s.GetMeta("schema"))(t); string(got) != "1" {
		t.Errorf("GetMeta = %q", got)
	}
	// The duplicate-secret index survives too.
	if _, err := s.ImportKey(a.ID, KeySpec{Name: "dup"}, importedUser); !errors.Is(err, ErrConflict) {
		t.Errorf("duplicate import after reopen: err = %v, want ErrConflict", err)
	}
	// Keys created after reopen still list after the old ones.
	k3, _, err := s.CreateKey(a.ID, KeySpec{Name: "three"})
	if err != nil {
		t.Fatal(err)
	}
	if got := must(s.ListKeys(a.ID))(t); len(got) != 3 || got[2].ID != k3.ID {
		t.Errorf("ListKeys after reopen+create = %+v", got)
	}
}

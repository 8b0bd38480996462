package persistence

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	secretRe = regexp.MustCompile(`^sk-token-[A-Za-z0-9]{48}$`)
	keyIDRe  = regexp.MustCompile(`^key_[A-Za-z0-9]{20}$`)
)

func newAccount(t testing.TB, s *Store) Account {
	t.Helper()
	return must(s.CreateAccount("ops@example.com", "pro"))(t)
}

func TestCreateKeyAndLookup(t *testing.T) {
	s, _ := openStore(t)
	acct := newAccount(t, s)
	models := []string{"gpt-x", "claude-y"}
	before := time.Now().Unix()
	k, secret, err := s.CreateKey(acct.ID, KeySpec{Name: "ci", Models: models, ZDR: true})
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	after := time.Now().Unix()
	models[0] = "mutated" // the stored key must not alias the caller's slice

	if !secretRe.MatchString(secret) {
		t.Errorf("secret %q does not match %s", secret, secretRe)
	}
	if !keyIDRe.MatchString(k.ID) {
		t.Errorf("ID %q does not match %s", k.ID, keyIDRe)
	}
	if k.CreatedAt < before || k.CreatedAt > after {
		t.Errorf("CreatedAt = %d, want in [%d, %d]", k.CreatedAt, before, after)
	}
	want := Key{
		ID:        k.ID,
		AccountID: acct.ID,
		Name:      "ci",
		Models:    []string{"gpt-x", "claude-y"},
		ZDR:       true,
		Hint:      "sk-token-…" + secret[len(secret)-4:],
		CreatedAt: k.CreatedAt,
	}
	if !reflect.DeepEqual(k, want) {
		t.Errorf("CreateKey = %+v, want %+v", k, want)
	}
	if got := must(s.LookupKey(secret))(t); !reflect.DeepEqual(got, want) {
		t.Errorf("LookupKey = %+v, want %+v", got, want)
	}
	if got := must(s.GetKey(k.ID))(t); !reflect.DeepEqual(got, want) {
		t.Errorf("GetKey = %+v, want %+v", got, want)
	}

	// Unrestricted keys come back with an empty, non-nil model list.
	k2, secret2, err := s.CreateKey(acct.ID, KeySpec{Name: "any"})
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	if got := must(s.LookupKey(secret2))(t); got.Models == nil || len(got.Models) != 0 || got.ID != k2.ID {
		t.Errorf("LookupKey(unrestricted) = %#v", got)
	}
	if secret2 == secret {
		t.Error("two CreateKey calls returned the same secret")
	}
}

func TestLookupKeyUnknown(t *testing.T) {
	s, _ := openStore(t)
	acct := newAccount(t, s)
	_, secret := must2(t, s, acct.ID, KeySpec{Name: "x"})
	for _, tc := range []struct{ name, secret string }{
		{"empty", ""},
		{"short", "sk-token-abc"},
		{"one char off", secret[:len(secret)-1] + flip(secret[len(secret)-1])},
		{"prefix only of real secret", secret[:30]},
		{"huge", "sk-token-" + strings.Repeat("a", 10000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.LookupKey(tc.secret)
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
			if tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
				t.Errorf("error message leaks the secret: %v", err)
			}
		})
	}
}

// must2 creates a key and returns it with its secret.
func must2(t testing.TB, s *Store, acct string, spec KeySpec) (Key, string) {
	t.Helper()
	k, secret, err := s.CreateKey(acct, spec)
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	return k, secret
}

func flip(c byte) string {
	if c == 'a' {
		return "b"
	}
	return "a"
}

func TestCreateKeyValidation(t *testing.T) {
	s, _ := openStore(t)
	acct := newAccount(t, s)
	for _, tc := range []struct {
		name    string
		acct    string
		spec    KeySpec
		wantErr error
		field   string
	}{
		{"unknown account", "acct_nope", KeySpec{Name: "x"}, ErrNotFound, "acct_nope"},
		{"empty name", acct.ID, KeySpec{}, ErrInvalid, "name"},
		{"blank name", acct.ID, KeySpec{Name: " \t"}, ErrInvalid, "name"},
		{"name 101 chars", acct.ID, KeySpec{Name: strings.Repeat("é", 101)}, ErrInvalid, "name"},
		{"name control char", acct.ID, KeySpec{Name: "a\x1bb"}, ErrInvalid, "name"},
		{"empty model", acct.ID, KeySpec{Name: "x", Models: []string{"m", ""}}, ErrInvalid, "models[1]"},
		{"model with space", acct.ID, KeySpec{Name: "x", Models: []string{"m 1"}}, ErrInvalid, "models[0]"},
		{"duplicate model", acct.ID, KeySpec{Name: "x", Models: []string{"m", "n", "m"}}, ErrInvalid, "models[2]"},
		{"too many models", acct.ID, KeySpec{Name: "x", Models: manyModels(257)}, ErrInvalid, "models"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, secret, err := s.CreateKey(tc.acct, tc.spec)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("err %q does not name %q", err, tc.field)
			}
			if !reflect.DeepEqual(k, Key{}) || secret != "" {
				t.Errorf("returned %+v, %q; want zero values", k, secret)
			}
		})
	}
	if got := must(s.ListKeys(acct.ID))(t); len(got) != 0 {
		t.Errorf("invalid CreateKey calls stored %d keys", len(got))
	}
	// The boundary itself is fine: 100 characters (200 bytes).
	k, _ := must2(t, s, acct.ID, KeySpec{Name: strings.Repeat("é", 100)})
	if k.Name != strings.Repeat("é", 100) {
		t.Errorf("Name = %q", k.Name)
	}
}

func manyModels(n int) []string {
	m := make([]string, n)
	for i := range m {
		m[i] = "model-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	return m
}

func TestRevokeKey(t *testing.T) {
	s, _ := openStore(t)
	acct := newAccount(t, s)
	k, secret := must2(t, s, acct.ID, KeySpec{Name: "x"})

	before := time.Now().Unix()
	r := must(s.RevokeKey(k.ID))(t)
	after := time.Now().Unix()
	if r.RevokedAt < before || r.RevokedAt > after {
		t.Fatalf("RevokedAt = %d, want in [%d, %d]", r.RevokedAt, before, after)
	}
	want := k
	want.RevokedAt = r.RevokedAt
	if !reflect.DeepEqual(r, want) {
		t.Errorf("RevokeKey = %+v, want %+v", r, want)
	}
	if got := must(s.LookupKey(secret))(t); !reflect.DeepEqual(got, want) {
		t.Errorf("LookupKey after revoke = %+v, want %+v", got, want)
	}
	// Idempotent: a second revoke keeps the original timestamp.
	if again := must(s.RevokeKey(k.ID))(t); !reflect.DeepEqual(again, want) {
		t.Errorf("second RevokeKey = %+v, want %+v", again, want)
	}
	if _, err := s.RevokeKey("key_nope"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "key_nope") {
		t.Errorf("RevokeKey(unknown) err = %v, want ErrNotFound naming the id", err)
	}
	if _, err := s.GetKey("key_nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetKey(unknown) err = %v, want ErrNotFound", err)
	}
}

func TestImportKey(t *testing.T) {
	s, _ := openStore(t)
	acct := newAccount(t, s)
	const secret = importedUser
	k, err := s.ImportKey(acct.ID, KeySpec{Name: "legacy", Models: []string{"m1"}}, secret)
	if err != nil {
		t.Fatalf("ImportKey: %v", err)
	}
	want := Key{
		ID: k.ID, AccountID: acct.ID, Name: "legacy", Models: []string{"m1"},
		Hint: "sk-user-…s0Ya", CreatedAt: k.CreatedAt,
	}
	if !keyIDRe.MatchString(k.ID) || k.CreatedAt == 0 || !reflect.DeepEqual(k, want) {
		t.Errorf("ImportKey = %+v, want %+v", k, want)
	}
	if got := must(s.LookupKey(secret))(t); !reflect.DeepEqual(got, want) {
		t.Errorf("LookupKey = %+v, want %+v", got, want)
	}

	// sk-token- secrets can be imported too, with the matching hint.
	tok := importedToken
	k2 := must(s.ImportKey(acct.ID, KeySpec{Name: "t"}, tok))(t)
	if k2.Hint != "sk-token-…v0Dj" {
		t.Errorf("Hint = %q, want %q", k2.Hint, "sk-token-…v0Dj")
	}

	// Duplicates conflict, whichever account tries.
	other := must(s.CreateAccount("other@example.com", "free"))(t)
	for _, a := range []string{acct.ID, other.ID} {
		_, err := s.ImportKey(a, KeySpec{Name: "again"}, secret)
		if !errors.Is(err, ErrConflict) {
			t.Errorf("duplicate import into %s: err = %v, want ErrConflict", a, err)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("conflict error leaks the secret: %v", err)
		}
	}
	if got := must(s.ListKeys(other.ID))(t); len(got) != 0 {
		t.Errorf("conflicting import stored a key: %+v", got)
	}
	if got := must(s.LookupKey(secret))(t); got.ID != k.ID {
		t.Errorf("after conflict LookupKey = %s, want %s", got.ID, k.ID)
	}
}

func TestImportKeyRejectsBadInputWritingNothing(t *testing.T) {
	s, _ := openStore(t) // shared: only the account may ever be in it
	acct := newAccount(t, s)
	for _, tc := range []struct {
		name, secret string
		spec         KeySpec
		acct         string // "" = the real account
		wantErr      error
	}{
		{"no prefix", "pk-user-abcdefghijklmnop", KeySpec{Name: "x"}, "", ErrInvalid},
		{"wrong case prefix", "SK-USER-abcdefghijklmnop", KeySpec{Name: "x"}, "", ErrInvalid},
		{"19 chars", "sk-user-abcdefghijk", KeySpec{Name: "x"}, "", ErrInvalid},
		{"space", "sk-user-abcdef ghijklmnop", KeySpec{Name: "x"}, "", ErrInvalid},
		{"tab", "sk-user-abcdef\tghijklmnop", KeySpec{Name: "x"}, "", ErrInvalid},
		{"non-ascii", "sk-user-abcdéfghijklmnop", KeySpec{Name: "x"}, "", ErrInvalid},
		{"DEL", "sk-user-abcdefghijklmnop\x7f", KeySpec{Name: "x"}, "", ErrInvalid},
		{"too long", "sk-user-" + strings.Repeat("a", 505), KeySpec{Name: "x"}, "", ErrInvalid},
		{"bad spec", importedUser, KeySpec{}, "", ErrInvalid},
		{"a run of one character", "sk-user-" + strings.Repeat("a", 40), KeySpec{Name: "x"}, "", ErrInvalid},
		{"a sequence", "sk-user-0123456789abcdefghijklmnopqrstuvwxyz", KeySpec{Name: "x"}, "", ErrInvalid},
		{"125 bits", "sk-user-Zq8rT2mV9xK4wP7nB3cY6", KeySpec{Name: "x"}, "", ErrInvalid},
		{"unknown account", importedUser, KeySpec{Name: "x"}, "acct_nope", ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.acct == "" {
				tc.acct = acct.ID
			}
			k, err := s.ImportKey(tc.acct, tc.spec, tc.secret)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), tc.secret) {
				t.Errorf("error leaks the secret: %v", err)
			}
			if !reflect.DeepEqual(k, Key{}) {
				t.Errorf("returned %+v, want zero Key", k)
			}
			if got := must(s.ListKeys(acct.ID))(t); len(got) != 0 {
				t.Errorf("stored %d keys", len(got))
			}
			if _, err := s.LookupKey(tc.secret); !errors.Is(err, ErrNotFound) {
				t.Errorf("LookupKey after rejected import: err = %v, want ErrNotFound", err)
			}
			// Only the account, its index entries and the store's index marker.
			s.scan(nil, nil, func(k, _ []byte) (bool, error) {
				if !slices.ContainsFunc([]string{nsAccount, nsAcctOrder, nsAcctEmail, nsSchema}, func(ns string) bool {
					return bytes.HasPrefix(k, []byte(ns))
				}) {
					t.Errorf("unexpected key %q", k)
				}
				return true, nil
			})
		})
	}
}

func TestListKeysOrderAndIsolation(t *testing.T) {
	s, _ := openStore(t)
	a := newAccount(t, s)
	b := must(s.CreateAccount("b@example.com", "free"))(t)
	if got := must(s.ListKeys(a.ID))(t); got == nil || len(got) != 0 {
		t.Fatalf("ListKeys(no keys) = %#v, want empty non-nil", got)
	}
	var want []Key
	for i, name := range []string{"first", "second", "third", "fourth"} {
		k, _ := must2(t, s, a.ID, KeySpec{Name: name})
		must2(t, s, b.ID, KeySpec{Name: "b-" + name})
		if i == 1 {
			k = must(s.RevokeKey(k.ID))(t)
		}
		want = append(want, k)
	}
	got := must(s.ListKeys(a.ID))(t)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ListKeys = %+v\nwant %+v", got, want)
	}
	if _, err := s.ListKeys("acct_nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ListKeys(unknown) err = %v, want ErrNotFound", err)
	}
}

func TestSecretNeverWrittenToDisk(t *testing.T) {
	s, dir := openStore(t)
	acct := newAccount(t, s)
	k, secret := must2(t, s, acct.ID, KeySpec{Name: "x"})
	const imported = importedUser
	k2 := must(s.ImportKey(acct.ID, KeySpec{Name: "y"}, imported))(t)
	must(s.RevokeKey(k.ID))(t)
	// Close (rather than Flush) so every write sits verbatim in the
	// uncompressed WAL: sstable blocks are prefix- and block-compressed, so
	// a bytes.Contains over them would prove little.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	var all bytes.Buffer
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		all.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Sanity: the scan does see the data (ids and the hash index are there).
	for _, id := range []string{k.ID, k2.ID, string(keyHashKey(secret)), string(keyHashKey(imported))} {
		if !bytes.Contains(all.Bytes(), []byte(id)) {
			t.Fatalf("%s not found on disk; the scan is not seeing the data", id)
		}
	}
	for _, sec := range []string{secret, imported, secret[len("sk-token-"):], imported[len("sk-user-"):]} {
		if bytes.Contains(all.Bytes(), []byte(sec)) {
			t.Errorf("secret material %q found in the Pebble directory", sec)
		}
	}
}

func TestCreateKeyConcurrent(t *testing.T) {
	s, _ := openStore(t)
	acct := newAccount(t, s)
	const n = 8
	var wg sync.WaitGroup
	keys := make([]Key, n)
	secrets := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			keys[i], secrets[i], errs[i] = s.CreateKey(acct.ID, KeySpec{Name: "k"})
		})
	}
	wg.Wait()
	ids := map[string]bool{}
	secs := map[string]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("goroutine %d: %v", i, errs[i])
		}
		ids[keys[i].ID] = true
		secs[secrets[i]] = true
		if got := must(s.LookupKey(secrets[i]))(t); got.ID != keys[i].ID {
			t.Errorf("LookupKey(secret %d) = %s, want %s", i, got.ID, keys[i].ID)
		}
	}
	if len(ids) != n || len(secs) != n {
		t.Fatalf("%d distinct ids and %d distinct secrets, want %d each", len(ids), len(secs), n)
	}
	listed := must(s.ListKeys(acct.ID))(t)
	if len(listed) != n {
		t.Fatalf("ListKeys returned %d keys, want %d", len(listed), n)
	}
	for _, k := range listed {
		if !ids[k.ID] {
			t.Errorf("ListKeys returned unexpected key %s", k.ID)
		}
	}
}

func BenchmarkLookupKey(b *testing.B) {
	s, _ := openStore(b)
	acct := newAccount(b, s)
	var secrets []string
	for range 100 {
		_, secret := must2(b, s, acct.ID, KeySpec{Name: "bench", Models: []string{"a", "b"}})
		secrets = append(secrets, secret)
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, err := s.LookupKey(secrets[i%len(secrets)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

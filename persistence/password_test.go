package persistence

import "testing"

// The dummy hash an unknown e-mail is checked against costs what a real one costs: the
// parameters HashPassword uses now, and a key of its length.
func TestTheDummyHashHasTheParametersOfARealOne(t *testing.T) {
	real := HashPassword("a real password")
	_, rkey, rmem, rpasses, rlanes, ok := decodeArgon(real)
	if !ok {
		t.Fatalf("a fresh hash %q does not decode", real)
	}
	_, key, mem, passes, lanes, ok := decodeArgon(dummyHash)
	if !ok || mem != rmem || passes != rpasses || lanes != rlanes || len(key) != len(rkey) {
		t.Fatalf("dummy hash: m=%d t=%d p=%d key %d bytes (ok %t); a real one: m=%d t=%d p=%d key %d bytes",
			mem, passes, lanes, len(key), ok, rmem, rpasses, rlanes, len(rkey))
	}
	if VerifyPassword(real, "another password") || !VerifyPassword(real, "a real password") || VerifyPassword("", "a real password") {
		t.Fatal("VerifyPassword does not tell a right password from a wrong one")
	}
}

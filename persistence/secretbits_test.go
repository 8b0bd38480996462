package persistence

import (
	"errors"
	"math"
	"testing"
)

// Strong secrets to import in the package's tests (about 180 bits after the prefix).
const (
	importedUser  = "sk-user-Lq3Vz8Rk2Wm7Tx4Np9Hc6Jb1Fd5Gs0Ya"
	importedToken = "sk-token-Pw4Xe9Ub2Kn7Qr3Mz8Ls5Hy1Tc6Gv0Dj"
)

// TestSecretBits: each character adds log2 of the alphabet of the classes used, except one
// that repeats the one before it or continues a run stepping by one.
func TestSecretBits(t *testing.T) {
	for _, c := range []struct {
		secret string
		bits   float64 // counted characters × log2(alphabet), to 0.01
	}{
		{"", 0},
		{"a", 4.70},            // 1 × log2 26
		{"aaaaaaaaaaaa", 4.70}, // a run of one character is one
		{"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 4.70},
		{"abcdefghijklmnop", 9.40},           // a and b; the rest continue the run
		{"9876543210", 6.64},                 // 9 and 8, log2 10
		{"0123456789abcdefghij", 20.68},      // 0 1 a b: 4 × log2 36
		{"aAbB", 22.80},                      // 4 × log2 52
		{"test-admin-token", 93.73},          // 16 × log2 58
		{"killtest-0123456789abcdef", 73.05}, // 12 × log2 68
		{"Legacy_Key.42~xyZ9", 117.98},       // 18 × log2 94
		{"ImportedSecretValue123", 125.04},   // 21 × log2 62
		{"Zq8rT2mV9xK4wP7nB3cY6", 125.04},    // 21 random base62: not enough
		{"Zq8rT2mV9xK4wP7nB3cY6h", 130.99},   // 22 are
		{"Zq8rT2mV9xK4wP7nB3cY6hJ1", 142.90}, // 24 × log2 62
		{"é€", 10},                           // other characters: 2 × log2 32
	} {
		if got := SecretBits(c.secret); math.Abs(got-c.bits) > 0.005 {
			t.Errorf("SecretBits(%q) = %.3f, want %.2f", c.secret, got, c.bits)
		}
	}
}

// TestCheckSecretBits: under 128 bits is ErrInvalid naming the field and what was checked,
// with the estimate and never the secret.
func TestCheckSecretBits(t *testing.T) {
	if err := CheckSecretBits("import_key", "the secret", "Zq8rT2mV9xK4wP7nB3cY6h"); err != nil {
		t.Fatalf("131 bits refused: %v", err)
	}
	err := CheckSecretBits("import_key", "the secret after sk-user-", "aaaaaaaaaaaa")
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrInvalid) || e.Field != "import_key" ||
		e.Msg != "the secret after sk-user- has about 4 bits of entropy, under the 128 needed: use at least 22 random letters and digits (a repeated character or a run such as abc or 123 adds nothing)" {
		t.Fatalf("%#v", err)
	}
}

package persistence

import "math"

// MinSecretBits is the least estimated entropy a secret chosen outside the gateway must have:
// an imported key (after its sk-user-/sk-token- prefix) and the admin token. Generated ones
// are 40 or more random base62 characters (238 bits and up).
const MinSecretBits = 128

// The character classes SecretBits counts, and how many characters each holds.
const (
	lowerClass = 26
	upperClass = 26
	digitClass = 10
	otherClass = 32 // printable ASCII's punctuation; any other character counts here too
)

// SecretBits estimates a secret's entropy in bits, as a guesser who knows its shape would
// see it: every character adds log2 of the alphabet made of the classes the secret uses
// (lower case 26, upper case 26, digits 10, anything else 32), except a character that
// repeats the one before it (aaaa) or continues a run of neighbours in the character order
// (abcd, 1234, dcba), which adds nothing. It is an upper bound: a word or a date still
// counts as random characters.
func SecretBits(s string) float64 {
	var lower, upper, digit, other bool
	counted := 0
	r := []rune(s)
	for i, c := range r {
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= '0' && c <= '9':
			digit = true
		default:
			other = true
		}
		if !predictable(r, i) {
			counted++
		}
	}
	alphabet := 0
	for _, class := range []struct {
		used bool
		size int
	}{{lower, lowerClass}, {upper, upperClass}, {digit, digitClass}, {other, otherClass}} {
		if class.used {
			alphabet += class.size
		}
	}
	if alphabet == 0 {
		return 0
	}
	return float64(counted) * math.Log2(float64(alphabet))
}

// predictable says r[i] follows from the characters before it: the same as the one before,
// or the third of a run stepping by one (abc, 321).
func predictable(r []rune, i int) bool {
	if i >= 1 && r[i] == r[i-1] {
		return true
	}
	if i >= 2 {
		step := r[i] - r[i-1]
		return (step == 1 || step == -1) && r[i-1]-r[i-2] == step
	}
	return false
}

// CheckSecretBits refuses a secret whose estimated entropy is under MinSecretBits: an
// ErrInvalid naming field (may be "") whose message says what was checked and why, never
// the secret.
func CheckSecretBits(field, what, secret string) error {
	bits := SecretBits(secret)
	if bits >= MinSecretBits {
		return nil
	}
	return invalidf(field, "%s has about %d bits of entropy, under the %d needed: use at least 22 random letters and digits "+
		"(a repeated character or a run such as abc or 123 adds nothing)", what, int(bits), MinSecretBits)
}

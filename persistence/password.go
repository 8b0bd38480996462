package persistence

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Passwords are hashed with argon2id at OWASP's first recommended setting (19 MiB, two
// passes, one lane): about 30 ms of one core here, so a login costs little and a stolen
// store costs its thief that much per guess. The hash is kept in the PHC string form,
// "$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>" (unpadded base64), so parameters can be
// raised later without making the stored hashes unreadable.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonLanes     = 1
	argonSaltLen   = 16
	argonKeyLen    = 32

	// MinPasswordLen and MaxPasswordLen bound a password, in characters.
	MinPasswordLen = 12 // ASVS 4.0.3 V2.1.1 (level 1)
	MaxPasswordLen = 128
	maxHashLen     = 256
)

// CheckPassword says what is wrong with a new password for the account with this e-mail,
// or nil: 12 to 128 characters, not all whitespace, not the e-mail itself.
func CheckPassword(field, password, email string) error {
	n := utf8.RuneCountInString(password)
	switch {
	case !utf8.ValidString(password):
		return invalidf(field, "%s is not valid UTF-8", field)
	case n < MinPasswordLen || n > MaxPasswordLen:
		return invalidf(field, "%s must be %d to %d characters (it is %d)", field, MinPasswordLen, MaxPasswordLen, n)
	case strings.TrimFunc(password, unicode.IsSpace) == "":
		return invalidf(field, "%s must not be only whitespace", field)
	case email != "" && strings.EqualFold(strings.TrimSpace(password), email):
		return invalidf(field, "%s must not be the e-mail address", field)
	}
	return nil
}

// HashPassword is the argon2id hash of password, with a fresh salt, in PHC form.
func HashPassword(password string) string {
	salt := make([]byte, argonSaltLen)
	rand.Read(salt) // never fails (it panics instead, since Go 1.24)
	return encodeArgon(salt, argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonLanes, argonKeyLen))
}

func encodeArgon(salt, key []byte) string {
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonLanes,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

// dummyHash is checked against when there is no account, so an unknown e-mail takes as long
// as a wrong password (timing tells neither). It is a constant (HashPassword's of a dummy
// password, once): only its parameters matter, and hashing it at start-up cost every process,
// even an admin command, 19 MiB of argon2 memory that the idle heap kept.
const dummyHash = "$argon2id$v=19$m=19456,t=2,p=1$h8OZOKopcVg75xHapVem+Q$YcLbDjTVxlMKEMLmkWGySnShPun3v93/V+VS7TFxBG0"

// VerifyPassword reports whether password matches the PHC hash; an empty or unreadable hash
// is checked against a dummy one first, so it costs what a real check costs.
func VerifyPassword(hash, password string) bool {
	salt, key, mem, passes, lanes, ok := decodeArgon(hash)
	if !ok {
		salt, key, mem, passes, lanes, _ = decodeArgon(dummyHash)
		argon2.IDKey([]byte(password), salt, passes, mem, lanes, uint32(len(key)))
		return false
	}
	got := argon2.IDKey([]byte(password), salt, passes, mem, lanes, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1
}

// decodeArgon reads a PHC argon2id string, refusing parameters no hash of ours has (a
// corrupt record must not make a login allocate gigabytes).
func decodeArgon(hash string) (salt, key []byte, mem, passes uint32, lanes uint8, ok bool) {
	parts := strings.Split(hash, "$")
	if len(hash) > maxHashLen || len(parts) != 6 || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return nil, nil, 0, 0, 0, false
	}
	var p uint32
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &passes, &p); err != nil ||
		mem < 8 || mem > 1<<20 || passes < 1 || passes > 16 || p < 1 || p > 16 {
		return nil, nil, 0, 0, 0, false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	key, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) < 8 || len(key) < 16 {
		return nil, nil, 0, 0, 0, false
	}
	return salt, key, mem, passes, uint8(p), true
}

// validPasswordHash is the apply half's check of a hash a proposer made.
func validPasswordHash(hash string) bool {
	_, _, _, _, _, ok := decodeArgon(hash)
	return ok
}

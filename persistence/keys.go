package persistence

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cockroachdb/pebble/v2"
	"github.com/vmihailenco/msgpack/v5"
)

// KeySpec is the caller-chosen part of a new API key.
type KeySpec struct {
	Name   string
	Models []string
	ZDR    bool
	Limits KeyLimits
}

// Key is an API key's metadata. The secret itself is never stored: only its
// SHA-256 lives in the keyhash index, so a copy of the database cannot be
// used to call the gateway.
type Key struct {
	ID        string   `msgpack:"id" json:"id"` // "key_" + 20 random base62
	AccountID string   `msgpack:"account_id" json:"account_id"`
	Name      string   `msgpack:"name" json:"name"`
	Models    []string `msgpack:"models" json:"models"` // empty = unrestricted; never nil
	ZDR       bool     `msgpack:"zdr" json:"zdr"`
	Hint      string   `msgpack:"hint" json:"hint"` // prefix + "…" + last 4 chars, e.g. "sk-token-…a1B2"
	CreatedAt int64    `msgpack:"created_at" json:"created_at"`
	RevokedAt int64    `msgpack:"revoked_at" json:"revoked_at,omitempty"` // 0 = active
	// Limits are the key's own budget, expiry and rpm; absent in keys stored before them.
	Limits KeyLimits `msgpack:"limits,omitempty" json:"limits"`
}

const (
	keyIDPrefix       = "key_"
	secretTokenPrefix = "sk-token-"
	secretUserPrefix  = "sk-user-"
	secretRandLen     = 48
	minSecretLen      = 20
	// maxSecretLen bounds imported secrets and lets LookupKey reject
	// oversized Authorization headers without hashing them.
	maxSecretLen  = 512
	maxKeyNameLen = 100 // characters
	maxModels     = 256
	maxModelLen   = 256 // bytes
	hashHexLen    = 2 * sha256.Size
)

// GetKey returns the key with the given id, revoked or not.
func (s *Store) GetKey(id string) (Key, error) { return getKeyByID(s.db, id) }

func getKeyByID(r pebble.Reader, id string) (Key, error) {
	k, err := getKeyIn(r, dbKey(nsKey, id))
	if errors.Is(err, ErrNotFound) {
		return Key{}, notFound("key", id)
	}
	if err != nil {
		return Key{}, fmt.Errorf("persistence: key %q: %w", id, err)
	}
	return k, nil
}

// ListKeys returns all keys of an account, revoked ones included, in
// creation order. It never returns a nil slice.
func (s *Store) ListKeys(accountID string) ([]Key, error) {
	if _, err := s.GetAccount(accountID); err != nil {
		return nil, err
	}
	prefix := dbKey(nsAcctKey, accountID, "/")
	var ids []string
	err := s.scanPrefix(prefix, func(k, _ []byte) (bool, error) {
		// acctkey/<acct>/<8-byte nanos>/<id>
		if len(k) <= len(prefix)+9 {
			return false, fmt.Errorf("malformed index key %q", k)
		}
		ids = append(ids, string(k[len(prefix)+9:]))
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("persistence: list keys of %s: %w", accountID, err)
	}
	out := make([]Key, 0, len(ids))
	for _, id := range ids {
		k, err := s.GetKey(id)
		if err != nil {
			return nil, fmt.Errorf("persistence: list keys of %s: %w", accountID, err)
		}
		out = append(out, k)
	}
	return out, nil
}

// LookupKey finds the key whose secret is given, via its SHA-256. It runs on
// every request, so it does exactly two point Gets and, thanks to a pooled
// scratch area, allocates only the strings and slice of the returned Key.
// Revoked keys are returned too; the caller checks RevokedAt so it can
// answer "revoked" rather than "unknown". A key of a disabled account comes with an
// ErrDisabled error (a third point Get, a miss for every enabled account). Errors never
// contain the secret.
func (s *Store) LookupKey(secret string) (Key, error) {
	if len(secret) < minSecretLen || len(secret) > maxSecretLen {
		return Key{}, errUnknownSecret // no secret of ours looks like this
	}
	sc := lookupPool.Get().(*lookupScratch)
	defer lookupPool.Put(sc)

	// Hash from the scratch copy: []byte(secret) would allocate.
	sum := sha256.Sum256(sc.secret[:copy(sc.secret[:], secret)])
	cached, ok, gen := s.keys.get(sum)
	if ok {
		return cached, nil
	}
	hk := append(sc.key[:0], nsKeyHash...)
	hk = hk[:len(nsKeyHash)+hashHexLen]
	hex.Encode(hk[len(nsKeyHash):], sum[:])

	id, closer, err := s.db.Get(hk)
	if errors.Is(err, pebble.ErrNotFound) {
		return Key{}, errUnknownSecret
	}
	if err != nil {
		return Key{}, fmt.Errorf("persistence: lookup key: %w", err)
	}
	// id dies with closer; copy it into the second lookup key first. Pebble
	// does not retain key arguments, so reusing sc.key is safe.
	kk := append(append(sc.key[:0], nsKey...), id...)
	closer.Close()

	val, closer, err := s.db.Get(kk)
	if err != nil {
		// The index points at a missing record: corruption, not "unknown".
		return Key{}, fmt.Errorf("persistence: lookup key: hash index points at %q: %w", kk[len(nsKey):], mapNotFound(err))
	}
	defer closer.Close()
	// Decode into a zeroed scratch Key (a fresh Models slice, never one
	// shared with an earlier caller), then return it by value.
	sc.k = Key{}
	sc.rd.Reset(val)
	sc.dec.Reset(&sc.rd)
	if err := sc.dec.Decode(&sc.k); err != nil {
		return Key{}, fmt.Errorf("persistence: lookup key: decode %q: %w", kk, err)
	}
	k := sc.k
	// Drop references so the pooled scratch pins neither Pebble's buffer
	// nor the returned strings.
	sc.k = Key{}
	sc.rd.Reset(nil)
	if k.Models == nil {
		k.Models = []string{}
	}
	if err := checkKeyAccount(s.db, k.AccountID, sc.key[:]); err != nil {
		return k, err
	}
	k.Models = k.Models[:len(k.Models):len(k.Models)] // shared with the cache: an append copies
	s.keys.put(sum, k, gen)
	return k, nil
}

// lookupScratch is LookupKey's reusable working memory.
type lookupScratch struct {
	secret [maxSecretLen]byte
	key    [len(nsKeyHash) + hashHexLen]byte // keyhash/<hex>, then key/<id>
	rd     bytes.Reader
	dec    *msgpack.Decoder
	k      Key
}

var lookupPool = sync.Pool{New: func() any {
	return &lookupScratch{dec: msgpack.NewDecoder(nil)}
}}

var errUnknownSecret = fmt.Errorf("persistence: no key matches the given secret: %w", ErrNotFound)

func getKeyIn(r pebble.Reader, dbk []byte) (Key, error) {
	var k Key
	if err := getMsgpackIn(r, dbk, &k); err != nil {
		return Key{}, err
	}
	if k.Models == nil {
		k.Models = []string{} // msgpack round-trips [] as nil; keep JSON "[]"
	}
	return k, nil
}

// keyHashKey is keyhash/<hex sha256(secret)>.
func keyHashKey(secret string) []byte { return dbKey(nsKeyHash, secretHash(secret)) }

// secretHash is the lower-case hex SHA-256 of a secret: what the keyhash index is keyed by.
func secretHash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// acctKeyKey is acctkey/<acct>/<8-byte big-endian nanos>/<id>; big-endian
// makes byte order equal creation order for non-negative times.
func acctKeyKey(accountID string, nanos int64, id string) []byte {
	k := make([]byte, 0, len(nsAcctKey)+len(accountID)+1+8+1+len(id))
	k = append(k, nsAcctKey...)
	k = append(k, accountID...)
	k = append(k, '/')
	k = binary.BigEndian.AppendUint64(k, uint64(nanos))
	k = append(k, '/')
	return append(k, id...)
}

// validateSpec checks a KeySpec and returns a private copy of its model list
// (so later changes to the caller's slice cannot alter the stored key). now > 0 also
// requires an expiry after now (validateLimits).
func validateSpec(spec KeySpec, now int64) ([]string, error) {
	if err := validateName(spec.Name); err != nil {
		return nil, err
	}
	if err := validateLimits(spec.Limits, now); err != nil {
		return nil, err
	}
	return validateModels(spec.Models)
}

func validateName(name string) error {
	n := utf8.RuneCountInString(name)
	switch {
	case strings.TrimSpace(name) == "":
		return invalidf("name", "key name is required")
	case n > maxKeyNameLen:
		return invalidf("name", "key name is %d characters, max %d", n, maxKeyNameLen)
	case !validText(name):
		return invalidf("name", "key name contains control characters or invalid UTF-8")
	}
	return nil
}

func validateModels(list []string) ([]string, error) {
	if len(list) > maxModels {
		return nil, invalidf("models", "models has %d entries, max %d", len(list), maxModels)
	}
	models := make([]string, 0, len(list))
	seen := make(map[string]bool, len(list))
	for i, m := range list {
		switch {
		case m == "":
			return nil, invalidf("models", "models[%d] is empty", i)
		case len(m) > maxModelLen:
			return nil, invalidf("models", "models[%d] longer than %d bytes", i, maxModelLen)
		case !printableASCII(m):
			return nil, invalidf("models", "models[%d] %q must be printable ASCII without spaces", i, m)
		case seen[m]:
			return nil, invalidf("models", "models[%d] %q is listed twice", i, m)
		}
		seen[m] = true
		models = append(models, m)
	}
	return models, nil
}

// validateImportSecret returns the secret's prefix (for the hint) or an
// ErrInvalid error. The message never echoes the secret.
func validateImportSecret(secret string) (string, error) {
	var prefix string
	switch {
	case strings.HasPrefix(secret, secretUserPrefix):
		prefix = secretUserPrefix
	case strings.HasPrefix(secret, secretTokenPrefix):
		prefix = secretTokenPrefix
	default:
		return "", invalidf("import_key", "secret must start with %q or %q", secretUserPrefix, secretTokenPrefix)
	}
	switch {
	case len(secret) < minSecretLen:
		return "", invalidf("import_key", "secret is %d characters, min %d", len(secret), minSecretLen)
	case len(secret) > maxSecretLen:
		return "", invalidf("import_key", "secret is %d characters, max %d", len(secret), maxSecretLen)
	case !printableASCII(secret):
		return "", invalidf("import_key", "secret must be printable ASCII without spaces")
	}
	if err := CheckSecretBits("import_key", "the secret after "+prefix, secret[len(prefix):]); err != nil {
		return "", err
	}
	return prefix, nil
}

// printableASCII reports whether every byte of s is in '!'..'~'.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' {
			return false
		}
	}
	return true
}

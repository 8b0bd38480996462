package persistence

import (
	"github.com/modelgate/modelgate/internal/randid"

	"fmt"
	"strings"
)

// NewKey is a decided key creation or import (PrepareKey's or PrepareImport's result): the
// key's record and the SHA-256 of its secret, never the secret.
type NewKey struct {
	Key        Key    `msgpack:"key"`
	SecretHash string `msgpack:"secret_hash"` // lower-case hex
	// Order is the key's place in its account's creation order, as NewAccount.Order.
	Order int64 `msgpack:"order"`
}

// KeyRevocation is a decided revocation (PrepareRevoke's result).
type KeyRevocation struct {
	KeyID string `msgpack:"key_id"`
	At    int64  `msgpack:"at"` // unix seconds: the RevokedAt of a key not revoked yet
}

// CreateKey mints a new key for an existing account and returns it together
// with its secret. The secret is returned only here; afterwards only its hash
// is known.
func (s *Store) CreateKey(accountID string, spec KeySpec) (Key, string, error) {
	secret := secretTokenPrefix + randid.Base62(secretRandLen)
	k, err := s.insertKey(accountID, spec, secret, secretTokenPrefix)
	if err != nil {
		return Key{}, "", err
	}
	return k, secret, nil
}

// ImportKey registers a secret issued elsewhere (e.g. migrated "sk-user-"
// keys). The secret must start with "sk-user-" or "sk-token-", be 20-512
// printable ASCII characters without spaces, have MinSecretBits after its
// prefix (SecretBits), and not already be registered.
func (s *Store) ImportKey(accountID string, spec KeySpec, secret string) (Key, error) {
	prefix, err := validateImportSecret(secret)
	if err != nil {
		return Key{}, err
	}
	return s.insertKey(accountID, spec, secret, prefix)
}

// insertKey validates everything, then writes the key record, the hash index
// and the per-account index in one synced batch, so no reader ever sees a
// key without its indexes or an index pointing nowhere.
func (s *Store) insertKey(accountID string, spec KeySpec, secret, prefix string) (Key, error) {
	models, err := validateSpec(spec, nowUTC().Unix())
	if err != nil {
		return Key{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.prepareKeyLocked(accountID, spec, models, secret, prefix)
	if err != nil {
		return Key{}, err
	}
	var k Key
	err = s.updateMetaLocked(func(b *MetaBatch) (err error) {
		k, err = b.InsertKey(c)
		return err
	})
	return k, err
}

// PrepareKey is CreateKey's proposer half: it validates the spec and draws the secret, the
// key's id and its creation time. The secret is returned beside the command, which holds
// only its hash.
func (s *Store) PrepareKey(accountID string, spec KeySpec) (NewKey, string, error) {
	models, err := validateSpec(spec, nowUTC().Unix())
	if err != nil {
		return NewKey{}, "", err
	}
	secret := secretTokenPrefix + randid.Base62(secretRandLen)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.prepareKeyLocked(accountID, spec, models, secret, secretTokenPrefix)
	return c, secret, err
}

// PrepareImport is ImportKey's proposer half.
func (s *Store) PrepareImport(accountID string, spec KeySpec, secret string) (NewKey, error) {
	prefix, err := validateImportSecret(secret)
	if err != nil {
		return NewKey{}, err
	}
	models, err := validateSpec(spec, nowUTC().Unix())
	if err != nil {
		return NewKey{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prepareKeyLocked(accountID, spec, models, secret, prefix)
}

func (s *Store) prepareKeyLocked(accountID string, spec KeySpec, models []string, secret, prefix string) (NewKey, error) {
	var id string
	for {
		id = keyIDPrefix + randid.Base62(20)
		taken, err := s.has(dbKey(nsKey, id))
		if err != nil {
			return NewKey{}, fmt.Errorf("persistence: create key: %w", err)
		}
		if !taken {
			break
		}
	}
	now := nowUTC()
	return NewKey{
		Key: Key{
			ID:        id,
			AccountID: accountID,
			Name:      spec.Name,
			Models:    models,
			ZDR:       spec.ZDR,
			Limits:    spec.Limits,
			Hint:      prefix + "…" + secret[len(secret)-4:],
			CreatedAt: now.Unix(),
		},
		SecretHash: secretHash(secret),
		Order:      s.nextNanos(now.UnixNano()),
	}, nil
}

// InsertKey is the apply half of CreateKey and ImportKey: the account must exist, and
// neither the secret's hash nor the id may be registered already.
func (m *MetaBatch) InsertKey(c NewKey) (Key, error) {
	k := c.Key
	models, err := validateSpec(KeySpec{Name: k.Name, Models: k.Models, ZDR: k.ZDR, Limits: k.Limits}, 0)
	if err != nil {
		return Key{}, err
	}
	k.Models = models
	if !strings.HasPrefix(k.ID, keyIDPrefix) || !printableASCII(k.ID) || !validSecretHash(c.SecretHash) || c.Order <= 0 || k.RevokedAt != 0 {
		return Key{}, invalidf("key", "key %q, its secret's hash or creation order is not one a proposer makes", k.ID)
	}
	if _, err := getAccountIn(m.b, k.AccountID); err != nil {
		return Key{}, err
	}
	hashKey := dbKey(nsKeyHash, c.SecretHash)
	dup, err := hasIn(m.b, hashKey)
	if err != nil {
		return Key{}, fmt.Errorf("persistence: create key: %w", err)
	}
	if dup {
		// Deliberately does not say which key holds the secret.
		return Key{}, conflictf("import_key", "secret is already registered")
	}
	recKey := dbKey(nsKey, k.ID)
	if taken, err := hasIn(m.b, recKey); err != nil {
		return Key{}, fmt.Errorf("persistence: create key: %w", err)
	} else if taken {
		return Key{}, conflictf("id", "key id %s is taken", k.ID)
	}
	if err := putMsgpack(m.b, recKey, k); err != nil {
		return Key{}, fmt.Errorf("persistence: create key %s: %w", k.ID, err)
	}
	if err := m.b.Set(hashKey, []byte(k.ID), nil); err != nil {
		return Key{}, fmt.Errorf("persistence: create key %s: %w", k.ID, err)
	}
	if err := m.b.Set(acctKeyKey(k.AccountID, c.Order, k.ID), nil, nil); err != nil {
		return Key{}, fmt.Errorf("persistence: create key %s: %w", k.ID, err)
	}
	return k, nil
}

// nextNanos returns a creation timestamp strictly greater than the previous
// one handed out by this Store. Caller holds s.mu.
func (s *Store) nextNanos(now int64) int64 {
	if now <= s.lastNanos {
		now = s.lastNanos + 1
	}
	s.lastNanos = now
	return now
}

// RevokeKey marks a key revoked (durably) and returns it. Revoking a revoked
// key is a no-op that keeps the original RevokedAt.
func (s *Store) RevokeKey(id string) (Key, error) {
	c := s.PrepareRevoke(id)
	var k Key
	err := s.UpdateMeta(func(b *MetaBatch) (err error) {
		k, err = b.RevokeKey(c)
		return err
	})
	return k, err
}

// PrepareRevoke is RevokeKey's proposer half: it takes the time.
func (s *Store) PrepareRevoke(id string) KeyRevocation {
	return KeyRevocation{KeyID: id, At: nowUTC().Unix()}
}

// RevokeKey is RevokeKey's apply half.
func (m *MetaBatch) RevokeKey(c KeyRevocation) (Key, error) {
	k, err := getKeyByID(m.b, c.KeyID)
	if err != nil {
		return Key{}, err
	}
	if k.RevokedAt != 0 {
		return k, nil
	}
	if c.At <= 0 {
		return Key{}, invalidf("at", "revocation time %d is not a unix time after 1970", c.At)
	}
	k.RevokedAt = c.At
	if err := putMsgpack(m.b, dbKey(nsKey, k.ID), k); err != nil {
		return Key{}, fmt.Errorf("persistence: revoke key %s: %w", k.ID, err)
	}
	return k, nil
}

// validSecretHash reports whether h is a lower-case hex SHA-256.
func validSecretHash(h string) bool {
	if len(h) != hashHexLen {
		return false
	}
	for i := 0; i < len(h); i++ {
		if !('0' <= h[i] && h[i] <= '9' || 'a' <= h[i] && h[i] <= 'f') {
			return false
		}
	}
	return true
}

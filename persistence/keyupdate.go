package persistence

import "fmt"

// KeyUpdate is a change of a key's caller-chosen fields: each set member replaces the
// key's, the others stay. Limits replace the key's limits as a whole (the zero KeyLimits
// removes them all). No omitempty: msgpack would drop a pointer to zero limits (it asks
// KeyLimits.IsZero), turning "remove the limits" into "leave them".
type KeyUpdate struct {
	Name   *string    `msgpack:"name"`
	Models *[]string  `msgpack:"models"`
	ZDR    *bool      `msgpack:"zdr"`
	Limits *KeyLimits `msgpack:"limits"`
}

// KeyChange is a decided key update (PrepareKeyUpdate's result).
type KeyChange struct {
	KeyID  string    `msgpack:"key_id"`
	Update KeyUpdate `msgpack:"update"`
}

// UpdateKey changes a key (KeyUpdate) and returns it as stored. A revoked key cannot be
// changed.
func (s *Store) UpdateKey(id string, u KeyUpdate) (Key, error) {
	c, err := s.PrepareKeyUpdate(id, u)
	if err != nil {
		return Key{}, err
	}
	var k Key
	err = s.UpdateMeta(func(b *MetaBatch) (err error) {
		k, err = b.UpdateKey(c)
		return err
	})
	return k, err
}

// PrepareKeyUpdate is UpdateKey's proposer half: it checks the update (an expiry must be in
// the future by this node's clock) and copies its model list.
func (s *Store) PrepareKeyUpdate(id string, u KeyUpdate) (KeyChange, error) {
	u, err := validateUpdate(u, nowUTC().Unix())
	if err != nil {
		return KeyChange{}, err
	}
	if _, err := s.GetKey(id); err != nil {
		return KeyChange{}, err
	}
	return KeyChange{KeyID: id, Update: u}, nil
}

// UpdateKey is UpdateKey's apply half.
func (m *MetaBatch) UpdateKey(c KeyChange) (Key, error) {
	u, err := validateUpdate(c.Update, 0)
	if err != nil {
		return Key{}, err
	}
	k, err := getKeyByID(m.b, c.KeyID)
	if err != nil {
		return Key{}, err
	}
	if k.RevokedAt != 0 {
		return Key{}, conflictf("id", "key %s is revoked; a revoked key cannot be changed", k.ID)
	}
	if u.Name != nil {
		k.Name = *u.Name
	}
	if u.Models != nil {
		k.Models = *u.Models
	}
	if u.ZDR != nil {
		k.ZDR = *u.ZDR
	}
	if u.Limits != nil {
		k.Limits = *u.Limits
	}
	if err := putMsgpack(m.b, dbKey(nsKey, k.ID), k); err != nil {
		return Key{}, fmt.Errorf("persistence: update key %s: %w", k.ID, err)
	}
	return k, nil
}

// validateUpdate checks the members u sets and returns it with a private copy of its model
// list; now as validateSpec's.
func validateUpdate(u KeyUpdate, now int64) (KeyUpdate, error) {
	if u.Name == nil && u.Models == nil && u.ZDR == nil && u.Limits == nil {
		return KeyUpdate{}, invalidf("", "the update changes nothing: set name, models, zdr or limits")
	}
	if u.Name != nil {
		if err := validateName(*u.Name); err != nil {
			return KeyUpdate{}, err
		}
	}
	if u.Limits != nil {
		if err := validateLimits(*u.Limits, now); err != nil {
			return KeyUpdate{}, err
		}
	}
	if u.Models != nil {
		models, err := validateModels(*u.Models)
		if err != nil {
			return KeyUpdate{}, err
		}
		u.Models = &models
	}
	return u, nil
}

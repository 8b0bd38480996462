package persistence

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

const (
	maxMetaNameLen = 128
	// maxMetaValueLen keeps "small operator state" small; anything bigger
	// belongs in its own namespace with its own schema.
	maxMetaValueLen = 1 << 20
)

// GetMeta returns a copy of the named operator value.
func (s *Store) GetMeta(name string) ([]byte, error) {
	if err := validateMetaName(name); err != nil {
		return nil, err
	}
	v, closer, err := s.db.Get(dbKey(nsMeta, name))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("persistence: meta %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("persistence: meta %q: %w", name, err)
	}
	// v dies with closer; hand the caller its own copy (non-nil even when
	// empty, so "set to empty" and "absent" stay distinguishable).
	out := append([]byte{}, v...)
	closer.Close()
	return out, nil
}

// SetMeta durably stores v (raw bytes, not msgpack: the caller owns the
// format) under name, replacing any previous value.
func (s *Store) SetMeta(name string, v []byte) error {
	if err := validateMetaName(name); err != nil {
		return err
	}
	if len(v) > maxMetaValueLen {
		return invalidf("name", "meta %q value is %d bytes, max %d", name, len(v), maxMetaValueLen)
	}
	if err := s.space.check(); err != nil {
		return err
	}
	if err := s.db.Set(dbKey(nsMeta, name), v, pebble.Sync); err != nil {
		return fmt.Errorf("persistence: set meta %q: %w", name, err)
	}
	return nil
}

func validateMetaName(name string) error {
	switch {
	case name == "":
		return invalidf("name", "meta name is required")
	case len(name) > maxMetaNameLen || !printableASCII(name):
		return invalidf("name", "meta name %q must be 1-%d printable ASCII bytes without spaces", name, maxMetaNameLen)
	}
	return nil
}

package persistence

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Raw access for namespaces that other packages own (persistence/assets keeps "asset/"
// here): the caller owns the key layout and the value format. The namespaces of this
// package are refused, so raw writes can never bypass its validation and batching.

// ownNamespaces are the prefixes only this package writes.
var ownNamespaces = append([]string{nsAccount, nsAcctOrder, nsAcctEmail, nsSchema, nsKey, nsKeyHash, nsAcctKey, nsLog, nsLogID, nsLogDict, nsMeta, nsQuota, nsKeyQuota, nsCredit, nsTask, nsTaskOpen, nsPayment, nsPaymentPI, nsSubscription}, authNamespaces...)

const maxRawKeyLen = 1024

func checkRawKey(key []byte) error {
	if len(key) == 0 || len(key) > maxRawKeyLen {
		return invalidf("key", "raw key of %d bytes (1-%d)", len(key), maxRawKeyLen)
	}
	for _, ns := range ownNamespaces {
		if bytes.HasPrefix(key, []byte(ns)) {
			return invalidf("key", "raw key %q is in the store's own namespace %q", key, ns)
		}
	}
	return nil
}

// GetRaw returns a copy of the value at key; a missing key is ErrNotFound.
func (s *Store) GetRaw(key []byte) ([]byte, error) { return getRawIn(s.db, key) }

// getRawIn is GetRaw through r.
func getRawIn(r pebble.Reader, key []byte) ([]byte, error) {
	if err := checkRawKey(key); err != nil {
		return nil, err
	}
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("persistence: %q: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("persistence: get %q: %w", key, err)
	}
	out := append([]byte{}, v...)
	closer.Close()
	return out, nil
}

// SetRaw durably (synced) stores value at key.
func (s *Store) SetRaw(key, value []byte) error {
	if err := checkRawKey(key); err != nil {
		return err
	}
	if err := s.space.check(); err != nil {
		return err
	}
	if err := s.db.Set(key, value, pebble.Sync); err != nil {
		return fmt.Errorf("persistence: set %q: %w", key, err)
	}
	return nil
}

// DeleteRaw durably (synced) removes key; a missing key is no error.
func (s *Store) DeleteRaw(key []byte) error {
	if err := checkRawKey(key); err != nil {
		return err
	}
	if err := s.space.check(); err != nil {
		return err
	}
	if err := s.db.Delete(key, pebble.Sync); err != nil {
		return fmt.Errorf("persistence: delete %q: %w", key, err)
	}
	return nil
}

package persistence

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// metaNamespaces are the metadata key space: accounts, their order and e-mail indexes, keys,
// the key hash index and the per-account key index, the sign-in state (logins.go), and what
// was paid through Stripe (payments.go, subscriptions.go). A
// metadata snapshot carries exactly these (and the raw namespaces its taker names); a
// recovery replaces exactly these.
var metaNamespaces = append([]string{nsAccount, nsAcctOrder, nsAcctEmail, nsKey, nsKeyHash, nsAcctKey,
	nsPayment, nsPaymentPI, nsSubscription}, authNamespaces...)

// MetaView is a consistent read-only view of the metadata key space and of the raw
// namespaces named when it was taken; writes made after it do not show.
type MetaView struct {
	snap     *pebble.Snapshot
	prefixes [][]byte
}

// ViewMeta takes a view of the metadata key space and of the raw namespaces raw (each a
// prefix a raw key may have, such as "metashard/").
func (s *Store) ViewMeta(raw ...[]byte) (*MetaView, error) {
	prefixes, err := metaPrefixes(raw)
	if err != nil {
		return nil, err
	}
	return &MetaView{snap: s.db.NewSnapshot(), prefixes: prefixes}, nil
}

// Scan calls fn for every pair of the view in key order; k and v are valid only during the
// call.
func (v *MetaView) Scan(fn func(k, v []byte) error) error {
	for _, p := range v.prefixes {
		err := scanPrefixIn(v.snap, p, func(k, val []byte) (bool, error) {
			return true, fn(k, val)
		})
		if err != nil {
			return fmt.Errorf("persistence: scan metadata: %w", err)
		}
	}
	return nil
}

// Close releases the view.
func (v *MetaView) Close() error { return v.snap.Close() }

// ReplaceMeta replaces the metadata key space and the raw namespaces raw with the pairs load
// puts, in one synced batch under the store's write lock: afterwards they hold exactly those
// pairs. A pair outside those namespaces, or an error from load, changes nothing.
func (s *Store) ReplaceMeta(raw [][]byte, load func(put func(k, v []byte) error) error) error {
	prefixes, err := metaPrefixes(raw)
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	for _, p := range prefixes {
		if err := b.DeleteRange(p, prefixUpper(p), nil); err != nil {
			b.Close()
			return fmt.Errorf("persistence: replace metadata: %w", err)
		}
	}
	err = load(func(k, v []byte) error {
		if !slices.ContainsFunc(prefixes, func(p []byte) bool { return bytes.HasPrefix(k, p) }) {
			return invalidf("key", "key %q is not in the metadata key space", k)
		}
		return b.Set(k, v, nil)
	})
	if err != nil {
		b.Close()
		return fmt.Errorf("persistence: replace metadata: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.accounts.drop(true) // every cached record may be replaced
	defer s.keys.clear()
	if err := s.commit(b); err != nil {
		return fmt.Errorf("persistence: replace metadata: %w", err)
	}
	return nil
}

// metaPrefixes is the metadata namespaces and raw, checked, in key order (none is a prefix
// of another, so scanning them one after the other is one scan in key order).
func metaPrefixes(raw [][]byte) ([][]byte, error) {
	out := make([][]byte, 0, len(metaNamespaces)+len(raw))
	for _, ns := range metaNamespaces {
		out = append(out, []byte(ns))
	}
	for _, p := range raw {
		if err := checkRawKey(p); err != nil {
			return nil, err
		}
		if p[len(p)-1] != '/' {
			return nil, invalidf("key", "raw namespace %q must end in '/'", p)
		}
		out = append(out, p)
	}
	slices.SortFunc(out, bytes.Compare)
	for i := 1; i < len(out); i++ {
		if bytes.HasPrefix(out[i], out[i-1]) {
			return nil, invalidf("key", "namespace %q is inside %q", out[i], out[i-1])
		}
	}
	return out, nil
}

// LookupKeyHash is LookupKey by the hex SHA-256 of the secret, for a caller that holds only
// the hash (a replicated read never carries a secret).
func (s *Store) LookupKeyHash(hash string) (Key, error) {
	if !validSecretHash(hash) {
		return Key{}, errUnknownSecret
	}
	id, closer, err := s.db.Get(dbKey(nsKeyHash, hash))
	if errors.Is(err, pebble.ErrNotFound) {
		return Key{}, errUnknownSecret
	}
	if err != nil {
		return Key{}, fmt.Errorf("persistence: lookup key: %w", err)
	}
	kid := string(id)
	closer.Close()
	k, err := getKeyIn(s.db, dbKey(nsKey, kid))
	if err != nil {
		// The index points at a missing record: corruption, not "unknown".
		return Key{}, fmt.Errorf("persistence: lookup key: hash index points at %q: %w", kid, err)
	}
	return k, checkKeyAccount(s.db, k.AccountID, nil)
}

// checkKeyAccount is the key check's question about the key's account: nil, or the
// ErrDisabled refusal of a disabled account (the key is returned beside it, so the refusal
// can be logged to its account). scratch, when big enough, holds the lookup key.
func checkKeyAccount(r pebble.Reader, accountID string, scratch []byte) error {
	off, err := hasIn(r, append(append(scratch[:0], nsAcctOff...), accountID...))
	if err != nil {
		return fmt.Errorf("persistence: lookup key: %w", err)
	}
	if off {
		return disabledErr(accountID)
	}
	return nil
}

package accounts

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/persistence"
)

// The shard's own keys live in the node's store under its raw namespace:
//
//	acctshard/<shard>/applied                        → the last applied index, 8 bytes big-endian
//	acctshard/<shard>/acct/<account>                 → the account's encoded step.Account
//	acctshard/<shard>/cmd/<command id>               → the index that applied it (8 bytes) and its encoded step.Result
//	acctshard/<shard>/recent/<8-byte index><4-byte n> → the id of the n-th command of that entry
//
// What the steps produce for the rest of the node (the request log, the grants, the record
// usage reads its sequence from, the keys' throttle state) is written where the single node
// writes it (persistence.QuotaWrite), in the same batch.

// RememberedEntries is how many log entries back a command id is remembered: a command
// retried within that many entries of the one that applied it gets the first result and
// changes nothing. Every replica must use the same number (it shapes the results).
const RememberedEntries = 10_000

// StateMachine is one account shard's state on one node (cluster.StateMachine) over the
// node's persistence.Store: one unsynced batch per Update holds the changed accounts, what
// their steps wrote, the remembered command ids and the applied index.
type StateMachine struct {
	store   *persistence.Store
	shard   uint64
	ns      []byte // acctshard/<shard>/
	window  uint64 // RememberedEntries; tests shorten it
	applied atomic.Uint64
	onTask  func(persistence.VideoTask) // SetTaskHook
	// Update's own: the ids the store may remember, and the accounts as last written (both
	// rebuilt by Open, which RecoverFromSnapshot ends with). Lookup, which may run during an
	// Update, reads the store instead.
	ids   *idFilter
	accts *accountCache
	// written is the encoded accounts committed Updates wrote, for the leader's reads.
	written writtenAccounts
	// incs is every node's latest incarnation (orphans.go), read by Update and Lookup.
	incs atomic.Pointer[incarnations]
}

var _ cluster.StateMachine = (*StateMachine)(nil)

// NewStateMachine is shard's state machine over store, which stays the caller's to close.
func NewStateMachine(store *persistence.Store, shard uint64) *StateMachine {
	return &StateMachine{store: store, shard: shard, ns: []byte("acctshard/" + strconv.FormatUint(shard, 10) + "/"), window: RememberedEntries}
}

func (m *StateMachine) key(parts ...string) []byte {
	k := append([]byte{}, m.ns...)
	for _, p := range parts {
		k = append(k, p...)
	}
	return k
}

func (m *StateMachine) appliedKey() []byte         { return m.key("applied") }
func (m *StateMachine) acctKey(acct string) []byte { return m.key("acct/", acct) }
func (m *StateMachine) cmdKey(id string) []byte    { return m.key("cmd/", id) }
func (m *StateMachine) recentKey(index uint64, n uint32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(m.key("recent/"), index), n)
}

// Open reads the applied index back from the store (0 for a store never applied to) and
// the ids it remembers.
func (m *StateMachine) Open() (uint64, error) {
	m.accts = newAccountCache()
	m.written.clear()
	if err := m.loadIDs(); err != nil {
		return 0, err
	}
	if err := m.loadIncarnations(); err != nil {
		return 0, err
	}
	v, err := m.store.GetRaw(m.appliedKey())
	if errors.Is(err, persistence.ErrNotFound) {
		m.applied.Store(0)
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("accounts: shard %d: read the applied index: %w", m.shard, err)
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("accounts: shard %d: the applied index is %d bytes, not 8", m.shard, len(v))
	}
	applied := binary.BigEndian.Uint64(v)
	m.applied.Store(applied)
	return applied, nil
}

// Applied is the index of the last entry applied on this node.
func (m *StateMachine) Applied() uint64 { return m.applied.Load() }

// Update applies entries in one batch with the new applied index. An entry at or below the
// applied index (replayed after a restart) is skipped and its Result stays nil. A refused
// or malformed command is a result; only a failure of the store returns an error, and then
// nothing of entries is written.
func (m *StateMachine) Update(entries []cluster.Entry) error {
	from := m.applied.Load()
	last := from
	var u *update
	err := m.store.UpdateShard(func(b *persistence.ShardBatch) error {
		u = &update{m: m, b: b, accts: map[string]*touched{}}
		for i := range entries {
			e := &entries[i]
			if e.Index <= last {
				continue
			}
			res, err := u.entry(e.Index, e.Cmd)
			if err != nil {
				return fmt.Errorf("accounts: shard %d: apply entry %d: %w", m.shard, e.Index, err)
			}
			e.Result, last = res, e.Index
		}
		if last == from {
			return nil
		}
		if err := u.flush(); err != nil {
			return err
		}
		if err := m.forget(b, last); err != nil {
			return err
		}
		return b.SetRaw(m.appliedKey(), binary.BigEndian.AppendUint64(nil, last))
	})
	if err != nil {
		for i := range entries {
			entries[i].Result = nil
		}
		if m.accts != nil { // it may hold this Update's changes, which were dropped
			m.accts = newAccountCache()
		}
		m.written.clear()
		return err
	}
	if u != nil {
		u.cache()
		if u.incs != nil {
			m.incs.Store(u.incs)
		}
	}
	m.applied.Store(last)
	if m.onTask != nil {
		for _, t := range u.tasks {
			m.onTask(t)
		}
	}
	return nil
}

// forget drops the ids of commands applied RememberedEntries or more entries before last.
// Which ids a lookup honours depends only on the indexes (seen), so forgetting once per
// Update, however the engine groups entries into Updates, gives every replica the same
// results and, after each Update, the same keys.
func (m *StateMachine) forget(b *persistence.ShardBatch, last uint64) error {
	if last < m.window {
		return nil
	}
	m.ids.forget(last - m.window + 1)
	lower, upper := m.key("recent/"), m.recentKey(last-m.window+1, 0)
	var drop [][]byte
	err := b.ScanRaw(lower, upper, func(k, v []byte) (bool, error) {
		drop = append(drop, append([]byte{}, k...), m.cmdKey(string(v)))
		return true, nil
	})
	if err != nil {
		return err
	}
	for _, k := range drop {
		if err := b.DeleteRaw(k); err != nil {
			return err
		}
	}
	return nil
}

// seen is the result remembered for a command id, when it applied fewer than window entries
// before index.
func (m *StateMachine) seen(b *persistence.ShardBatch, id string, index uint64) ([]byte, bool, error) {
	if !m.ids.mayHave(id) {
		return nil, false, nil
	}
	v, err := b.GetRaw(m.cmdKey(id))
	if errors.Is(err, persistence.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if len(v) < 8 {
		return nil, false, fmt.Errorf("accounts: remembered command %q is %d bytes", id, len(v))
	}
	if at := binary.BigEndian.Uint64(v); at+m.window <= index {
		return nil, false, nil // remembered too long ago: the same on a replica that forgot it
	}
	return v[8:], true, nil
}

// Lookup answers a Query with the encoded step.Result of a View applied to a copy of the
// account as stored (lazy expiry included, as the next command would see it).
func (m *StateMachine) Lookup(query []byte) ([]byte, error) {
	q, err := decodeQuery(query)
	if err != nil {
		return nil, err
	}
	switch {
	case q.Sync:
		return nil, nil
	case q.Task != "":
		return m.lookupTask(q.Task)
	}
	a, err := loadAccount(m.store.GetRaw, m.acctKey(q.Account))
	if err != nil {
		return nil, err
	}
	incs, err := m.incarnationsNow()
	if err != nil {
		return nil, err
	}
	r, _ := stepOn(&a, &step.Command{Kind: step.View, Now: q.Now, Plan: q.Plan, Key: q.Key, KeyLimits: q.KeyLimits}, incs)
	return r.Encode()
}

// loadIDs fills the id filter with the ids the store remembers.
func (m *StateMachine) loadIDs() error {
	m.ids = newIDFilter()
	view := m.store.ViewShard()
	defer view.Close()
	prefix := m.key("recent/")
	err := view.ScanRaw(prefix, func(k, v []byte) error {
		if len(k) != len(prefix)+12 {
			return fmt.Errorf("a recent-command key of %d bytes", len(k))
		}
		m.ids.add(string(v), binary.BigEndian.Uint64(k[len(prefix):]))
		return nil
	})
	if err != nil {
		return fmt.Errorf("accounts: shard %d: read the remembered command ids: %w", m.shard, err)
	}
	return nil
}

// Sync makes every applied entry durable.
func (m *StateMachine) Sync() error { return m.store.SyncWAL() }

// Close releases nothing: the store is the node's.
func (m *StateMachine) Close() error { return nil }

// appliedAccount is acct as this replica has applied it: from what the last Update that
// changed it wrote, else read from the store.
func (m *StateMachine) appliedAccount(acct string) (step.Account, error) {
	if enc, ok := m.written.get(acct); ok {
		var a step.Account
		if err := a.Decode(enc); err != nil {
			return a, fmt.Errorf("accounts: decode %s as written: %w", acct, err)
		}
		return a, nil
	}
	return loadAccount(m.store.GetRaw, m.acctKey(acct))
}

// loadAccount decodes the account stored at key (the zero Account when there is none).
func loadAccount(get func([]byte) ([]byte, error), key []byte) (step.Account, error) {
	var a step.Account
	v, err := get(key)
	if errors.Is(err, persistence.ErrNotFound) {
		return a, nil
	}
	if err != nil {
		return a, err
	}
	if err := a.Decode(v); err != nil {
		return a, fmt.Errorf("accounts: decode %q: %w", key, err)
	}
	return a, nil
}

// expireDue releases the account's reservations whose settle never came, when one is due at
// now: the expiry is lazy, part of the account's next step (or read), so it needs no timer
// and happens at the same log position on every replica.
func expireDue(a *step.Account, now int64) step.Result {
	at := max(a.Last, now)
	for i := range a.Calls {
		if a.Calls[i].Expires <= at {
			return step.Apply(a, &step.Command{Kind: step.Expire, Now: now})
		}
	}
	for _, h := range a.Rec.Media {
		if h.Expires != 0 && h.Expires <= at {
			return step.Apply(a, &step.Command{Kind: step.Expire, Now: now})
		}
	}
	return step.Result{}
}

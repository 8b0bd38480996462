package meta

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/persistence"
)

// The state machine's own keys live beside the metadata in the node's store, under rawNS, so
// they are written in the same batches and carried by the same snapshots:
//
//	metashard/applied                  → the last applied index, 8 bytes big-endian
//	metashard/cmd/<command id>         → the encoded Result the command gave
//	metashard/recent/<8-byte index>    → the id of the command applied at that index
const rawNS = "metashard/"

var (
	appliedKey   = []byte(rawNS + "applied")
	cmdPrefix    = []byte(rawNS + "cmd/")
	recentPrefix = []byte(rawNS + "recent/")
	rawPrefixes  = [][]byte{[]byte(rawNS)}
)

// RememberedCommands is how many log entries back a command id is remembered: a proposal
// retried within that many entries of the one that applied gets the first one's result and
// changes nothing. Every replica must use the same number (it shapes the replicated state).
const RememberedCommands = 10_000

// StateMachine is the metadata shard's state on one node (cluster.StateMachine) over the
// node's persistence.Store: the accounts and keys it serves from, the applied index and the
// remembered command ids, all written in one synced batch per Update.
type StateMachine struct {
	store  *persistence.Store
	window uint64 // RememberedCommands; tests shorten it

	mu        sync.Mutex
	applied   uint64
	changed   chan struct{} // closed and replaced whenever applied moves
	onApplied []func(index uint64, cmd Command)
	onRecover []func(index uint64)
	onLease   []func(LeaseRenewal)

	// leases are the read leases this replica has seen renewed (lease.go); none are
	// known from before blindUntil, when it opened.
	leases     map[uint64]leaseSeen
	blindUntil time.Time
}

var _ cluster.StateMachine = (*StateMachine)(nil)

// NewStateMachine is the metadata shard over store, which stays the caller's to close.
func NewStateMachine(store *persistence.Store) *StateMachine {
	return &StateMachine{store: store, window: RememberedCommands, changed: make(chan struct{}), leases: map[uint64]leaseSeen{}}
}

// OnApplied registers f, called after each Update has committed, once for every command it
// applied (not for one refused, nor for a retry that found its earlier result, nor for a
// lease renewal), in log order, on the engine's apply goroutine: f must be quick and must not propose. The node
// uses it to drop a cached key the moment its revocation applies.
func (m *StateMachine) OnApplied(f func(index uint64, cmd Command)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onApplied = append(m.onApplied, f)
}

// OnRecovered registers f, called after RecoverFromSnapshot replaced the whole state (any
// key may have changed: a cache must be dropped entirely).
func (m *StateMachine) OnRecovered(f func(index uint64)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onRecover = append(m.onRecover, f)
}

// Open reads the applied index back from the store (0 for a store never applied to). The
// read leases other nodes hold are not stored: until one lease length has passed, writes wait
// as if every node held one.
func (m *StateMachine) Open() (uint64, error) {
	applied, err := readApplied(m.store)
	if err != nil {
		return 0, err
	}
	m.forgetLeases(time.Now(), applied)
	m.setApplied(applied)
	return applied, nil
}

func readApplied(s *persistence.Store) (uint64, error) {
	v, err := s.GetRaw(appliedKey)
	if errors.Is(err, persistence.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("meta: read the applied index: %w", err)
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("meta: the applied index is %d bytes, not 8", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Applied is the index of the last entry applied on this node.
func (m *StateMachine) Applied() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.applied
}

// WaitApplied returns once this node has applied index, or with ctx's error.
func (m *StateMachine) WaitApplied(ctx context.Context, index uint64) error {
	for {
		m.mu.Lock()
		applied, changed := m.applied, m.changed
		m.mu.Unlock()
		if applied >= index {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("meta: index %d not applied on this node (at %d): %w", index, applied, ctx.Err())
		}
	}
}

func (m *StateMachine) setApplied(index uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.applied = index
	close(m.changed)
	m.changed = make(chan struct{})
}

// applied is one command Update applied, for the hooks.
type appliedCmd struct {
	index uint64
	cmd   Command
}

// Update applies entries in one batch with the new applied index. An entry at or below the
// applied index (replayed after a restart) is skipped: it was applied before, and its
// Result stays nil. A refusal is a Result, part of the replicated outcome; only a failure
// of the store returns an error, and then nothing of entries is written.
func (m *StateMachine) Update(entries []cluster.Entry) error {
	from := m.Applied()
	last := from
	var (
		done    []appliedCmd
		renewed []LeaseRenewal
	)
	err := m.store.UpdateMeta(func(b *persistence.MetaBatch) error {
		for i := range entries {
			e := &entries[i]
			if e.Index <= last {
				continue
			}
			res, cmd, err := m.apply(b, e.Index, e.Cmd)
			if err != nil {
				return fmt.Errorf("meta: apply entry %d: %w", e.Index, err)
			}
			e.Result, last = res, e.Index
			switch {
			case cmd != nil && cmd.Kind == KindLease:
				renewed = append(renewed, *cmd.Lease)
			case cmd != nil:
				done = append(done, appliedCmd{e.Index, *cmd})
			}
		}
		if last == from {
			return nil
		}
		return b.SetRaw(appliedKey, binary.BigEndian.AppendUint64(nil, last))
	})
	if err != nil {
		for i := range entries {
			entries[i].Result = nil
		}
		return err
	}
	if last == from {
		return nil
	}
	m.mu.Lock()
	m.noteLeasesLocked(renewed, time.Now()) // before setApplied wakes WaitLeases
	hooks, leaseHooks := m.onApplied, m.onLease
	m.mu.Unlock()
	m.setApplied(last)
	for _, r := range renewed {
		for _, f := range leaseHooks {
			f(r)
		}
	}
	for _, d := range done {
		for _, f := range hooks {
			f(d.index, d.cmd)
		}
	}
	return nil
}

// apply applies one entry: its encoded Result, and the command when it changed the state.
func (m *StateMachine) apply(b *persistence.MetaBatch, index uint64, raw []byte) ([]byte, *Command, error) {
	cmd, err := DecodeCommand(raw)
	if err != nil {
		return refused(index, invalid("entry %d is not a metadata command", index))
	}
	if cmd.Kind == KindLease {
		// A renewal writes nothing and is not remembered: applying it twice changes nothing.
		if cmd.Lease == nil || cmd.Lease.Node == 0 {
			return refused(index, invalid("entry %d is a lease renewal without a node", index))
		}
		out, err := encode(Result{Index: index})
		return out, &cmd, err
	}
	if cmd.ID == "" || len(cmd.ID) > maxCommandID {
		return refused(index, invalid("command id %q is not 1-%d bytes", cmd.ID, maxCommandID))
	}
	idKey := append(append([]byte{}, cmdPrefix...), cmd.ID...)
	if prev, err := b.GetRaw(idKey); err == nil {
		return prev, nil, nil // a retry: the first outcome, nothing applied again
	} else if !errors.Is(err, persistence.ErrNotFound) {
		return nil, nil, err
	}
	res, err := applyCommand(b, cmd)
	var out []byte
	if err != nil {
		r, ok := RefusalOf(err)
		if !ok {
			return nil, nil, err
		}
		out, err = encode(Result{Index: index, Refusal: r})
	} else {
		res.Index = index
		out, err = encode(res)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := m.remember(b, index, idKey, out); err != nil {
		return nil, nil, err
	}
	if res.Account == nil && res.Key == nil && !res.Recorded {
		return out, nil, nil // refused: nothing changed
	}
	return out, &cmd, nil
}

// refused is the encoded Result of a refusal that is not remembered (the entry has no
// usable id).
func refused(index uint64, r *Refusal) ([]byte, *Command, error) {
	out, err := encode(Result{Index: index, Refusal: r})
	return out, nil, err
}

// applyCommand runs the apply half of cmd's write.
func applyCommand(b *persistence.MetaBatch, cmd Command) (Result, error) {
	var (
		res Result
		err error
	)
	switch {
	case cmd.Kind == KindCreateAccount && cmd.Account != nil:
		var a persistence.Account
		a, err = b.CreateAccount(*cmd.Account)
		res.Account = &a
	case cmd.Kind == KindSetPlan && cmd.Plan != nil:
		var a persistence.Account
		a, err = b.SetAccountPlan(*cmd.Plan)
		res.Account = &a
	case (cmd.Kind == KindCreateKey || cmd.Kind == KindImportKey) && cmd.Key != nil:
		var k persistence.Key
		k, err = b.InsertKey(*cmd.Key)
		res.Key = &k
	case cmd.Kind == KindRevokeKey && cmd.Revoke != nil:
		var k persistence.Key
		k, err = b.RevokeKey(*cmd.Revoke)
		res.Key = &k
	case isAuthKind(cmd.Kind):
		var a persistence.Account
		a, err = applyAuth(b, cmd)
		res.Account = &a
	case cmd.Kind == KindUpdateKey && cmd.Update != nil:
		var k persistence.Key
		k, err = b.UpdateKey(*cmd.Update)
		res.Key = &k
	case isBillingKind(cmd.Kind):
		res, err = applyBilling(b, cmd)
	default:
		return Result{}, &persistence.Error{Kind: persistence.ErrInvalid, Field: "command",
			Msg: fmt.Sprintf("command of kind %q without its payload, or of a kind this shard does not apply", cmd.Kind)}
	}
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

// remember keeps a command's result under its id, and forgets the ids of commands applied
// RememberedCommands or more entries before this one.
func (m *StateMachine) remember(b *persistence.MetaBatch, index uint64, idKey, result []byte) error {
	if err := b.SetRaw(idKey, result); err != nil {
		return err
	}
	id := idKey[len(cmdPrefix):]
	if err := b.SetRaw(binary.BigEndian.AppendUint64(append([]byte{}, recentPrefix...), index), id); err != nil {
		return err
	}
	if index < m.window {
		return nil
	}
	upper := binary.BigEndian.AppendUint64(append([]byte{}, recentPrefix...), index-m.window+1)
	var forget [][]byte
	err := b.ScanRaw(recentPrefix, upper, func(k, v []byte) (bool, error) {
		forget = append(forget, append([]byte{}, k...), append(append([]byte{}, cmdPrefix...), v...))
		return true, nil
	})
	if err != nil {
		return err
	}
	for _, k := range forget {
		if err := b.DeleteRaw(k); err != nil {
			return err
		}
	}
	return nil
}

// Sync is a no-op: every Update's batch is committed synced.
func (m *StateMachine) Sync() error { return nil }

// Close releases nothing: the store is the node's.
func (m *StateMachine) Close() error { return nil }

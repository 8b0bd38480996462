package step

import (
	"slices"
	"strings"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

// Account is the whole quota state of one account: what Apply reads and changes, and all
// of it. Two replicas holding equal Accounts and applying the same commands stay equal.
type Account struct {
	// Rec is the durable record, stored as it is today (persistence.QuotaRecord): counters,
	// balance, spend, media reservations, credit holds, the request log's sequence.
	Rec persistence.QuotaRecord `msgpack:"rec"`
	// Calls are the admitted, unsettled calls, in ascending ID order.
	Calls []Call `msgpack:"calls,omitempty"`
	// Burst is the account-wide sliding window (a plan whose burst is per key leaves it).
	Burst Slide `msgpack:"burst,omitempty"`
	// Keys are the calling keys' windows and throttle state, in ascending ID order (a
	// slice, not a map: msgpack sorts the keys of no map but map[string]string, bool and
	// interface{}, and the encoding must not depend on a map's order).
	Keys []Key `msgpack:"keys,omitempty"`
	// NextID is the last reservation id handed out (calls and media share the sequence).
	NextID uint64 `msgpack:"next"`
	// Last is the latest command time seen (unix ns): time never goes back within an account.
	Last int64 `msgpack:"last"`
	// What the calls in flight and the credit holds keep back, derived from Calls and
	// Rec.Holds and kept up to date by every step.
	WinReserved  int64        `msgpack:"wres,omitempty"` // in-plan units reserved in Rec.WindowStart
	WeekReserved int64        `msgpack:"kres,omitempty"` // in-plan units reserved in Rec.WeekStart
	Held         money.Amount `msgpack:"held,omitempty"` // paid calls' estimates plus credit holds
	// Lost are the reservations a Late settle billed without finding them (their admission
	// was answered by a shard leader that lost it), each until it would have expired: an
	// admission of one that applies after all (proposed late) reserves nothing. Nil when
	// none, as for nearly every account (a pointer: an active account's actor holds an
	// Account, and fits a size class).
	Lost *LostCalls `msgpack:"lost,omitempty"`
}

// LostCalls are an account's reservations billed by Late settles.
type LostCalls struct {
	Calls []LostCall `msgpack:"calls"`
}

// LostCall is a reservation billed by a Late settle, remembered until Until (unix ns).
type LostCall struct {
	ID    uint64 `msgpack:"id"`
	Until int64  `msgpack:"until"`
}

// Call is one admitted, unsettled call and what it reserved.
type Call struct {
	ID        uint64       `msgpack:"id"`
	Plan      Plan         `msgpack:"plan"` // the plan it was admitted under: its settle rolls and charges by it
	Units     int64        `msgpack:"u"`
	InPlan    bool         `msgpack:"in,omitempty"`
	WinStart  int64        `msgpack:"ws,omitempty"` // the periods its units were reserved in
	WeekStart int64        `msgpack:"wk,omitempty"`
	Paid      bool         `msgpack:"paid,omitempty"` // beyond the plan
	Hold      money.Amount `msgpack:"hold,omitempty"` // estimated cost held
	Expires   int64        `msgpack:"exp"`            // unix ns
	Key       string       `msgpack:"key"`            // the calling key
	At        int64        `msgpack:"at"`             // its slot in the sliding windows: its arrival (unix ns)
	Epoch     uint32       `msgpack:"ep,omitempty"`   // the key's load-history epoch it was counted in
	// Budgeted: its key had a budget when it was admitted; KeyHold is the estimate it holds
	// against that budget until it settles.
	Budgeted bool         `msgpack:"kb,omitempty"`
	KeyHold  money.Amount `msgpack:"kh,omitempty"`
	// Node and Inc are the cluster node that admitted it and that node's incarnation (a
	// random number of each start); 0 on a single node. A node started again cannot
	// settle its earlier incarnation's calls: ReleaseOrphans frees what they hold.
	Node uint64 `msgpack:"nd,omitempty"`
	Inc  uint64 `msgpack:"inc,omitempty"`
}

// Key is one key's sliding window (burst per key, and the throttle cap) and load history.
type Key struct {
	ID             string   `msgpack:"id"`
	Recent         Slide    `msgpack:"r,omitempty"`
	Act            Activity `msgpack:"a"`
	Epoch          uint32   `msgpack:"ep,omitempty"`  // bumped when the load history starts over (a throttle begins)
	ThrottledUntil int64    `msgpack:"thr,omitempty"` // unix ns
	// RPM is the key's own sliding window (persistence.KeyLimits.RPM): the calls counted
	// while the key had an rpm, the newest rpm of them.
	RPM Slide `msgpack:"rpm,omitempty"`
}

// key is key id's state, added when it has none. The pointer is into Keys: good until the
// next key is added.
func (a *Account) key(id string) *Key {
	i, ok := a.keyIndex(id)
	if !ok {
		a.Keys = slices.Insert(a.Keys, i, Key{ID: id})
	}
	return &a.Keys[i]
}

// findKey is key id's state, nil when it has none.
func (a *Account) findKey(id string) *Key {
	if i, ok := a.keyIndex(id); ok {
		return &a.Keys[i]
	}
	return nil
}

func (a *Account) keyIndex(id string) (int, bool) {
	return slices.BinarySearchFunc(a.Keys, id, func(k Key, id string) int { return strings.Compare(k.ID, id) })
}

// call finds an unsettled call by id.
func (a *Account) call(id uint64) (int, bool) {
	lo, hi := 0, len(a.Calls)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if a.Calls[m].ID < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(a.Calls) && a.Calls[lo].ID == id
}

// lost reports whether reservation id was billed by a Late settle, forgetting those past
// their time first.
func (a *Account) lost(id uint64, now int64) bool {
	if a.Lost == nil {
		return false
	}
	if a.Lost.Calls = slices.DeleteFunc(a.Lost.Calls, func(l LostCall) bool { return l.Until <= now }); len(a.Lost.Calls) == 0 {
		a.Lost = nil
		return false
	}
	return slices.ContainsFunc(a.Lost.Calls, func(l LostCall) bool { return l.ID == id })
}

// remember records reservation id as billed Late, until until.
func (a *Account) remember(id uint64, until int64) {
	if a.Lost == nil {
		a.Lost = &LostCalls{}
	}
	a.Lost.Calls = append(a.Lost.Calls, LostCall{ID: id, Until: until})
}

// addCall adds h to Calls, kept in ascending ID order (a proposer's id, Command.Res, may
// be below the last).
func (a *Account) addCall(h Call) {
	i, _ := a.call(h.ID)
	a.Calls = slices.Insert(a.Calls, i, h)
}

// KeyRecord is a key's durable throttle state (nil: nothing worth keeping), as the single
// node stores it per key.
func (a *Account) KeyRecord(id string) *persistence.KeyQuota { return keyRecordOf(a.findKey(id)) }

// keyRecordOf is KeyRecord of one key's state (nil: none).
func keyRecordOf(ks *Key) *persistence.KeyQuota {
	if ks == nil || ks.Epoch == 0 && ks.ThrottledUntil == 0 && ks.Act.sum() == 0 {
		return nil
	}
	n := ks.Act.N
	return &persistence.KeyQuota{Epoch: ks.Epoch, ThrottledUntil: ks.ThrottledUntil, Width: ks.Act.Width, Last: ks.Act.Last, Buckets: n[:]}
}

// keyRecordsEqual reports whether two durable key states are the same (nil: none).
func keyRecordsEqual(a, b *persistence.KeyQuota) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Epoch == b.Epoch && a.ThrottledUntil == b.ThrottledUntil && a.Width == b.Width && a.Last == b.Last && slices.Equal(a.Buckets, b.Buckets)
}

package meta

import (
	"context"
	"fmt"
	"time"
)

// Read leases: how a node answers key checks, logins and sessions from its own replica
// without a consensus round, and a revocation still holds everywhere when it returns.
//
// Each node renews its lease by proposing a lease entry (KindLease) carrying its node id, a
// token and the index its replica had applied when it proposed. The node takes the time t0
// just before proposing; once its own replica applies that entry, it may read locally until
// t0 + LeaseDuration (Holder). The entry itself changes no stored state.
//
// A write returns only when every node either has applied it or holds no lease that could
// predate it (WaitLeases): for each node, the newest lease entry this replica has applied
// either says the node had applied the write when it proposed (Applied ≥ the write's index),
// or was applied here at least LeaseDuration ago. That is safe on any clock whose rate is
// close to real time: this replica applied the entry after it was proposed, so every lease
// the node could be reading under has ended by then. Nodes renew at once when they apply a
// write (the acknowledgement), so a write waits about two commit rounds, and a dead or cut-off
// node makes writes wait at most LeaseDuration after its last renewal.

// KindLease renews a node's read lease (Lease).
const KindLease Kind = "lease"

// Lease timings. A renewal goes out every RenewEvery and on every applied write; a lease
// lasts LeaseDuration from just before its renewal was proposed, so an election of the
// metadata shard's leader (under a second) ends no lease, and a node that stops renewing is
// waited for at most that long by writes.
const (
	LeaseDuration = 2 * time.Second
	RenewEvery    = 400 * time.Millisecond
	// leaseSlack covers clocks that run at slightly different rates on two nodes.
	leaseSlack = 50 * time.Millisecond
)

// waitsForLeases says whether a write of kind returns only once every lease holder has it,
// and so whether a node renews at once when it applies one (its acknowledgement). A
// session's last-seen time restricts nothing; a renewal is no write.
func waitsForLeases(kind Kind) bool { return kind != KindTouchSession && kind != KindLease }

// LeaseRenewal is a lease entry's payload.
type LeaseRenewal struct {
	Node  uint64 `msgpack:"node"`
	Token uint64 `msgpack:"token"` // the renewing process's, so it finds its own
	// Applied is the index the renewing node's replica had applied when it proposed.
	Applied uint64 `msgpack:"applied"`
}

// leaseSeen is the newest lease entry of one node this replica applied, and when.
type leaseSeen struct {
	applied uint64
	at      time.Time
}

// OnLease registers f, called after each Update has committed, for every lease entry it
// applied, on the engine's apply goroutine.
func (m *StateMachine) OnLease(f func(LeaseRenewal)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onLease = append(m.onLease, f)
}

// noteLeasesLocked records renewals applied at now. m.mu is held.
func (m *StateMachine) noteLeasesLocked(renewed []LeaseRenewal, now time.Time) {
	for _, r := range renewed {
		seen := m.leases[r.Node]
		seen.applied, seen.at = max(seen.applied, r.Applied), now
		m.leases[r.Node] = seen
	}
}

// forgetLeases is what a replica knows of leases after it opened or recovered: none, so
// every lease granted before is waited out (leases are not stored). A replica that has
// applied nothing has seen no lease, and waits for none.
func (m *StateMachine) forgetLeases(now time.Time, applied uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.leases = map[uint64]leaseSeen{}
	if applied > 0 {
		m.blindUntil = now.Add(LeaseDuration + leaseSlack)
	}
}

// WaitLeases returns once no node other than self can read, under its lease, a state older
// than index: each has renewed after applying index, or its last renewal this replica
// applied is more than a lease old. This replica must itself have applied index.
func (m *StateMachine) WaitLeases(ctx context.Context, index, self uint64) error {
	for {
		m.mu.Lock()
		now := time.Now()
		wait := m.blindUntil.Sub(now)
		for node, l := range m.leases {
			if node == self || l.applied >= index {
				continue
			}
			wait = max(wait, l.at.Add(LeaseDuration+leaseSlack).Sub(now))
		}
		changed := m.changed
		m.mu.Unlock()
		if wait <= 0 {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("meta: index %d is not yet applied on every node holding a read lease: %w", index, ctx.Err())
		}
		t.Stop()
	}
}

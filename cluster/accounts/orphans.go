package accounts

import (
	"encoding/binary"
	"fmt"
	"maps"
	"strconv"

	"github.com/modelgate/modelgate/actors/quota/step"
)

// Orphaned calls. Every call a cluster node admits carries the node's id and incarnation
// (a random number of each process, step.Call.Node/Inc), and each process publishes its
// incarnation in every account shard when it starts (NodeAddr.Inc):
//
//	acctshard/<shard>/inc/<node id, 20 digits> → the node's latest incarnation, 8 bytes big-endian
//
// A call whose node has published another incarnation since cannot be settled: the
// process that would have settled it is gone (kill -9, a crash). Before each step of an
// account, and each view of it, the shard releases such calls (step.ReleaseOrphans), as it
// releases expired ones: at the same log position on every replica, with no timer. So a
// killed node's calls stop holding their accounts' credit and allowance as soon as it has
// started again and published, instead of for the reservation TTL. The key is in the
// shard's namespace, so snapshots carry it; Open reads every node's back.

// goneInc is the incarnation of a removed node (NodeAddr.Gone): no process has it (a node
// never draws it, newIncarnation), so every call of the node is released.
const goneInc = ^uint64(0)

// incarnations is each node's latest published incarnation, replaced whole on a change
// (rare: once per node start), so that Lookup reads it while an Update runs.
type incarnations = map[uint64]uint64

func (m *StateMachine) incKey(node uint64) []byte {
	return m.key("inc/", fmt.Sprintf("%020d", node))
}

// loadIncarnations reads every node's published incarnation for Update and Lookup.
func (m *StateMachine) loadIncarnations() error {
	incs, err := m.readIncarnations()
	if err != nil {
		return err
	}
	m.incs.Store(incs)
	return nil
}

// incarnationsNow is what loadIncarnations keeps, read from the store when it has kept
// nothing (a state machine never opened).
func (m *StateMachine) incarnationsNow() (*incarnations, error) {
	if incs := m.incs.Load(); incs != nil {
		return incs, nil
	}
	return m.readIncarnations()
}

// readIncarnations reads every node's published incarnation from the store.
func (m *StateMachine) readIncarnations() (*incarnations, error) {
	incs := incarnations{}
	view := m.store.ViewShard()
	defer view.Close()
	prefix := m.key("inc/")
	err := view.ScanRaw(prefix, func(k, v []byte) error {
		node, err := strconv.ParseUint(string(k[len(prefix):]), 10, 64)
		if err != nil || len(v) != 8 {
			return fmt.Errorf("an incarnation key %q of %d bytes", k, len(v))
		}
		incs[node] = binary.BigEndian.Uint64(v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("accounts: shard %d: read the nodes' incarnations: %w", m.shard, err)
	}
	return &incs, nil
}

// live says whether inc is node's latest incarnation this replica has applied (a node that
// never published one is taken as live).
func live(incs *incarnations) func(node, inc uint64) bool {
	return func(node, inc uint64) bool {
		latest, ok := (*incs)[node]
		return !ok || latest == inc
	}
}

// incarnation applies a node's new incarnation: written in this Update's batch, and seen by
// the steps after it in the Update at once (u.incs), by everything else once it commits.
func (u *update) incarnation(node, inc uint64) error {
	if u.incs == nil {
		now, err := u.m.incarnationsNow()
		if err != nil {
			return err
		}
		cur := maps.Clone(*now)
		u.incs = &cur
	}
	(*u.incs)[node] = inc
	return u.b.SetRaw(u.m.incKey(node), binary.BigEndian.AppendUint64(nil, inc))
}

// currentIncs is the incarnations the next step of this Update sees.
func (u *update) currentIncs() (*incarnations, error) {
	if u.incs != nil {
		return u.incs, nil
	}
	return u.m.incarnationsNow()
}

// releaseOrphans releases a's calls of superseded incarnations (see the top of this file).
func releaseOrphans(a *step.Account, incs *incarnations) []uint64 {
	if incs == nil || len(a.Calls) == 0 || len(*incs) == 0 {
		return nil
	}
	return step.ReleaseOrphans(a, live(incs))
}

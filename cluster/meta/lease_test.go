package meta

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
)

// leaseEntry is an encoded renewal of node's lease at applied.
func leaseEntry(t *testing.T, node, token, applied uint64) []byte {
	return enc(t, Command{ID: NewCommandID(), Kind: KindLease, Lease: &LeaseRenewal{Node: node, Token: token, Applied: applied}})
}

// newAccountEntry is an encoded account creation: a write.
func newAccountEntry(t *testing.T) []byte {
	s, _ := openStore(t)
	a, err := s.PrepareAccount("ada@example.com", "free")
	if err != nil {
		t.Fatal(err)
	}
	return enc(t, Command{ID: NewCommandID(), Kind: KindCreateAccount, Account: &a})
}

// waitsAtLeast reports whether WaitLeases(index, self) is still waiting after d.
func waitsAtLeast(sm *StateMachine, index, self uint64, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return sm.WaitLeases(ctx, index, self) != nil
}

// A write waits for a node whose newest renewal predates it, and not for a node that renewed
// after applying it, nor for the writer itself.
func TestWaitLeasesWaitsForEveryNodeThatMayReadAnOlderState(t *testing.T) {
	write := newAccountEntry(t)
	cases := []struct {
		name    string
		renewed [][3]uint64 // node, token, applied: entries before the write (index 1…)
		after   [][3]uint64 // entries after the write
		self    uint64
		waits   bool
	}{
		{name: "no lease seen", waits: false},
		{name: "a renewal before the write", renewed: [][3]uint64{{2, 7, 0}}, self: 1, waits: true},
		{name: "the writer's own renewal", renewed: [][3]uint64{{1, 7, 0}}, self: 1, waits: false},
		{name: "renewed after applying the write", renewed: [][3]uint64{{2, 7, 0}}, after: [][3]uint64{{2, 8, 2}}, self: 1, waits: false},
		{name: "renewed after the write, proposed before applying it", renewed: [][3]uint64{{2, 7, 0}}, after: [][3]uint64{{2, 8, 1}}, self: 1, waits: true},
		{name: "one of two still behind", renewed: [][3]uint64{{2, 7, 0}, {3, 9, 0}}, after: [][3]uint64{{2, 8, 3}}, self: 1, waits: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sm, _ := newReplica(t)
			var cmds [][]byte
			for _, r := range tc.renewed {
				cmds = append(cmds, leaseEntry(t, r[0], r[1], r[2]))
			}
			cmds = append(cmds, write)
			writeIndex := uint64(len(cmds))
			for _, r := range tc.after {
				cmds = append(cmds, leaseEntry(t, r[0], r[1], r[2]))
			}
			update(t, sm, entries(1, cmds...))
			if got := waitsAtLeast(sm, writeIndex, tc.self, 100*time.Millisecond); got != tc.waits {
				t.Fatalf("still waiting after 100ms: %v, want %v", got, tc.waits)
			}
		})
	}
}

// A lease seen is waited out: a node that stops renewing holds writes up at most one lease
// length after the renewal was applied here.
func TestWaitLeasesEndsOneLeaseAfterTheLastRenewal(t *testing.T) {
	sm, _ := newReplica(t)
	update(t, sm, entries(1, leaseEntry(t, 2, 1, 0), newAccountEntry(t)))
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*LeaseDuration)
	defer cancel()
	if err := sm.WaitLeases(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < LeaseDuration || d > LeaseDuration+500*time.Millisecond {
		t.Fatalf("waited %s, want one lease (%s) and a little", d, LeaseDuration)
	}
}

// A replica that reopens knows no lease, so it waits one lease length before its writes
// return; a replica that never applied anything has seen no lease and waits for none.
func TestAReopenedReplicaWaitsOutTheLeasesItForgot(t *testing.T) {
	sm, s := newReplica(t)
	if waitsAtLeast(sm, 0, 1, 50*time.Millisecond) {
		t.Fatal("a fresh replica waits for leases it cannot have seen")
	}
	update(t, sm, entries(1, leaseEntry(t, 2, 1, 0)))
	again := NewStateMachine(s)
	if _, err := again.Open(); err != nil {
		t.Fatal(err)
	}
	if !waitsAtLeast(again, 1, 1, 100*time.Millisecond) {
		t.Fatal("a reopened replica does not wait for the leases granted before it stopped")
	}
}

// A renewal changes nothing stored but the applied index, and a malformed one is refused.
func TestALeaseRenewalWritesNothing(t *testing.T) {
	sm, s := newReplica(t)
	update(t, sm, entries(1, newAccountEntry(t)))
	before := scan(t, s)
	es := update(t, sm, entries(2, leaseEntry(t, 2, 1, 1), enc(t, Command{ID: NewCommandID(), Kind: KindLease})))
	after := scan(t, s)
	drop := func(lines []string) []string {
		return slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return l[:len(`"metashard/applied"`)] == `"metashard/applied"` })
	}
	if !slices.Equal(drop(before), drop(after)) || len(before) != len(after) {
		t.Fatalf("a renewal changed the stored state:\nbefore %q\nafter  %q", before, after)
	}
	if r := result(t, es[1]); r.Refusal == nil || r.Refusal.Kind != "invalid" {
		t.Fatalf("a renewal without a node: %+v, want refused as invalid", r)
	}
}

// A node holds its lease once its own renewal is applied on its replica, never on another
// node's renewal, and not while its renewals cannot commit.
func TestAHolderIsValidOnlyOnceItsOwnRenewalApplied(t *testing.T) {
	l := newTestLog(t, 2)
	a, b := l.nodes[0], l.nodes[1]
	ha, hb := NewHolder(1, a.sm, a, 1), NewHolder(2, b.sm, b, 1)
	if ha.Valid() || hb.Valid() {
		t.Fatal("valid before any renewal")
	}
	l.down = true
	ha.renew()
	if ha.Valid() {
		t.Fatal("valid after a renewal that did not commit")
	}
	l.down = false
	ha.renew()
	if !ha.Valid() || hb.Valid() {
		t.Fatalf("after node 1 renewed: node 1 valid %v, node 2 valid %v; want true, false", ha.Valid(), hb.Valid())
	}
}

// Every node reads keys from its replica under its lease, and a revocation returns only when
// every node refuses the key: at once when every node renews on applying it, after the lease
// of a node that applies nothing has run out.
func TestARevocationReturnsWhenEveryLeaseHolderRefusesTheKey(t *testing.T) {
	cases := []struct {
		name    string
		stuck   bool // node 3 renewed once, then applies nothing and renews no more
		atLeast time.Duration
		atMost  time.Duration
	}{
		{name: "every node renews", atMost: time.Second},
		{name: "a node stopped", stuck: true, atLeast: LeaseDuration - RenewEvery - 100*time.Millisecond, atMost: LeaseDuration + time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newTestLog(t, 3)
			var holders []*Holder
			for i, n := range l.nodes {
				h := NewHolder(uint64(i+1), n.sm, n, 1)
				n.store.Node, n.store.Lease = uint64(i+1), h
				holders = append(holders, h)
				go h.Run()
				t.Cleanup(h.Close)
			}
			acct, err := l.nodes[0].store.CreateAccount("kim@example.com", "free")
			if err != nil {
				t.Fatal(err)
			}
			key, secret, err := l.nodes[0].store.CreateKey(acct.ID, persistence.KeySpec{Name: "k"})
			if err != nil {
				t.Fatal(err)
			}
			if tc.stuck {
				holders[2].Close()
				l.mu.Lock()
				l.nodes[2].held = true
				l.mu.Unlock()
			}
			start := time.Now()
			if _, err := l.nodes[0].store.RevokeKey(key.ID); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			if took < tc.atLeast || took > tc.atMost {
				t.Errorf("the revocation returned after %s, want between %s and %s", took, tc.atLeast, tc.atMost)
			}
			for i, n := range l.nodes {
				if !holders[i].Valid() {
					continue
				}
				if k, err := n.local.LookupKey(secret); err == nil && k.RevokedAt == 0 {
					t.Errorf("node %d holds its lease and its replica still accepts the revoked key", i+1)
				} else if err != nil && !errors.Is(err, persistence.ErrNotFound) && !errors.Is(err, persistence.ErrDisabled) {
					t.Errorf("node %d: %v", i+1, err)
				}
			}
			if tc.stuck && holders[2].Valid() {
				t.Error("the stuck node still holds its lease when the revocation returned")
			}
		})
	}
}

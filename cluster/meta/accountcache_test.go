package meta

import (
	"bytes"
	"testing"

	"github.com/modelgate/modelgate/persistence"
)

// A node reads accounts' plans from its replica through the store's cache (what every
// admitted call reads). A change proposed through any node is read by every node that has
// applied it, though each read, and cached, the plan just before.
func TestEveryNodeReadsAnAccountChangeOnceItHasAppliedIt(t *testing.T) {
	l := newTestLog(t, 2)
	n1, n2 := l.nodes[0], l.nodes[1]
	acct := must(n1.store.CreateAccount("dee@example.com", "free"))(t)
	steps := []struct {
		name     string
		via      *testNode
		change   func(s *Store) (persistence.Account, error)
		plan     string
		disabled bool
	}{
		{"plan change through node 1", n1, func(s *Store) (persistence.Account, error) { return s.SetAccountPlan(acct.ID, "pro") }, "pro", false},
		{"disable through node 2", n2, func(s *Store) (persistence.Account, error) { return s.SetAccountDisabled(acct.ID, true) }, "pro", true},
		{"enable through node 1", n1, func(s *Store) (persistence.Account, error) { return s.SetAccountDisabled(acct.ID, false) }, "pro", false},
		{"plan change through node 2", n2, func(s *Store) (persistence.Account, error) { return s.SetAccountPlan(acct.ID, "team") }, "team", false},
	}
	for _, st := range steps {
		for _, n := range l.nodes {
			must(n.store.local.AccountPlan(acct.ID))(t) // cached as it was
		}
		must(st.change(st.via.store))(t)
		for i, n := range l.nodes {
			plan := must(n.store.local.AccountPlan(acct.ID))(t)
			got := must(n.store.GetAccount(acct.ID))(t)
			if plan != st.plan || got.Plan != st.plan || got.Disabled != st.disabled {
				t.Errorf("%s: node %d reads plan %q (record: %q, disabled %t), want %q %t", st.name, i+1, plan, got.Plan, got.Disabled, st.plan, st.disabled)
			}
		}
	}
}

// A node behind the log reads what it has applied (the change is not its yet), and the
// change as soon as it applies it: by entries, or by recovering from a snapshot.
func TestALaggingNodeReadsAnAccountChangeWhenItCatchesUp(t *testing.T) {
	l := newTestLog(t, 2)
	n1, n2 := l.nodes[0], l.nodes[1]
	acct := must(n1.store.CreateAccount("eve@example.com", "free"))(t)
	must(n2.store.local.AccountPlan(acct.ID))(t)
	n2.held = true
	must(n1.store.SetAccountPlan(acct.ID, "pro"))(t)
	if plan := must(n2.store.local.AccountPlan(acct.ID))(t); plan != "free" {
		t.Fatalf("the held node reads plan %q before applying the change, want free (the test holds nothing)", plan)
	}
	must(n2.store.CreateAccount("other@example.com", "free"))(t) // its proposal applies its queue first
	if plan := must(n2.store.local.AccountPlan(acct.ID))(t); plan != "pro" {
		t.Fatalf("node 2 reads plan %q after applying the change, want pro", plan)
	}

	// Recovery from a snapshot replaces the replica's accounts wholesale.
	must(n1.store.SetAccountDisabled(acct.ID, true))(t)
	var buf bytes.Buffer
	if err := n1.sm.SaveSnapshot(must(n1.sm.PrepareSnapshot())(t), &buf); err != nil {
		t.Fatal(err)
	}
	fresh, freshStore := newReplica(t)
	update(t, fresh, entries(1, l.sent[0])) // only the account's creation
	if got := must(freshStore.GetAccount(acct.ID))(t); got.Plan != "free" || got.Disabled || must(freshStore.AccountPlan(acct.ID))(t) != "free" {
		t.Fatalf("a replica with only the creation reads %+v", got)
	}
	if err := fresh.RecoverFromSnapshot(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if got, plan := must(freshStore.GetAccount(acct.ID))(t), must(freshStore.AccountPlan(acct.ID))(t); plan != "pro" || got.Plan != "pro" || !got.Disabled {
		t.Fatalf("after recovering from the snapshot the replica reads plan %q (record: %q, disabled %t), want pro, disabled", plan, got.Plan, got.Disabled)
	}
}

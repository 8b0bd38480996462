package persistence

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// Every write of an account record, once it has returned, is what the next AccountPlan and
// GetAccount give, though the read before it put the old plan in the cache.
func TestAccountPlanAfterEveryAccountWrite(t *testing.T) {
	type check struct {
		plan     string
		disabled bool
	}
	cases := []struct {
		name  string
		write func(t *testing.T, s *Store, a Account)
		want  check
	}{
		{"plan change", func(t *testing.T, s *Store, a Account) {
			must(s.SetAccountPlan(a.ID, "team"))(t)
		}, check{"team", false}},
		{"disable", func(t *testing.T, s *Store, a Account) {
			must(s.SetAccountDisabled(a.ID, true))(t)
		}, check{"pro", true}},
		{"enable after disable", func(t *testing.T, s *Store, a Account) {
			must(s.SetAccountDisabled(a.ID, true))(t)
			if got := must(s.GetAccount(a.ID))(t); !got.Disabled {
				t.Fatalf("GetAccount after the disable = %+v, want it disabled", got)
			}
			must(s.AccountPlan(a.ID))(t) // cached again
			must(s.SetAccountDisabled(a.ID, false))(t)
		}, check{"pro", false}},
		{"plan change in a batch of its own (UpdateMeta, as a replica applies it)", func(t *testing.T, s *Store, a Account) {
			err := s.UpdateMeta(func(b *MetaBatch) error {
				_, err := b.SetAccountPlan(PlanChange{AccountID: a.ID, Plan: "free"})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}, check{"free", false}},
		{"metadata replaced by an older view (a replica's snapshot recovery)", func(t *testing.T, s *Store, a Account) {
			v, err := s.ViewMeta()
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			must(s.SetAccountPlan(a.ID, "team"))(t)
			must(s.AccountPlan(a.ID))(t) // cached "team"
			err = s.ReplaceMeta(nil, func(put func(k, v []byte) error) error {
				return v.Scan(func(k, val []byte) error { return put(k, val) })
			})
			if err != nil {
				t.Fatal(err)
			}
		}, check{"pro", false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := openStore(t)
			a := must(s.CreateAccount("ada@example.com", "pro"))(t)
			if got := must(s.GetAccount(a.ID))(t); got != a {
				t.Fatalf("GetAccount = %+v, want %+v", got, a)
			}
			if plan := must(s.AccountPlan(a.ID))(t); plan != "pro" {
				t.Fatalf("AccountPlan = %q, want pro", plan)
			}
			if _, ok := s.accounts.get(a.ID); !ok {
				t.Fatal("a read did not keep the account's plan in the cache")
			}
			c.write(t, s, a)
			if plan := must(s.AccountPlan(a.ID))(t); plan != c.want.plan {
				t.Errorf("AccountPlan after the write = %q, want %q", plan, c.want.plan)
			}
			got := must(s.GetAccount(a.ID))(t)
			if got.Plan != c.want.plan || got.Disabled != c.want.disabled {
				t.Errorf("GetAccount after the write = plan %q disabled %t, want %q %t", got.Plan, got.Disabled, c.want.plan, c.want.disabled)
			}
			if got.ID != a.ID || got.Email != a.Email || got.CreatedAt != a.CreatedAt {
				t.Errorf("GetAccount after the write = %+v, want the same account", got)
			}
		})
	}
}

// A read that began before a write and finishes after it (it read the old record) keeps
// nothing: the write dropped the account meanwhile.
func TestAReadThatRacedAWriteKeepsNothing(t *testing.T) {
	s, _ := openStore(t)
	a := must(s.CreateAccount("ada@example.com", "pro"))(t)
	gen := s.accounts.generation()
	old := must(getAccountIn(s.db, a.ID))(t) // the read's store half, before the write
	must(s.SetAccountPlan(a.ID, "team"))(t)
	s.accounts.put(old.ID, cachedPlan{plan: old.Plan}, gen) // its cache half, after
	if e, ok := s.accounts.get(a.ID); ok {
		t.Fatalf("the cache kept plan %q, read before the plan change", e.plan)
	}
	if plan := must(s.AccountPlan(a.ID))(t); plan != "team" {
		t.Errorf("AccountPlan = %q, want team", plan)
	}
}

// Readers hammering accounts while their plans change: a read that begins after a change
// returned never gives an older plan.
func TestAccountPlanUnderConcurrentPlanChanges(t *testing.T) {
	s, _ := openStore(t)
	const accounts, changes = 4, 40
	var ids []string
	for i := range accounts {
		ids = append(ids, must(s.CreateAccount(fmt.Sprintf("u%d@example.com", i), "p0"))(t).ID)
	}
	var last [accounts]atomic.Int64 // the newest plan number whose change returned
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var stale atomic.Value
	for r := range 4 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				i := (r + n) % accounts
				floor := last[i].Load()
				plan, err := s.AccountPlan(ids[i])
				if err != nil {
					stale.Store(err.Error())
					return
				}
				var got int64
				fmt.Sscanf(plan, "p%d", &got)
				if got < floor {
					stale.Store(fmt.Sprintf("%s: plan p%d after p%d returned", ids[i], got, floor))
				}
			}
		})
	}
	for n := 1; n <= changes; n++ {
		i := n % accounts
		must(s.SetAccountPlan(ids[i], fmt.Sprintf("p%d", n)))(t)
		last[i].Store(int64(n))
	}
	close(stop)
	wg.Wait()
	if v := stale.Load(); v != nil {
		t.Fatal(v)
	}
}

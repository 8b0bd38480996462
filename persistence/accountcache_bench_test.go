package persistence

import "testing"

// BenchmarkAccountPlanCached is the plan read every admitted call makes, from the cache:
// the plan and its scheduled move, and the clock read that picks between them.
func BenchmarkAccountPlanCached(b *testing.B) {
	s, _ := openStore(b)
	a, err := s.CreateAccount("ada@example.com", "pro")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.AccountPlan(a.ID); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if plan, err := s.AccountPlan(a.ID); err != nil || plan != "pro" {
				b.Fatal(plan, err)
			}
		}
	})
}

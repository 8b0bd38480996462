package quota

import (
	"context"
	"sync/atomic"
	"testing"
)

// expectingStore sums what the service tells the group commit about writes on their way.
type expectingStore struct {
	Store
	n atomic.Int64
}

func (s *expectingStore) ExpectWrite(delta int) {
	s.n.Add(int64(delta))
	s.Store.ExpectWrite(delta)
}

// An admitted call is a write on its way until its settle; a refused one never is.
func TestAdmittedCallsAreWritesOnTheirWayUntilSettled(t *testing.T) {
	e := newEnv(t, Config{})
	st := &expectingStore{Store: e.store}
	svc := NewService(st, e.cfg)
	defer svc.Close(context.Background())
	ctx := context.Background()
	p := plan(t, "{name: p, window_requests: 2}")
	var reservations []Reservation
	for i, want := range []struct {
		admitted bool
		expected int64
	}{{true, 1}, {true, 2}, {false, 2}} {
		d, err := svc.Admit(ctx, AdmitRequest{Account: "acct_x", KeyID: "k", Plan: p, At: e.clk.Now()})
		if err != nil || d.Admitted != want.admitted || st.n.Load() != want.expected {
			t.Fatalf("admission %d: admitted %v (%v), %d on their way; want %v, %d", i, d.Admitted, err, st.n.Load(), want.admitted, want.expected)
		}
		if d.Admitted {
			reservations = append(reservations, d.Reservation)
		}
	}
	for i, r := range reservations {
		if _, err := svc.Settle(ctx, r, Outcome{Counts: true, Log: e.entry("k", e.clk.Now())}); err != nil {
			t.Fatal(err)
		}
		if got, want := st.n.Load(), int64(len(reservations)-1-i); got != want {
			t.Fatalf("after settle %d: %d on their way, want %d", i, got, want)
		}
	}
}

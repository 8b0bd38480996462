package node

import (
	"net/http"
	"testing"
	"time"
)

func TestReadinessVerdict(t *testing.T) {
	ready := readyState{cluster: true, caughtUp: true, storeWritable: true}
	with := func(f func(*readyState)) readyState { s := ready; f(&s); return s }
	cases := []struct {
		name   string
		state  readyState
		code   int
		status string
	}{
		{"a caught-up node with leaders", ready, http.StatusOK, "ok"},
		{"a single node", readyState{storeWritable: true}, http.StatusOK, "ok"},
		{"draining", with(func(s *readyState) { s.draining = true }), http.StatusServiceUnavailable, "draining"},
		{"replicas still catching up", with(func(s *readyState) { s.caughtUp = false }), http.StatusServiceUnavailable, "starting"},
		{"an election under way", with(func(s *readyState) { s.metaLeaderless = 400 * time.Millisecond }), http.StatusOK, "ok"},
		{"no leader for as long as a call waits", with(func(s *readyState) { s.metaLeaderless = readyGrace }), http.StatusOK, "ok"},
		{"no leader for longer", with(func(s *readyState) { s.metaLeaderless = readyGrace + time.Millisecond }), http.StatusServiceUnavailable, "unavailable"},
		{"account shards without a leader", with(func(s *readyState) { s.leaderlessShard = []uint64{3} }), http.StatusOK, "ok"},
		{"a full disk", with(func(s *readyState) { s.storeWritable = false }), http.StatusServiceUnavailable, "degraded"},
		{"a full disk on a single node", readyState{}, http.StatusServiceUnavailable, "degraded"},
		{"draining wins over the rest", with(func(s *readyState) { s.draining, s.caughtUp, s.storeWritable = true, false, false }), http.StatusServiceUnavailable, "draining"},
	}
	for _, tc := range cases {
		code, status := tc.state.verdict()
		if code != tc.code || status != tc.status {
			t.Errorf("%s: %d %q, want %d %q", tc.name, code, status, tc.code, tc.status)
		}
	}
}

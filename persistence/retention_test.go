package persistence

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// retentionLog writes, for two accounts, one entry an hour over four days before now (ids of
// the gateway's and of another shape), and returns them.
func retentionLog(t *testing.T, s *Store, now time.Time) []LogEntry {
	t.Helper()
	var all []LogEntry
	for _, acct := range []string{"acct_a", "acct_b"} {
		for h := 96; h >= 1; h-- {
			e := entry(acct, "", 0)
			e.Time = now.Add(-time.Duration(h) * time.Hour).UnixNano()
			e.RequestID = "req_" + acct[5:] + "00000000000000000000" + string(rune('a'+h%6)) + string(rune('0'+h/10)) + string(rune('0'+h%10))
			if h%5 == 0 {
				e.RequestID = "video_" + acct + "_" + string(rune('0'+h/10)) + string(rune('0'+h%10))
			}
			e.Counted = true
			all = append(all, e)
		}
	}
	if err := s.AppendLog(all); err != nil {
		t.Fatal(err)
	}
	if !isGatewayRID(all[0].RequestID) || isGatewayRID(all[1].RequestID) {
		t.Fatalf("ids %q, %q: want a gateway one and another", all[0].RequestID, all[1].RequestID)
	}
	return all
}

// Retention deletes the entries older than its cutoff and their index pairs, and nothing
// younger: the window's entries, totals, by-id reads and burst slots read as before.
func TestPruneLogDeletesOnlyEntriesOlderThanTheCutoff(t *testing.T) {
	s, _ := openStore(t)
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	all := retentionLog(t, s, now)
	before := now.Add(-48 * time.Hour).UnixNano()
	cutoff := LogCutoff(before)
	if cutoff > before || before-cutoff >= 1<<logIDWindowBits {
		t.Fatalf("cutoff %d for %d", cutoff, before)
	}
	windowTotals := func() map[string]LogTotals {
		out := map[string]LogTotals{}
		for _, a := range []string{"acct_a", "acct_b"} {
			p, err := s.QueryLog(LogQuery{Account: a, From: time.Unix(0, cutoff)})
			if err != nil {
				t.Fatal(err)
			}
			out[a] = p.Totals
		}
		return out
	}
	totalsBefore := windowTotals()
	slotsBefore, err := s.CountedSince("acct_a", now.Add(-2*time.Hour).UnixNano())
	if err != nil {
		t.Fatal(err)
	}

	n, err := s.PruneLog(before)
	if err != nil {
		t.Fatal(err)
	}
	var kept, gone []LogEntry
	for _, e := range all {
		if e.Time < cutoff {
			gone = append(gone, e)
		} else {
			kept = append(kept, e)
		}
	}
	if n != len(gone) || len(gone) != 2*48 {
		t.Errorf("pruned %d, want %d (48 an account)", n, len(gone))
	}
	var got []LogEntry
	for _, a := range []string{"acct_a", "acct_b"} {
		es, err := s.ListLog(a, time.Time{}, time.Time{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, es...)
	}
	if !reflect.DeepEqual(got, kept) {
		t.Errorf("after pruning: %d entries, want the %d younger ones", len(got), len(kept))
	}
	if tb := windowTotals(); !reflect.DeepEqual(tb, totalsBefore) {
		t.Errorf("window totals %+v, want %+v as before", tb, totalsBefore)
	}
	if slots, err := s.CountedSince("acct_a", now.Add(-2*time.Hour).UnixNano()); err != nil || !reflect.DeepEqual(slots, slotsBefore) {
		t.Errorf("CountedSince = %v, %v; want %v", slots, err, slotsBefore)
	}
	for _, e := range kept {
		if got, err := s.LogEntry(e.AccountID, e.RequestID); err != nil || !reflect.DeepEqual(got, e) {
			t.Errorf("LogEntry(%s) of a kept entry = %+v, %v", e.RequestID, got, err)
		}
	}
	for _, e := range gone {
		if _, err := s.LogEntry(e.AccountID, e.RequestID); !errors.Is(err, ErrNotFound) {
			t.Errorf("LogEntry(%s) of a pruned entry: %v, want ErrNotFound", e.RequestID, err)
		}
	}
	// No index pair of a pruned entry is left behind.
	indexed := 0
	if err := s.scanPrefix([]byte(nsLogID), func(k, _ []byte) (bool, error) { indexed++; return true, nil }); err != nil {
		t.Fatal(err)
	}
	if indexed != len(kept) {
		t.Errorf("%d index pairs, want %d (one a kept entry)", indexed, len(kept))
	}
	if n, err := s.PruneLog(before); err != nil || n != 0 {
		t.Errorf("pruning again: %d, %v; want 0", n, err)
	}
}

// A prune larger than one batch deletes in several, exactly as one would.
func TestPruneLogInChunks(t *testing.T) {
	s, _ := openStore(t)
	es := make([]LogEntry, 0, pruneChunk+10)
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range cap(es) {
		e := entry("acct_a", "", 0)
		e.Time, e.RequestID = t0.Add(time.Duration(i)*time.Millisecond).UnixNano(), workloadRequestID()
		es = append(es, e)
	}
	if err := s.AppendLog(es); err != nil {
		t.Fatal(err)
	}
	n, err := s.PruneLog(t0.Add(time.Hour).UnixNano())
	if err != nil || n != len(es) {
		t.Fatalf("pruned %d, %v; want %d", n, err, len(es))
	}
	left := 0
	for _, ns := range []string{nsLog, nsLogID} {
		s.scanPrefix([]byte(ns), func(k, _ []byte) (bool, error) { left++; return true, nil })
	}
	if left != 0 {
		t.Errorf("%d pairs left", left)
	}
}

package persistence

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"
)

// v0Entries are the entries of testdata/requestlog/v0-pairs.json, written by the code before
// the compact layout (msgpack maps, ids as text).
func v0Entries() []LogEntry {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	mk := func(rid string, off time.Duration, status int, seq uint64) LogEntry {
		return LogEntry{RequestID: rid, Time: t0 + int64(off), AccountID: "acct_old", KeyID: "key_old1", Model: "chat-a",
			Route: "chat-a-1", Status: status, InputTokens: 1200, CachedTokens: 300, CacheWriteTokens: 40, OutputTokens: 250,
			ReasoningTokens: 60, LatencyMs: 1800, TTFTMs: 350, Cost: 7_500_000_000, ListCost: 9_000_000_000,
			UpstreamCost: 9_000_000_000, // none in the old layout: the list cost
			ClientFormat: "messages", UpstreamFormat: "chat", Attempts: 1, Stream: true, Counted: true, AllowanceUnits: 1500, Seq: seq}
	}
	es := []LogEntry{
		mk("req_0123456789abcdef01234567", 0, 200, 1),
		mk("req_89abcdef0123456789abcdef", 0, 200, 2),
		mk("client-supplied-id", time.Second, 429, 3),
		mk("req_fedcba9876543210fedcba98", 2*time.Second, 502, 4),
	}
	es[2].Stream, es[2].Cost, es[2].ListCost, es[2].UpstreamCost, es[2].AllowanceUnits, es[2].KeyID, es[2].Counted = false, 0, 0, 0, 0, "key_old2", false
	return es
}

// loadV0Log puts the old code's pairs into s as they were on its disk.
func loadV0Log(t *testing.T, s *Store) {
	t.Helper()
	raw, err := os.ReadFile("../testdata/requestlog/v0-pairs.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Pairs [][2]string }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	b := s.db.NewBatch()
	for _, p := range f.Pairs {
		k, err1 := hex.DecodeString(p[0])
		v, err2 := hex.DecodeString(p[1])
		if err1 != nil || err2 != nil {
			t.Fatalf("pair %q: %v %v", p, err1, err2)
		}
		if err := b.Set(k, v, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WriteQuota(QuotaWrite{Account: "acct_old", State: &QuotaRecord{LogSeq: 4}}); err != nil {
		t.Fatal(err)
	}
	if err := s.commit(b); err != nil {
		t.Fatal(err)
	}
}

// A store written before the compact layout reads as it did, through every reader, with
// entries of the new layout after its own.
func TestTheLogWrittenBeforeTheCompactLayoutStillReads(t *testing.T) {
	s, _ := openStore(t)
	loadV0Log(t, s)
	old := v0Entries()
	added := old[0]
	added.RequestID, added.Time, added.Seq = "req_00000000000000000000000a", old[3].Time+1, 5
	if err := s.WriteQuota(QuotaWrite{Account: "acct_old", State: &QuotaRecord{LogSeq: 5}, Log: []LogEntry{added}}); err != nil {
		t.Fatal(err)
	}
	want := append(old, added)

	got, err := s.ListLog("acct_old", time.Time{}, time.Time{}, 0)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ListLog = %+v, %v\nwant %+v", got, err, want)
	}
	for _, e := range want {
		got, err := s.LogEntry("acct_old", e.RequestID)
		if err != nil || !reflect.DeepEqual(got, e) {
			t.Errorf("LogEntry(%s) = %+v, %v\nwant %+v", e.RequestID, got, err, e)
		}
	}
	calls, err := s.CountedSince("acct_old", old[1].Time)
	wantCalls := []CountedCall{{old[0].Time, "key_old1"}, {old[1].Time, "key_old1"}, {old[3].Time, "key_old1"}, {added.Time, "key_old1"}}
	if err != nil || !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("CountedSince = %+v, %v; want %+v", calls, err, wantCalls)
	}
	// Pages of two cross from the old layout into the new one without a gap or a repeat.
	var paged []LogEntry
	q := LogQuery{Account: "acct_old", Limit: 2}
	for {
		page, err := s.QueryLog(q)
		if err != nil {
			t.Fatal(err)
		}
		if page.Totals.Count != 5 || page.Totals.Cost != 3*7_500_000_000+7_500_000_000 {
			t.Fatalf("totals = %+v", page.Totals)
		}
		paged = append(paged, page.Entries...)
		if page.NextCursor == "" {
			break
		}
		q = LogQuery{Account: "acct_old", Cursor: page.NextCursor}
	}
	if !reflect.DeepEqual(paged, want) {
		t.Errorf("QueryLog pages = %+v\nwant %+v", paged, want)
	}
}

package persistence

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// ledgerWrite writes entries as an account's quota actor does: numbered in the account's
// write order, with the record's LogSeq in the same batch.
func ledgerWrite(t *testing.T, s *Store, rec *QuotaRecord, acct string, es ...LogEntry) {
	t.Helper()
	for i := range es {
		rec.LogSeq++
		es[i].Seq = rec.LogSeq
	}
	if err := s.WriteQuota(QuotaWrite{Account: acct, State: rec, Log: es}); err != nil {
		t.Fatal(err)
	}
}

// readAll pages through q, checking that every page repeats the first page's totals.
func readAll(t *testing.T, s *Store, q LogQuery, during func(page int)) ([]LogEntry, LogTotals, int) {
	t.Helper()
	var all []LogEntry
	var totals LogTotals
	for page := 0; ; page++ {
		p, err := s.QueryLog(q)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if page == 0 {
			totals = p.Totals
		} else if p.Totals != totals {
			t.Fatalf("page %d totals %+v, first page's %+v", page, p.Totals, totals)
		}
		all = append(all, p.Entries...)
		if p.NextCursor == "" {
			return all, totals, page + 1
		}
		if during != nil {
			during(page)
		}
		q = LogQuery{Account: q.Account, Cursor: p.NextCursor, Limit: q.Limit}
	}
}

// TestUsagePagesTheWholeRange: a query over an account's log pages through every entry it
// selects (time range, key, model), once each, in time order, and carries the totals of the
// whole selection on every page; entries written while it pages (before or after its cursor)
// shift neither its pages nor its totals.
func TestUsagePagesTheWholeRange(t *testing.T) {
	s, _ := openStore(t)
	var rec QuotaRecord
	var es []LogEntry
	for i := 0; i < 2500; i++ {
		e := entry("acct_u", fmt.Sprintf("r%04d", i), time.Duration(i/2)*time.Second) // two entries per second
		e.KeyID, e.Model = []string{"key_a", "key_b"}[i%2], []string{"m1", "m2", "m3"}[i%3]
		e.Cost, e.ListCost, e.InputTokens, e.AllowanceUnits = int64(i), int64(2*i), int64(i%7), int64(i%2)*1000
		es = append(es, e)
	}
	for i := 0; i < len(es); i += 500 {
		ledgerWrite(t, s, &rec, "acct_u", es[i:i+500]...)
	}
	ledgerWrite(t, s, &QuotaRecord{}, "acct_v", entry("acct_v", "other", time.Second)) // another account

	sum := func(keep func(e *LogEntry) bool) (ids []string, tot LogTotals) {
		for i := range es {
			if keep(&es[i]) {
				ids = append(ids, es[i].RequestID)
				tot.add(&es[i])
			}
		}
		return ids, tot
	}
	at := func(sec int) time.Time { return base.Add(time.Duration(sec) * time.Second) }
	cases := []struct {
		name  string
		q     LogQuery
		pages int
		keep  func(e *LogEntry) bool
	}{
		{"everything, default pages of 1000", LogQuery{}, 3, func(*LogEntry) bool { return true }},
		{"pages of 7", LogQuery{Limit: 7, From: at(100), To: at(120)}, 6, func(e *LogEntry) bool { return e.Time >= at(100).UnixNano() && e.Time < at(120).UnixNano() }},
		{"one key", LogQuery{KeyID: "key_b", Limit: 500}, 3, func(e *LogEntry) bool { return e.KeyID == "key_b" }},
		{"one model from a time", LogQuery{Model: "m3", From: at(1000), Limit: 100}, 2, func(e *LogEntry) bool { return e.Model == "m3" && e.Time >= at(1000).UnixNano() }},
		{"key and model", LogQuery{KeyID: "key_a", Model: "m2", Limit: 100}, 5, func(e *LogEntry) bool { return e.KeyID == "key_a" && e.Model == "m2" }},
		{"nothing in range", LogQuery{From: at(5000)}, 1, func(*LogEntry) bool { return false }},
		{"to before from", LogQuery{From: at(10), To: at(5)}, 1, func(*LogEntry) bool { return false }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			q.Account = "acct_u"
			got, totals, pages := readAll(t, s, q, nil)
			wantIDs, wantTotals := sum(tc.keep)
			if strings.Join(rids(got), ",") != strings.Join(wantIDs, ",") || totals != wantTotals || pages != tc.pages {
				t.Fatalf("%d entries in %d pages, totals %+v; want %d in %d, totals %+v", len(got), pages, totals, len(wantIDs), tc.pages, wantTotals)
			}
		})
	}

	// Writes while a query pages: one before its cursor (a long call that started early), one
	// after it, one past the range's end. The query that started before them sees none.
	q := LogQuery{Account: "acct_u", Limit: 1000}
	wantIDs, wantTotals := sum(func(*LogEntry) bool { return true })
	got, totals, _ := readAll(t, s, q, func(page int) {
		late := []LogEntry{entry("acct_u", fmt.Sprintf("late-early-%d", page), 3*time.Second),
			entry("acct_u", fmt.Sprintf("late-mid-%d", page), 1100*time.Second), entry("acct_u", fmt.Sprintf("late-end-%d", page), time.Hour)}
		ledgerWrite(t, s, &rec, "acct_u", late...)
	})
	if strings.Join(rids(got), ",") != strings.Join(wantIDs, ",") || totals != wantTotals {
		t.Fatalf("paging while writing: %d entries, totals %+v; want the %d there when it began, %+v", len(got), totals, len(wantIDs), wantTotals)
	}
	if after, totals, _ := readAll(t, s, q, nil); len(after) != len(es)+6 || totals.Count != int64(len(es)+6) {
		t.Fatalf("a new query sees %d entries (totals %d), want %d", len(after), totals.Count, len(es)+6)
	}
}

func TestUsageCursorMustBelongToTheQuery(t *testing.T) {
	s, _ := openStore(t)
	var rec QuotaRecord
	ledgerWrite(t, s, &rec, "acct_u", entry("acct_u", "r1", 0), entry("acct_u", "r2", time.Second), entry("acct_u", "r3", 2*time.Second))
	p, err := s.QueryLog(LogQuery{Account: "acct_u", Limit: 1, Model: "gpt-x"})
	if err != nil || p.NextCursor == "" {
		t.Fatalf("first page = %+v, %v", p, err)
	}
	same, err := s.QueryLog(LogQuery{Account: "acct_u", Limit: 1, Model: "gpt-x", Cursor: p.NextCursor})
	if err != nil || len(same.Entries) != 1 || same.Entries[0].RequestID != "r2" {
		t.Fatalf("the cursor with its own filters = %+v, %v", same, err)
	}
	for name, q := range map[string]LogQuery{
		"garbage":       {Cursor: "not-a-cursor"},
		"another model": {Cursor: p.NextCursor, Model: "gpt-y"},
		"another key":   {Cursor: p.NextCursor, KeyID: "key_y"},
		"another from":  {Cursor: p.NextCursor, From: base.Add(time.Hour)},
	} {
		q.Account = "acct_u"
		if _, err := s.QueryLog(q); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "cursor") {
			t.Errorf("%s: err = %v, want ErrInvalid about the cursor", name, err)
		}
	}
}

// The operator's query (UpstreamCost) totals the routes' real cost on every page;
// the customer's does not, and neither do its cursors, which it can read.
func TestUsageTotalsTheUpstreamCostForTheOperatorOnly(t *testing.T) {
	s, _ := openStore(t)
	var rec QuotaRecord
	es := []LogEntry{entry("acct_u", "r1", 0), entry("acct_u", "r2", time.Second), entry("acct_u", "r3", 2*time.Second)}
	for i := range es {
		es[i].ListCost, es[i].UpstreamCost = 3_000_000, int64(i+1)*1_000_000
	}
	ledgerWrite(t, s, &rec, "acct_u", es...)
	for _, operator := range []bool{true, false} {
		q := LogQuery{Account: "acct_u", Limit: 2, UpstreamCost: operator}
		all, totals, pages := readAll(t, s, q, nil)
		want := int64(0)
		if operator {
			want = 6_000_000
		}
		if len(all) != 3 || pages != 2 || totals.UpstreamCost != want || totals.ListCost != 9_000_000 || all[2].UpstreamCost != 3_000_000 {
			t.Fatalf("operator %v: %d entries in %d pages, totals %+v", operator, len(all), pages, totals)
		}
		first, err := s.QueryLog(q)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := base64.RawURLEncoding.DecodeString(first.NextCursor)
		if strings.Contains(string(raw), `"uc"`) != operator {
			t.Fatalf("operator %v: cursor %s", operator, raw)
		}
	}
}

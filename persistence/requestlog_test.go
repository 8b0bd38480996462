package persistence

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// base is an arbitrary fixed instant; entry times are offsets from it.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func entry(acct, rid string, offset time.Duration) LogEntry {
	return LogEntry{
		RequestID: rid, Time: base.Add(offset).UnixNano(), AccountID: acct,
		KeyID: "key_x", Model: "gpt-x", Route: "/v1/chat/completions", Status: 200,
		InputTokens: 10, CachedTokens: 2, CacheWriteTokens: 3, OutputTokens: 5, ReasoningTokens: 7,
		LatencyMs: 120, TTFTMs: 40, Cost: 123456, ClientFormat: "openai", UpstreamFormat: "anthropic",
		Attempts: 1, Stream: true,
	}
}

func rids(es []LogEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.RequestID
	}
	return out
}

func TestAppendAndListLog(t *testing.T) {
	s, _ := openStore(t)
	in := []LogEntry{
		entry("acct_a", "r3", 2*time.Second),
		entry("acct_a", "r1b", 0), // same timestamp as r1a: both kept
		entry("acct_a", "r1a", 0),
		entry("acct_a", "r2", time.Second),
		entry("acct_b", "other", time.Second),
		entry("acct_ab", "prefix-neighbour", time.Second),
		entry("acct_a", "r4", time.Hour),
	}
	if err := s.AppendLog(in); err != nil {
		t.Fatalf("AppendLog: %v", err)
	}
	ns := time.Nanosecond
	for _, tc := range []struct {
		name     string
		acct     string
		from, to time.Time
		limit    int
		want     []string
	}{
		{"everything", "acct_a", time.Time{}, time.Time{}, 0, []string{"r1a", "r1b", "r2", "r3", "r4"}},
		{"from inclusive", "acct_a", base.Add(time.Second), time.Time{}, 0, []string{"r2", "r3", "r4"}},
		{"from one ns later", "acct_a", base.Add(time.Second + ns), time.Time{}, 0, []string{"r3", "r4"}},
		{"to exclusive", "acct_a", base, base.Add(2 * time.Second), 0, []string{"r1a", "r1b", "r2"}},
		{"to one ns later", "acct_a", base, base.Add(2*time.Second + ns), 0, []string{"r1a", "r1b", "r2", "r3"}},
		{"single instant", "acct_a", base, base.Add(ns), 0, []string{"r1a", "r1b"}},
		{"empty range", "acct_a", base.Add(time.Second), base.Add(time.Second), 0, []string{}},
		{"inverted range", "acct_a", base.Add(time.Hour), base, 0, []string{}},
		{"to before epoch", "acct_a", time.Time{}, time.Unix(-5, 0), 0, []string{}},
		{"limit", "acct_a", time.Time{}, time.Time{}, 3, []string{"r1a", "r1b", "r2"}},
		{"limit within range", "acct_a", base.Add(time.Second), time.Time{}, 1, []string{"r2"}},
		{"other account", "acct_b", time.Time{}, time.Time{}, 0, []string{"other"}},
		{"unknown account", "acct_c", time.Time{}, time.Time{}, 0, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ListLog(tc.acct, tc.from, tc.to, tc.limit)
			if err != nil {
				t.Fatalf("ListLog: %v", err)
			}
			if got == nil {
				t.Fatal("ListLog returned nil, want non-nil slice")
			}
			if r := rids(got); !reflect.DeepEqual(r, tc.want) {
				t.Errorf("ListLog = %v, want %v", r, tc.want)
			}
		})
	}

	// Every field round-trips.
	got := must(s.ListLog("acct_b", time.Time{}, time.Time{}, 0))(t)
	if !reflect.DeepEqual(got, []LogEntry{in[4]}) {
		t.Errorf("round trip = %+v, want %+v", got, in[4])
	}

	// Re-appending the same entry is idempotent, not a duplicate.
	if err := s.AppendLog([]LogEntry{in[0]}); err != nil {
		t.Fatal(err)
	}
	if n := len(must(s.ListLog("acct_a", time.Time{}, time.Time{}, 0))(t)); n != 5 {
		t.Errorf("after re-append: %d entries, want 5", n)
	}
}

func TestListLogDefaultLimit(t *testing.T) {
	s, _ := openStore(t)
	es := make([]LogEntry, MaxLogLimit+5)
	for i := range es {
		es[i] = entry("acct_a", "r", time.Duration(i))
	}
	if err := s.AppendLog(es); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{0, -1, MaxLogLimit + 1, 1 << 30} {
		got := must(s.ListLog("acct_a", time.Time{}, time.Time{}, limit))(t)
		if len(got) != MaxLogLimit {
			t.Errorf("limit %d: got %d entries, want %d", limit, len(got), MaxLogLimit)
		}
		if got[0].Time != es[0].Time || got[MaxLogLimit-1].Time != es[MaxLogLimit-1].Time {
			t.Errorf("limit %d: not the first %d entries in time order", limit, MaxLogLimit)
		}
	}
}

func TestAppendLogRejectsBadBatchWritingNothing(t *testing.T) {
	good := entry("acct_a", "ok", 0)
	s, _ := openStore(t) // shared: nothing may ever be written to it
	for _, tc := range []struct {
		name  string
		mod   func(*LogEntry)
		field string
	}{
		{"empty account", func(e *LogEntry) { e.AccountID = "" }, "account_id"},
		{"slash in account", func(e *LogEntry) { e.AccountID = "acct_a/x" }, "account_id"},
		{"empty request id", func(e *LogEntry) { e.RequestID = "" }, "request_id"},
		{"long request id", func(e *LogEntry) { e.RequestID = strings.Repeat("r", 129) }, "request_id"},
		{"zero time", func(e *LogEntry) { e.Time = 0 }, "time"},
		{"negative time", func(e *LogEntry) { e.Time = -1 }, "time"},
		{"status", func(e *LogEntry) { e.Status = 1000 }, "status"},
		{"negative tokens", func(e *LogEntry) { e.OutputTokens = -1 }, "output_tokens"},
		{"negative cost", func(e *LogEntry) { e.Cost = -5 }, "cost"},
		{"control in model", func(e *LogEntry) { e.Model = "m\n" }, "model"},
		{"negative attempts", func(e *LogEntry) { e.Attempts = -1 }, "attempts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := entry("acct_a", "bad", time.Second)
			tc.mod(&bad)
			err := s.AppendLog([]LogEntry{good, bad})
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), "entries[1]") || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("err %q does not name entries[1] and %q", err, tc.field)
			}
			if got := must(s.ListLog("acct_a", time.Time{}, time.Time{}, 0))(t); len(got) != 0 {
				t.Errorf("rejected batch wrote %d entries", len(got))
			}
		})
	}
}

func TestListLogRejectsBadAccount(t *testing.T) {
	s, _ := openStore(t)
	for _, acct := range []string{"", "acct_a/", "a b"} {
		if _, err := s.ListLog(acct, time.Time{}, time.Time{}, 0); !errors.Is(err, ErrInvalid) {
			t.Errorf("ListLog(%q) err = %v, want ErrInvalid", acct, err)
		}
	}
}

package persistence

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// GET /v1/generations/{id} reads an entry by its request id: written by AppendLog or by a
// quota write (the single node's ledger and an account shard's apply), found under its own
// account only; any other id is ErrNotFound, whatever made it unknown.
func TestLogEntryByRequestID(t *testing.T) {
	s, _ := openStore(t)
	appended := entry("acct_a", "req_appended", time.Second)
	quota := entry("acct_a", "req_quota", 2*time.Second)
	other := entry("acct_b", "req_other", time.Second)
	if err := s.AppendLog([]LogEntry{appended, other}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteQuota(QuotaWrite{Account: "acct_a", State: &QuotaRecord{}, Log: []LogEntry{quota}}); err != nil {
		t.Fatal(err)
	}
	rewritten := appended // the same id logged again (a retried write): the last one is found
	rewritten.Time, rewritten.Status = base.Add(time.Minute).UnixNano(), 499
	if err := s.AppendLog([]LogEntry{rewritten}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, acct, rid string
		want            *LogEntry // nil: ErrNotFound
	}{
		{"appended, then rewritten", "acct_a", "req_appended", &rewritten},
		{"written with the quota", "acct_a", "req_quota", &quota},
		{"its own account", "acct_b", "req_other", &other},
		{"another account's id", "acct_a", "req_other", nil},
		{"an id of the account asked of its neighbour", "acct_ab", "req_quota", nil},
		{"unknown id", "acct_a", "req_nope", nil},
		{"empty id", "acct_a", "", nil},
		{"id with a space", "acct_a", "req quota", nil},
		{"id too long", "acct_a", "req_" + string(make([]byte, 200)), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.LogEntry(c.acct, c.rid)
			if c.want == nil {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("got %+v, %v; want ErrNotFound", got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, *c.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, *c.want)
			}
		})
	}
	if _, err := s.LogEntry("acct/a", "req_quota"); !errors.Is(err, ErrInvalid) {
		t.Errorf("malformed account: %v, want ErrInvalid", err)
	}
}

// Gateway ids are indexed by their first 8 bytes and the second their entry is in: ids that
// share those bytes, in the same second or not, are each found as themselves.
func TestGatewayIDsSharingTheirIndexPrefixAreEachFound(t *testing.T) {
	s, _ := openStore(t)
	es := []LogEntry{
		entry("acct_a", "req_0123456789abcdef00000001", 0),
		entry("acct_a", "req_0123456789abcdef00000002", time.Millisecond), // same window
		entry("acct_a", "req_0123456789abcdef00000003", time.Hour),        // another one
	}
	for i := range es {
		es[i].Status = 200 + i
	}
	if err := s.AppendLog(es); err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		got, err := s.LogEntry("acct_a", e.RequestID)
		if err != nil || !reflect.DeepEqual(got, e) {
			t.Errorf("LogEntry(%s) = %+v, %v; want %+v", e.RequestID, got, err, e)
		}
	}
	if _, err := s.LogEntry("acct_a", "req_0123456789abcdef00000004"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an id sharing the prefix, never logged: %v, want ErrNotFound", err)
	}
}

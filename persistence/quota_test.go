package persistence

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestQuotaRoundTripAndReopen(t *testing.T) {
	s, dir := openStore(t)
	if rec, found, err := s.LoadQuota("acct_q"); err != nil || found || !reflect.DeepEqual(rec, QuotaRecord{}) {
		t.Fatalf("fresh LoadQuota = %+v, %v, %v", rec, found, err)
	}
	rec := QuotaRecord{
		Balance: 5_000_000, Spent: 7, WindowStart: 1767225600, WindowUsed: 1500, WeekStart: 1767571200, WeekUsed: 3000,
		Day: 1767225600, Images: 2, Video: 30,
		Media:  []MediaHold{{ID: 9, Kind: MediaVideo, Amount: 12, Day: 1767225600}},
		LogSeq: 4,
	}
	logE := entry("acct_q", "r1", 0)
	logE.Counted, logE.AllowanceUnits, logE.Seq = true, 1500, 4
	keyA := KeyQuota{Epoch: 2, ThrottledUntil: 99, Width: 30, Last: 7, Buckets: []uint32{1, 0, 3}}
	grant := GrantWrite{Key: "topup-1", Grant: CreditGrant{Amount: 5_000_000, At: 1, Balance: 5_000_000}}
	w := QuotaWrite{Account: "acct_q", State: &rec, Grants: []GrantWrite{grant}, Log: []LogEntry{logE},
		Keys: []KeyQuotaWrite{{KeyID: "key_a", State: &keyA}, {KeyID: "key_b", State: &KeyQuota{Epoch: 1}}}}
	if err := s.WriteQuota(w); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, dir)
	got, found, err := s.LoadQuota("acct_q")
	if err != nil || !found || !reflect.DeepEqual(got, rec) {
		t.Fatalf("LoadQuota after reopen = %+v, %v, %v\nwant %+v", got, found, err, rec)
	}
	g, found, err := s.CreditGrantFor("acct_q", "topup-1")
	if err != nil || !found || g != grant.Grant {
		t.Fatalf("CreditGrantFor = %+v, %v, %v", g, found, err)
	}
	if _, found, _ := s.CreditGrantFor("acct_q", "topup-2"); found {
		t.Fatal("unknown idempotency key found")
	}
	if _, found, _ := s.CreditGrantFor("acct_qq", "topup-1"); found {
		t.Fatal("idempotency keys leak across accounts")
	}
	logs, err := s.ListLog("acct_q", time.Time{}, time.Time{}, 0)
	if err != nil || len(logs) != 1 || logs[0] != logE {
		t.Fatalf("log written with the quota = %+v, %v", logs, err)
	}
	keys, err := s.LoadKeyQuotas("acct_q")
	if err != nil || !reflect.DeepEqual(keys, map[string]KeyQuota{"key_a": keyA, "key_b": {Epoch: 1}}) {
		t.Fatalf("key quotas = %+v, %v", keys, err)
	}
	// A key written as nil is deleted; the other stays.
	if err := s.WriteQuota(QuotaWrite{Account: "acct_q", State: &rec, Keys: []KeyQuotaWrite{{KeyID: "key_b"}}}); err != nil {
		t.Fatal(err)
	}
	if keys, err := s.LoadKeyQuotas("acct_q"); err != nil || !reflect.DeepEqual(keys, map[string]KeyQuota{"key_a": keyA}) {
		t.Fatalf("key quotas after the delete = %+v, %v", keys, err)
	}
	if calls, err := s.CountedSince("acct_q", 0); err != nil || !reflect.DeepEqual(calls, []CountedCall{{Time: logE.Time, KeyID: logE.KeyID}}) {
		t.Fatalf("counted calls = %+v, %v", calls, err)
	}
}

func TestWriteQuotaRejectsBadInputAndWritesNothing(t *testing.T) {
	s, _ := openStore(t)
	rec := &QuotaRecord{Balance: 1}
	bad := entry("acct_q", "", 0)
	cases := []struct {
		name string
		w    QuotaWrite
		want string
	}{
		{"no account", QuotaWrite{State: rec}, "account_id is required"},
		{"slash in account", QuotaWrite{Account: "a/b", State: rec}, "without spaces or '/'"},
		{"no state", QuotaWrite{Account: "acct_q"}, "no state"},
		{"empty grant key", QuotaWrite{Account: "acct_q", State: rec, Grants: []GrantWrite{{}}}, "idempotency key"},
		{"spaced grant key", QuotaWrite{Account: "acct_q", State: rec, Grants: []GrantWrite{{Key: "a b"}}}, "idempotency key"},
		{"key id with a slash", QuotaWrite{Account: "acct_q", State: rec, Keys: []KeyQuotaWrite{{KeyID: "k/1"}}}, "key id"},
		{"log of another account", QuotaWrite{Account: "acct_q", State: rec, Log: []LogEntry{entry("acct_r", "r1", 0)}}, "entry of account"},
		{"bad log", QuotaWrite{Account: "acct_q", State: rec, Log: []LogEntry{bad}}, "log[0]: invalid: request_id is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.WriteQuota(tc.w)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrInvalid containing %q", err, tc.want)
			}
		})
	}
	if _, found, _ := s.LoadQuota("acct_q"); found {
		t.Fatal("a rejected write left a record behind")
	}
}

package persistence

import (
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/vmihailenco/msgpack/v5"
)

// TestTheQuotaRecordIsStoredInBinaryAndOneStoredAsMsgpackStillReads: a quota record written
// now is in the binary encoding and reads back whole (every field set, so a field the
// encoding forgets fails here); one a store wrote before, in msgpack, still reads.
func TestTheQuotaRecordIsStoredInBinaryAndOneStoredAsMsgpackStillReads(t *testing.T) {
	full := QuotaRecord{Balance: -5, Spent: 9, WindowStart: 1, WindowUsed: 2, WeekStart: 3, WeekUsed: 4, Day: 5, Images: 6, Video: 7,
		Media:    []MediaHold{{ID: 1, Kind: "video", Amount: 3, Day: 5, Expires: 8}},
		Holds:    []CreditHold{{Key: "hold-1", Amount: 4, At: 2}},
		LogSeq:   11,
		KeySpend: []KeySpend{{KeyID: "key_1", Period: BudgetDay, Start: 9, Spent: 10}}}
	for i, v := 0, reflect.ValueOf(full); i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			t.Fatalf("the test's record leaves %s unset", v.Type().Field(i).Name)
		}
	}
	s, _ := openStore(t)
	cases := []struct {
		account string
		write   func(account string) error
		first   func(b byte) bool
	}{
		{"acct_binary", func(a string) error {
			rec := full
			return s.WriteQuota(QuotaWrite{Account: a, State: &rec})
		}, func(b byte) bool { return b == binaryV1 }},
		{"acct_msgpack", func(a string) error {
			b, err := msgpack.Marshal(&full)
			if err != nil {
				return err
			}
			return s.db.Set(dbKey(nsQuota, a), b, pebble.Sync)
		}, func(b byte) bool { return b >= 0x80 && b <= 0x8f || b == 0xde || b == 0xdf }},
	}
	for _, c := range cases {
		if err := c.write(c.account); err != nil {
			t.Fatalf("%s: %v", c.account, err)
		}
		raw, closer, err := s.db.Get(dbKey(nsQuota, c.account))
		if err != nil {
			t.Fatalf("%s: %v", c.account, err)
		}
		if !c.first(raw[0]) {
			t.Errorf("%s: stored record starts with %#x", c.account, raw[0])
		}
		closer.Close()
		got, found, err := s.LoadQuota(c.account)
		if err != nil || !found || !reflect.DeepEqual(got, full) {
			t.Errorf("%s: %+v %v %v, want %+v", c.account, got, found, err, full)
		}
	}
}

package persistence

import (
	"fmt"
	"slices"
	"testing"
)

// shardScan is every pair of the raw prefix and of accounts' quota state in v, as quoted
// "key=value", in the order a shard snapshot takes them.
func shardScan(t *testing.T, s *Store, raw string, accounts ...string) []string {
	t.Helper()
	v := s.ViewShard()
	defer v.Close()
	var out []string
	add := func(k, val []byte) error {
		out = append(out, fmt.Sprintf("%q=%q", k, val))
		return nil
	}
	if err := v.ScanRaw([]byte(raw), add); err != nil {
		t.Fatal(err)
	}
	for _, a := range accounts {
		if err := v.ScanAccount(a, add); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func quotaWrite(acct, rid, grant string, balance int64) *QuotaWrite {
	return &QuotaWrite{Account: acct, State: &QuotaRecord{Balance: balance, LogSeq: 1},
		Grants: []GrantWrite{{Key: grant, Grant: CreditGrant{Amount: balance, At: 1, Balance: balance}}},
		Keys:   []KeyQuotaWrite{{KeyID: "k1", State: &KeyQuota{Epoch: 1}}},
		Log:    []LogEntry{{RequestID: rid, Time: 5, AccountID: acct, KeyID: "k1", Status: 200, Seq: 1}}}
}

func TestAShardBatchWritesQuotaStateTheSingleNodeReadsAndSeesItsOwnGrants(t *testing.T) {
	s, _ := openStore(t)
	err := s.UpdateShard(func(b *ShardBatch) error {
		if err := b.PutQuota(quotaWrite("acct", "r1", "pay", 700)); err != nil {
			return err
		}
		g, found, err := b.CreditGrantFor("acct", "pay")
		if err != nil || !found || g.Amount != 700 {
			t.Errorf("grant in the batch = %+v %v %v", g, found, err)
		}
		if err := b.PutQuota(&QuotaWrite{Account: "acct", State: &QuotaRecord{}, Log: []LogEntry{{RequestID: "r", Time: 1, AccountID: "other"}}}); err == nil {
			t.Error("a log entry of another account was put")
		}
		return b.SetRaw([]byte("acctshard/1/applied"), []byte{0, 0, 0, 0, 0, 0, 0, 9})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SyncWAL(); err != nil {
		t.Fatal(err)
	}
	rec, found, err := s.LoadQuota("acct")
	if err != nil || !found || rec.Balance != 700 {
		t.Errorf("record = %+v %v %v", rec, found, err)
	}
	if keys, err := s.LoadKeyQuotas("acct"); err != nil || keys["k1"].Epoch != 1 {
		t.Errorf("key state = %v %v", keys, err)
	}
	page, err := s.QueryLog(LogQuery{Account: "acct"})
	if err != nil || len(page.Entries) != 1 || page.Entries[0].RequestID != "r1" {
		t.Errorf("log = %+v %v", page.Entries, err)
	}
}

func TestReplaceShardReplacesOnlyTheShardAndTheAccountsItNames(t *testing.T) {
	s, _ := openStore(t)
	err := s.UpdateShard(func(b *ShardBatch) error {
		for _, acct := range []string{"a", "ab", "b"} { // "ab" shares a prefix with "a"
			if err := b.PutQuota(quotaWrite(acct, "r-"+acct, "pay-"+acct, 100)); err != nil {
				return err
			}
		}
		if err := b.SetRaw([]byte("acctshard/1/acct/a"), []byte("old")); err != nil {
			return err
		}
		return b.SetRaw([]byte("acctshard/2/acct/b"), []byte("other shard"))
	})
	if err != nil {
		t.Fatal(err)
	}
	keepAB, keepB := shardScan(t, s, "acctshard/2/", "ab"), shardScan(t, s, "acctshard/2/", "b")
	if len(keepAB) != 7 {
		t.Fatalf("shard 2 and account ab are %d pairs, want 7 (shard 2's, then ab's grant, log, log index, log dictionary, key, record): %q", len(keepAB), keepAB)
	}
	src, _ := openStore(t)
	if err := src.UpdateShard(func(b *ShardBatch) error {
		if err := b.PutQuota(quotaWrite("c", "r-c", "pay-c", 5)); err != nil {
			return err
		}
		return b.SetRaw([]byte("acctshard/1/acct/c"), []byte("new"))
	}); err != nil {
		t.Fatal(err)
	}
	want := shardScan(t, src, "acctshard/1/", "c")
	v := src.ViewShard()
	defer v.Close()
	load := func(put func(k, v []byte) error) error {
		return v.ScanRaw([]byte("acctshard/1/"), put)
	}
	loadAll := func(put func(k, v []byte) error) error {
		if err := load(put); err != nil {
			return err
		}
		return v.ScanAccount("c", put)
	}
	if err := s.ReplaceShard([]byte("acctshard/1/"), ShardContents{Accounts: []string{"a"}}, loadAll); err != nil {
		t.Fatal(err)
	}
	if got := shardScan(t, s, "acctshard/1/", "a", "c"); !slices.Equal(got, want) {
		t.Errorf("shard 1 after the replace:\n%q\nwant\n%q", got, want)
	}
	if !slices.Equal(shardScan(t, s, "acctshard/2/", "ab"), keepAB) || !slices.Equal(shardScan(t, s, "acctshard/2/", "b"), keepB) {
		t.Error("the replace changed another shard's or account's state")
	}
	// A pair outside the shard and the accounts' quota state changes nothing.
	before := shardScan(t, s, "acctshard/1/", "c")
	bad := func(put func(k, v []byte) error) error { return put([]byte("acct/x"), []byte("x")) }
	if err := s.ReplaceShard([]byte("acctshard/1/"), ShardContents{Accounts: []string{"c"}}, bad); err == nil {
		t.Error("a metadata key was accepted")
	}
	if !slices.Equal(shardScan(t, s, "acctshard/1/", "c"), before) {
		t.Error("a refused replace changed the state")
	}
}

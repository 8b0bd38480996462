package persistence

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A write refused on a full disk gives out codes that no entry on disk names; the writes
// after it, and the store opened again, still read every string as it was written.
func TestLogDictionarySurvivesAFailedCommitAndAReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	disk := &fakeDisk{}
	disk.free.Store(plenty)
	s, _ := openSpaceStore(t, dir, disk, vfs.Default, time.Millisecond)
	first := entry("acct_a", "req_000000000000000000000001", 0)
	first.KeyID, first.Model = "key_one", "model-one"
	if err := s.WriteQuota(QuotaWrite{Account: "acct_a", State: &QuotaRecord{}, Log: []LogEntry{first}}); err != nil {
		t.Fatal(err)
	}
	lost := entry("acct_a", "req_000000000000000000000002", time.Second)
	lost.KeyID, lost.Model = "key_lost", "model-lost" // new codes, in a batch the disk refuses
	disk.free.Store(0)
	if err := s.WriteQuota(QuotaWrite{Account: "acct_a", State: &QuotaRecord{}, Log: []LogEntry{lost}}); !errors.Is(err, ErrFull) {
		t.Fatalf("write on a full disk: %v, want ErrFull", err)
	}
	disk.free.Store(plenty)
	waitWritable(t, s)
	again := lost // the same strings again: their codes' pairs are written with it
	again.RequestID = "req_000000000000000000000003"
	other := entry("acct_a", "req_000000000000000000000004", 2*time.Second)
	other.KeyID, other.Model = "key_other", "model-other"
	if err := s.AppendLog([]LogEntry{again}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteQuota(QuotaWrite{Account: "acct_a", State: &QuotaRecord{}, Log: []LogEntry{other}}); err != nil {
		t.Fatal(err)
	}
	want := []LogEntry{first, again, other}
	got, err := s.ListLog("acct_a", time.Time{}, time.Time{}, 0)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ListLog = %+v, %v\nwant %+v", got, err, want)
	}
	s.Close()
	s, _ = openSpaceStore(t, dir, disk, vfs.Default, time.Millisecond)
	got, err = s.ListLog("acct_a", time.Time{}, time.Time{}, 0)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopening: ListLog = %+v, %v\nwant %+v", got, err, want)
	}
}

// A shard's snapshot brings its accounts' dictionaries: a replica whose own codes for an
// account differed reads the snapshot's entries with the snapshot's strings.
func TestARecoveredShardReadsItsEntriesWithTheSnapshotsDictionary(t *testing.T) {
	put := func(s *Store, keys ...string) {
		t.Helper()
		err := s.UpdateShard(func(b *ShardBatch) error {
			for i, k := range keys {
				e := entry("c", "req_00000000000000000000000"+string(rune('a'+i)), time.Duration(i)*time.Second)
				e.KeyID = k
				if err := b.PutQuota(&QuotaWrite{Account: "c", State: &QuotaRecord{}, Log: []LogEntry{e}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	src, _ := openStore(t)
	put(src, "key_x", "key_y")
	dst, _ := openStore(t)
	put(dst, "key_y", "key_x")                                               // the same strings under each other's codes
	if _, err := dst.ListLog("c", time.Time{}, time.Time{}, 0); err != nil { // cached
		t.Fatal(err)
	}
	v := src.ViewShard()
	defer v.Close()
	var pairs [][2][]byte
	if err := v.ScanAccount("c", func(k, val []byte) error {
		pairs = append(pairs, [2][]byte{append([]byte(nil), k...), append([]byte(nil), val...)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	err := dst.ReplaceShard([]byte("acctshard/9/"), ShardContents{Accounts: []string{"c"}}, func(put func(k, v []byte) error) error {
		for _, p := range pairs {
			if err := put(p[0], p[1]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := dst.ListLog("c", time.Time{}, time.Time{}, 0)
	if err != nil || len(got) != 2 || got[0].KeyID != "key_x" || got[1].KeyID != "key_y" {
		t.Fatalf("after recovering: %+v, %v; want key_x then key_y", got, err)
	}
}

// An account's dictionary is searched while it is short and indexed once it is longer: a
// string keeps its one code across the switch and across a reopen (which reads the
// dictionary back), and every entry reads back as written.
func TestLogDictionaryGivesAStringOneCodeShortAndLong(t *testing.T) {
	for _, models := range []int{1, dictScanned - 2, dictScanned, dictScanned + 1, 3 * dictScanned} {
		t.Run(fmt.Sprint(models, " models"), func(t *testing.T) {
			s, dir := openStore(t)
			var want []LogEntry
			write := func(round int) {
				t.Helper()
				for i := range models {
					e := entry("acct_d", fmt.Sprintf("req_%02d_%024d", round, i), time.Duration(round*models+i)*time.Millisecond)
					e.Model = fmt.Sprintf("model-%02d", i)
					if err := s.AppendLog([]LogEntry{e}); err != nil {
						t.Fatal(err)
					}
					want = append(want, e)
				}
			}
			write(0)
			pairs := dictPairs(t, s, "acct_d")
			write(1)
			s = reopen(t, s, dir)
			write(2)
			if n := dictPairs(t, s, "acct_d"); n != pairs {
				t.Fatalf("%d dictionary pairs after writing the same strings again, want %d", n, pairs)
			}
			got, err := s.ListLog("acct_d", time.Time{}, time.Time{}, 0)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("ListLog = %d entries, %v; want the %d written", len(got), err, len(want))
			}
		})
	}
}

// dictPairs counts account's dictionary pairs on disk.
func dictPairs(t *testing.T, s *Store, account string) int {
	t.Helper()
	n := 0
	if err := scanPrefixIn(s.db, dbKey(nsLogDict, account, "/"), func(_, _ []byte) (bool, error) { n++; return true, nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

package persistence

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// fakeDisk is a disk whose free space a test sets.
type fakeDisk struct{ free atomic.Int64 }

func (d *fakeDisk) FreeSpace(string) (int64, error) { return d.free.Load(), nil }

// lines is a concurrency-safe log sink.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.buf.Write(p) }
func (l *lines) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

const (
	testMinFree = 4 << 20
	testBallast = 1 << 20
	plenty      = 1 << 30
)

// openSpaceStore opens a store on a fake disk with small thresholds.
func openSpaceStore(t *testing.T, dir string, disk *fakeDisk, fs vfs.FS, recheck time.Duration) (*Store, *lines) {
	t.Helper()
	logs := &lines{}
	s, err := OpenWith(dir, Options{MinFreeBytes: testMinFree, BallastBytes: testBallast, RecheckEvery: recheck,
		Logger: slog.New(slog.NewTextHandler(logs, nil)), FreeSpace: disk.FreeSpace, MeasureEvery: -1, FS: fs})
	if err != nil {
		t.Fatalf("OpenWith: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, logs
}

func ballastPresent(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, ballastName))
	return err == nil && fi.Size() == testBallast
}

func waitWritable(t *testing.T, s *Store) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !s.Writable() {
		if time.Now().After(deadline) {
			t.Fatal("the store did not resume writes after space returned")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// While the data directory's disk is below its reserve every kind of write
// is refused with ErrFull and writes nothing, reads go on, one line is logged per change of
// state, and writes resume by themselves (ballast first) when space returns.
func TestStoreRefusesEveryWriteWhileTheDiskIsFull(t *testing.T) {
	disk := &fakeDisk{}
	disk.free.Store(plenty)
	dir := filepath.Join(t.TempDir(), "pebble")
	s, logs := openSpaceStore(t, dir, disk, nil, 10*time.Millisecond)
	if !ballastPresent(dir) {
		t.Fatal("no ballast laid down at open")
	}
	acct := must(s.CreateAccount("full@example.com", "demo"))(t)
	key, _ := must2(t, s, acct.ID, KeySpec{Name: "k"})
	secret := mustSecret(t, s, acct.ID)
	base := entry(acct.ID, "req_before", 0)
	if err := s.AppendLog([]LogEntry{base}); err != nil {
		t.Fatal(err)
	}

	disk.free.Store(testMinFree - 1)
	writes := []struct {
		name  string
		write func() error
	}{
		{"create account", func() error { _, err := s.CreateAccount("other@example.com", "demo"); return err }},
		{"create key", func() error { _, _, err := s.CreateKey(acct.ID, KeySpec{Name: "new"}); return err }},
		{"revoke key", func() error { _, err := s.RevokeKey(key.ID); return err }},
		{"append log", func() error { return s.AppendLog([]LogEntry{entry(acct.ID, "req_full", time.Second)}) }},
		{"write quota", func() error {
			return s.WriteQuota(QuotaWrite{Account: acct.ID, State: &QuotaRecord{Balance: 5}})
		}},
		{"write quota with a log entry, a charge and a key's throttle state", func() error {
			e := entry(acct.ID, "req_quota", 2*time.Second)
			e.Seq = 1
			return s.WriteQuota(QuotaWrite{Account: acct.ID, State: &QuotaRecord{WindowUsed: 1000, LogSeq: 1}, Log: []LogEntry{e},
				Grants: []GrantWrite{{Key: "charge/full", Grant: CreditGrant{Amount: -1}}}, Keys: []KeyQuotaWrite{{KeyID: key.ID, State: &KeyQuota{Epoch: 1}}}})
		}},
		{"set meta", func() error { return s.SetMeta("m", []byte("v")) }},
		{"set raw", func() error { return s.SetRaw([]byte("asset/x"), []byte("v")) }},
		{"delete raw", func() error { return s.DeleteRaw([]byte("asset/x")) }},
		{"put task", func() error { return s.PutTask(sampleTask("task_full")) }},
	}
	for _, w := range writes {
		err := w.write()
		if !errors.Is(err, ErrFull) || !IsDiskFull(err) {
			t.Errorf("%s while full: err = %v, want ErrFull", w.name, err)
		}
	}
	if got := logs.count("data directory full"); got != 1 {
		t.Errorf("%d 'data directory full' lines for %d refused writes, want 1", got, len(writes))
	}
	st := s.Space()
	if st.Writable || st.FreeBytes != testMinFree-1 || st.Since.IsZero() || !strings.Contains(st.Reason, "below the 4.0 MiB reserve") {
		t.Errorf("space state while full = %+v", st)
	}
	// Reads go on, and nothing of the refused writes is there.
	if k, err := s.LookupKey(secret); err != nil || k.AccountID != acct.ID {
		t.Errorf("lookup while full: %v %v", k, err)
	}
	if got := rids(must(s.ListLog(acct.ID, time.Time{}, time.Time{}, 0))(t)); strings.Join(got, ",") != "req_before" {
		t.Errorf("log while full = %v, want only req_before", got)
	}
	if _, found, _ := s.LoadQuota(acct.ID); found {
		t.Error("a refused quota write was stored")
	}
	if k := must(s.GetKey(key.ID))(t); k.RevokedAt != 0 {
		t.Error("a refused revocation was stored")
	}

	// Space returns: the monitor lays the ballast down again, then writes resume.
	disk.free.Store(plenty)
	waitWritable(t, s)
	if !ballastPresent(dir) {
		t.Error("writes resumed without the ballast")
	}
	if got := logs.count("writes resume"); got != 1 {
		t.Errorf("%d 'writes resume' lines, want 1", got)
	}
	for _, w := range writes {
		if err := w.write(); err != nil {
			t.Errorf("%s after space returned: %v", w.name, err)
		}
	}
}

// mustSecret creates a key and returns its secret.
func mustSecret(t *testing.T, s *Store, acct string) string {
	t.Helper()
	_, secret := must2(t, s, acct, KeySpec{Name: "lookup"})
	return secret
}

// enospcOnce fails the next write to a WAL file with ENOSPC once armed: the disk filling
// between the store's check and Pebble's write.
type enospcOnce struct {
	vfs.FS
	armed atomic.Bool
	hits  atomic.Int32
}

func (fs *enospcOnce) wrap(f vfs.File, name string, err error) (vfs.File, error) {
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &enospcFile{File: f, fs: fs}, nil
}

func (fs *enospcOnce) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(f, name, err)
}

func (fs *enospcOnce) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(old, name, c)
	return fs.wrap(f, name, err)
}

type enospcFile struct {
	vfs.File
	fs *enospcOnce
}

func (f *enospcFile) Write(p []byte) (int, error) {
	if f.fs.armed.CompareAndSwap(true, false) {
		f.fs.hits.Add(1)
		return 0, syscall.ENOSPC
	}
	return f.File.Write(p)
}

// An ENOSPC that reaches Pebble's WAL anyway (the disk filled between the
// check and the write) is not fatal: the ballast is given up, Pebble's write goes into its
// space, the store turns unwritable, and it resumes with a new ballast when space returns.
func TestBallastTakesAnENOSPCThatReachesTheWAL(t *testing.T) {
	disk := &fakeDisk{}
	disk.free.Store(plenty)
	fs := &enospcOnce{FS: vfs.Default}
	dir := filepath.Join(t.TempDir(), "pebble")
	s, logs := openSpaceStore(t, dir, disk, fs, time.Hour) // the test resumes by hand
	acct := must(s.CreateAccount("wal@example.com", "demo"))(t)

	fs.armed.Store(true)
	if err := s.AppendLog([]LogEntry{entry(acct.ID, "req_enospc", 0)}); err != nil {
		t.Fatalf("the write that met ENOSPC: %v (Pebble should have retried it into the ballast's space)", err)
	}
	if fs.hits.Load() != 1 {
		t.Fatalf("ENOSPC injected %d times, want 1", fs.hits.Load())
	}
	if ballastPresent(dir) || s.Writable() || logs.count("(ENOSPC)") != 1 {
		t.Fatalf("after ENOSPC: ballast %t, writable %t, logs %q", ballastPresent(dir), s.Writable(), logs.buf.String())
	}
	if err := s.AppendLog([]LogEntry{entry(acct.ID, "req_refused", time.Second)}); !errors.Is(err, ErrFull) {
		t.Fatalf("write after ENOSPC: %v, want ErrFull", err)
	}
	if !s.space.tryResume() || !ballastPresent(dir) || !s.Writable() {
		t.Fatalf("no resume with space back: ballast %t, writable %t", ballastPresent(dir), s.Writable())
	}
	if err := s.AppendLog([]LogEntry{entry(acct.ID, "req_after", 2*time.Second)}); err != nil {
		t.Fatal(err)
	}
	s2 := reopenWith(t, s, dir, disk)
	got := rids(must(s2.ListLog(acct.ID, time.Time{}, time.Time{}, 0))(t))
	if strings.Join(got, ",") != "req_enospc,req_after" {
		t.Fatalf("log after reopen = %v", got)
	}
}

func reopenWith(t *testing.T, s *Store, dir string, disk *fakeDisk) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, _ := openSpaceStore(t, dir, disk, nil, time.Hour)
	return s2
}

// A store opened on a disk that is already full gives its ballast up (room
// for Pebble to open), reads, refuses writes, and resumes when space returns.
func TestStoreOpensOnAFullDisk(t *testing.T) {
	disk := &fakeDisk{}
	disk.free.Store(plenty)
	dir := filepath.Join(t.TempDir(), "pebble")
	s, _ := openSpaceStore(t, dir, disk, nil, time.Hour)
	acct := must(s.CreateAccount("open@example.com", "demo"))(t)
	if err := s.AppendLog([]LogEntry{entry(acct.ID, "req_1", 0)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	disk.free.Store(0)
	s2, logs := openSpaceStore(t, dir, disk, nil, time.Hour)
	if ballastPresent(dir) || s2.Writable() || logs.count("free at start") != 1 {
		t.Fatalf("open on a full disk: ballast %t, writable %t, logs %q", ballastPresent(dir), s2.Writable(), logs.buf.String())
	}
	if got := rids(must(s2.ListLog(acct.ID, time.Time{}, time.Time{}, 0))(t)); len(got) != 1 {
		t.Fatalf("log read on a full disk = %v", got)
	}
	if err := s2.SetMeta("x", nil); !errors.Is(err, ErrFull) {
		t.Fatalf("write on a full disk: %v", err)
	}
	if s2.space.tryResume() {
		t.Fatal("resumed without space")
	}
	disk.free.Store(testMinFree + testBallast)
	if !s2.space.tryResume() || !ballastPresent(dir) || s2.SetMeta("x", nil) != nil {
		t.Fatal("no resume once the reserve and the ballast fit")
	}
}

// A measurement of the free space stands for MeasureEvery: the checks of the writes and
// admissions in between reuse it (one statfs per check was a visible share of a busy
// gateway's CPU); a negative MeasureEvery measures for every check.
func TestAMeasurementStandsForMeasureEvery(t *testing.T) {
	for _, tc := range []struct {
		name  string
		every time.Duration
		want  int64 // measurements by 100 checks, after the ones Open made
	}{
		{"reused within the interval", time.Hour, 0},
		{"every check", -1, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var measured atomic.Int64
			s, err := OpenWith(t.TempDir(), Options{MinFreeBytes: testMinFree, BallastBytes: -1, MeasureEvery: tc.every,
				FreeSpace: func(string) (int64, error) { measured.Add(1); return plenty, nil }})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.CheckWritable(); err != nil { // the first check measures either way
				t.Fatal(err)
			}
			before := measured.Load()
			for range 100 {
				if err := s.CheckWritable(); err != nil {
					t.Fatal(err)
				}
			}
			if got := measured.Load() - before; got != tc.want {
				t.Fatalf("%d measurements for 100 checks, want %d", got, tc.want)
			}
		})
	}
}

// A directory the store also watches (a cluster node's Raft log on another filesystem)
// stops writes when it runs low, as the store's own directory does, and they resume when it
// has room again.
func TestStoreRefusesWritesWhileAWatchedDirectoryIsFull(t *testing.T) {
	var raftFree atomic.Int64
	raftFree.Store(plenty)
	dir := filepath.Join(t.TempDir(), "pebble")
	raftDir := filepath.Join(t.TempDir(), "raft")
	free := func(d string) (int64, error) {
		if d == raftDir {
			return raftFree.Load(), nil
		}
		return plenty, nil
	}
	s, err := OpenWith(dir, Options{MinFreeBytes: testMinFree, BallastBytes: testBallast, RecheckEvery: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&lines{}, nil)), FreeSpace: free, MeasureEvery: -1, AlsoWatch: []string{raftDir}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SetRaw([]byte("t/1"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	raftFree.Store(testMinFree - 1)
	if err := s.SetRaw([]byte("t/2"), []byte("x")); !errors.Is(err, ErrFull) {
		t.Fatalf("a write while the watched directory is full: %v, want ErrFull", err)
	}
	if st := s.Space(); st.Writable || !strings.Contains(st.Reason, "below the 4.0 MiB reserve") {
		t.Fatalf("space state while the watched directory is full: %+v", st)
	}
	raftFree.Store(plenty)
	waitWritable(t, s)
	if err := s.SetRaw([]byte("t/2"), []byte("x")); err != nil {
		t.Fatal(err)
	}
}

package persistence

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/modelgate/modelgate/internal/supervise"
)

// ErrFull is returned by every write while the data directory's filesystem is (nearly) full.
// Nothing was written; the same write succeeds once space returns.
var ErrFull = errors.New("the data directory's disk is full")

// Why a full disk is refused here rather than left to Pebble: Pebble v2 treats a failed WAL
// write or sync, and a failed MANIFEST write, as fatal to the DB handle (DB.Apply calls
// Logger.Fatalf on a commit error, and a WAL writer that failed once fails every later
// write). So the store never lets Pebble run into ENOSPC on its own writes: every write is
// refused while free space is below MinFreeBytes, and an emergency ballast file holds
// BallastBytes back for what may still race in (a WAL block already queued, another process
// filling the disk between the check and the write). Pebble's filesystem is wrapped with
// vfs.OnDiskFull: on ENOSPC the ballast is deleted, the store turns unwritable, and Pebble
// retries the write once into the freed space. A monitor re-creates the ballast and resumes
// writes when space returns.

const (
	defaultMinFree      = 64 << 20
	defaultBallast      = 16 << 20
	defaultRecheckEvery = time.Second
	defaultMeasureEvery = 50 * time.Millisecond
	ballastName         = "EMERGENCY-BALLAST"
)

// Options tune a Store. Zero values take the defaults.
type Options struct {
	// MinFreeBytes is the free space below which every write is refused with ErrFull
	// (default 64 MiB; negative: never refuse on free space).
	MinFreeBytes int64
	// BallastBytes is the size of the emergency reserve file kept in the store's directory
	// and given up when the disk runs out (default 16 MiB; negative: none).
	BallastBytes int64
	// RecheckEvery is how often a full store looks for space again (default 1 s).
	RecheckEvery time.Duration
	// MeasureEvery is how long a measurement of the free space stands for the writes and
	// admissions that check it (default 50 ms; negative: measure for every check). At the
	// rates the gateway writes, 50 ms is kilobytes against a reserve of megabytes, and a
	// statfs per call was 3% of a saturated gateway's CPU.
	MeasureEvery time.Duration
	// Logger gets one line per change of state (full, writable again); default slog.Default.
	Logger *slog.Logger
	// FreeSpace measures the bytes available to the store in dir (default: the filesystem's
	// own figure, statfs). Tests substitute it to fill a disk without filling one.
	FreeSpace func(dir string) (int64, error)
	// AlsoWatch are more directories whose free space counts like the store's own (a cluster
	// node's Raft log, which may be on another filesystem): writes are refused while the
	// least free of them is below MinFreeBytes. The ballast stays in the store's directory.
	AlsoWatch []string
	// FS is the filesystem Pebble writes through (default vfs.Default); tests inject faults.
	FS vfs.FS
	// CacheBytes is Pebble's block cache and MemTableBytes one memtable (Pebble keeps up to
	// two): resident memory once filled (store.go, memoryDefaults).
	CacheBytes, MemTableBytes int64
}

func (o *Options) defaults() {
	if o.MinFreeBytes == 0 {
		o.MinFreeBytes = defaultMinFree
	}
	if o.BallastBytes == 0 {
		o.BallastBytes = defaultBallast
	}
	if o.RecheckEvery <= 0 {
		o.RecheckEvery = defaultRecheckEvery
	}
	if o.MeasureEvery == 0 {
		o.MeasureEvery = defaultMeasureEvery
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.FreeSpace == nil {
		o.FreeSpace = diskFree
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	o.memoryDefaults()
}

func diskFree(dir string) (int64, error) {
	u, err := vfs.Default.GetDiskUsage(dir)
	return int64(min(u.AvailBytes, 1<<62)), err
}

// SpaceState is what the store knows about its disk, for health checks and metrics.
type SpaceState struct {
	Writable  bool
	FreeBytes int64     // measured now (-1 when it cannot be measured)
	Reason    string    // why writes are refused ("" while writable)
	Since     time.Time // when writes were first refused (zero while writable)
}

// space guards the store's writes against a full disk.
type space struct {
	dir     string
	ballast string
	opts    Options

	writable atomic.Bool
	// The last measurement that check may reuse (measureRecent).
	measuredAt, measuredFree atomic.Int64
	mu                       sync.Mutex // state changes; the fields below
	reason                   string
	since                    time.Time
	watching                 bool            // the monitor runs
	monitors                 <-chan struct{} // closed when the last monitor started has ended
	stop                     chan struct{}

	ballastMu sync.Mutex // creating and removing the ballast
}

func newSpace(dir string, o Options) *space {
	g := &space{dir: dir, ballast: filepath.Join(dir, ballastName), opts: o, stop: make(chan struct{})}
	g.writable.Store(true)
	return g
}

// prepare runs before Pebble opens: it lays the ballast down when there is room, and on a
// disk that is already full gives the ballast up (Pebble needs a little room to open and
// replay its WAL) and starts unwritable.
func (g *space) prepare() {
	free, err := g.measure()
	if err != nil {
		return // unknown: writes go ahead, OnDiskFull still guards them
	}
	if g.opts.BallastBytes > 0 && !g.hasBallast() && free >= g.opts.MinFreeBytes+g.opts.BallastBytes {
		if err := g.makeBallast(); err != nil {
			g.opts.Logger.Warn("the emergency ballast file could not be created; a full disk is still refused", "path", g.ballast, "err", err)
		}
		free, _ = g.measure()
	}
	if free < g.opts.MinFreeBytes {
		g.removeBallast()
		g.markFull(fmt.Sprintf("%s free at start, below the %s reserve", byteCount(free), byteCount(g.opts.MinFreeBytes)))
	}
}

// check is called before every write: nil, or ErrFull while the disk is below the reserve.
func (g *space) check() error {
	if !g.writable.Load() {
		return g.refusal()
	}
	if g.opts.MinFreeBytes < 0 {
		return nil
	}
	free, err := g.measureRecent()
	if err != nil || free >= g.opts.MinFreeBytes {
		return nil // an unmeasurable disk is not a full one; OnDiskFull still guards it
	}
	g.markFull(fmt.Sprintf("%s free, below the %s reserve", byteCount(free), byteCount(g.opts.MinFreeBytes)))
	return g.refusal()
}

func (g *space) refusal() error {
	return fmt.Errorf("%w; writes resume once %s are free", ErrFull, byteCount(g.resumeAt()))
}

// resumeAt is the free space the monitor waits for: the reserve, plus the ballast it lays
// down again first.
func (g *space) resumeAt() int64 {
	n := max(g.opts.MinFreeBytes, 0)
	if g.opts.BallastBytes > 0 && !g.hasBallast() {
		n += g.opts.BallastBytes
	}
	return n
}

// measure is the free space of the least free of the store's directory and AlsoWatch.
func (g *space) measure() (int64, error) {
	free, err := g.opts.FreeSpace(g.dir)
	for _, dir := range g.opts.AlsoWatch {
		if err != nil {
			break
		}
		var f int64
		f, err = g.opts.FreeSpace(dir)
		free = min(free, f)
	}
	return free, err
}

// measureRecent is the last measurement while it is younger than MeasureEvery, else a new
// one. Checks racing past an old one each measure: harmless.
func (g *space) measureRecent() (int64, error) {
	now := time.Now().UnixNano()
	if at := g.measuredAt.Load(); g.opts.MeasureEvery > 0 && at != 0 && now-at < int64(g.opts.MeasureEvery) {
		return g.measuredFree.Load(), nil
	}
	free, err := g.measure()
	if err == nil {
		g.measuredFree.Store(free)
		g.measuredAt.Store(now)
	}
	return free, err
}

// onDiskFull is Pebble's ENOSPC callback (vfs.OnDiskFull): Pebble's writes wait while it
// runs and the failed one is retried once afterwards, into the ballast's space.
func (g *space) onDiskFull() {
	freed := g.removeBallast()
	g.markFull(fmt.Sprintf("the disk ran out of space (ENOSPC); ballast given up: %t", freed))
}

// markFull makes the store unwritable and starts the monitor; it logs once per change.
func (g *space) markFull(reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.writable.Load() {
		return
	}
	g.writable.Store(false)
	g.reason, g.since = reason, time.Now()
	free, _ := g.measure()
	g.opts.Logger.Error("data directory full: refusing writes, calls are answered 503 until space returns",
		"dir", g.dir, "reason", reason, "free_bytes", free, "min_free_bytes", g.opts.MinFreeBytes)
	if !g.watching {
		g.watching = true
		g.monitors = supervise.Loop(whereSpace, g.stop, g.monitor)
	}
}

// whereSpace names the full-disk monitor to supervise (its panics, its fault point).
const whereSpace = "persistence.space"

// monitor waits for space to return, then resumes writes. Started again after a panic, it
// goes on waiting: watching stays set until writes resume.
func (g *space) monitor() {
	t := time.NewTicker(g.opts.RecheckEvery)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			supervise.Fault(whereSpace)
			if g.tryResume() {
				return
			}
		}
	}
}

// tryResume lays the ballast down again and resumes writes once there is room for both.
func (g *space) tryResume() bool {
	free, err := g.measure()
	if err != nil || free < g.resumeAt() {
		return false
	}
	if g.opts.BallastBytes > 0 && !g.hasBallast() {
		if err := g.makeBallast(); err != nil {
			return false // the space went again; try at the next tick
		}
		if free, err = g.measure(); err != nil || free < g.opts.MinFreeBytes {
			return false
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.opts.Logger.Info("data directory has space again: writes resume", "dir", g.dir, "free_bytes", free,
		"refused_for", time.Since(g.since).Round(time.Millisecond).String())
	g.reason, g.since = "", time.Time{}
	g.watching = false
	g.measuredFree.Store(free)
	g.measuredAt.Store(time.Now().UnixNano())
	g.writable.Store(true)
	return true
}

func (g *space) state() SpaceState {
	free, err := g.measure()
	if err != nil {
		free = -1
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return SpaceState{Writable: g.writable.Load(), FreeBytes: free, Reason: g.reason, Since: g.since}
}

func (g *space) close() {
	g.mu.Lock()
	select {
	case <-g.stop:
	default:
		close(g.stop)
	}
	monitors := g.monitors
	g.mu.Unlock()
	if monitors != nil {
		<-monitors // an earlier monitor ended when writes resumed
	}
}

func (g *space) hasBallast() bool {
	fi, err := os.Stat(g.ballast)
	return err == nil && fi.Size() >= g.opts.BallastBytes
}

// makeBallast writes the ballast file whole (fsynced) or leaves none.
func (g *space) makeBallast() error {
	g.ballastMu.Lock()
	defer g.ballastMu.Unlock()
	tmp := g.ballast + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = allocate(f, g.opts.BallastBytes)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, g.ballast)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// removeBallast deletes the ballast, reporting whether there was one.
func (g *space) removeBallast() bool {
	g.ballastMu.Lock()
	defer g.ballastMu.Unlock()
	os.Remove(g.ballast + ".tmp")
	return os.Remove(g.ballast) == nil
}

// IsDiskFull reports an error that means the disk ran out of space: ErrFull, or ENOSPC from
// the operating system.
func IsDiskFull(err error) bool {
	return errors.Is(err, ErrFull) || errors.Is(err, syscall.ENOSPC)
}

func byteCount(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// writeZeros writes n zero bytes to f: a reservation on filesystems without fallocate.
func writeZeros(f *os.File, n int64) error {
	buf := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := f.Write(buf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

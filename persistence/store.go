// Package persistence stores accounts, API keys and the request log in Pebble.
//
// It is the durable state of the gateway. Values are msgpack; keys are
// namespaced byte strings ("acct/", "acctorder/", "acctemail/", "key/",
// "keyhash/", "acctkey/", "log/", "meta/", …); times are UTC unix integers.
// Every input is validated before anything is written, and every change that touches more than one key goes
// into a single batch committed with pebble.Sync, so a crash or a bad request
// can never leave a half-written record or a dangling index entry behind.
package persistence

import (
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/vmihailenco/msgpack/v5"
)

// Sentinel errors. Returned errors wrap one of these (test with errors.Is)
// and their messages name the offending field or id.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
	ErrInvalid  = errors.New("invalid")
	// ErrUnavailable: a cluster node could not confirm it read the current record (its
	// metadata shard did not answer in time); nothing was read or changed.
	ErrUnavailable = errors.New("unavailable")
)

// Key namespaces. Each ends in '/', so one namespace is never a prefix of
// another ("key/" vs "keyhash/") and prefixUpper only has to bump that byte.
const (
	nsAccount = "acct/"
	nsKey     = "key/"
	nsKeyHash = "keyhash/"
	nsAcctKey = "acctkey/"
	nsLog     = "log/"
	nsMeta    = "meta/"
)

// Store is the gateway's durable state. All methods are safe for concurrent
// use.
type Store struct {
	db     *pebble.DB
	space  *space   // refuses writes while the disk is full (space.go)
	ledger *ledger  // group commits of the quota actors' writes
	dicts  logDicts // the request log's dictionaries (logdict.go)
	// accounts caches accounts' plans for AccountPlan (accountcache.go).
	accounts *accountCache
	keys     *keyCache // LookupKey's answers (keycache.go)

	// mu serialises read-modify-write operations (uniqueness checks, plan
	// changes, revocations). Pebble has no transactions, so without it two
	// concurrent imports of the same secret could both pass the duplicate
	// check. Plain reads and blind writes (log, meta) do not take it.
	mu sync.Mutex
	// lastNanos is the last creation timestamp handed out for the acctkey
	// and acctorder indexes (guarded by mu); it keeps keys and accounts in
	// creation order even if the wall clock steps backwards or two land in
	// the same nanosecond.
	lastNanos int64

	closed atomic.Bool
}

// Open opens (creating if needed) the Pebble database whose files live
// directly in dir, with the default Options.
func Open(dir string) (*Store, error) { return OpenWith(dir, Options{}) }

// OpenWith is Open with options (the full-disk guard's thresholds).
func OpenWith(dir string, o Options) (*Store, error) {
	o.defaults()
	if dir == "" {
		return nil, fmt.Errorf("persistence: open: %w: empty dir", ErrInvalid)
	}
	// 0o700: the directory holds key hashes and account e-mails.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("persistence: open: %w", err)
	}
	g := newSpace(dir, o)
	g.prepare()
	opts := &pebble.Options{
		// Newest format: this is a fresh store, no older binaries read it.
		FormatMajorVersion: pebble.FormatNewest,
		// Pebble's default logger chatters on stderr; the gateway has its
		// own logging and surfaces errors through return values.
		Logger: quietLogger{},
		// On ENOSPC the ballast goes and Pebble retries the write once (space.go).
		FS:           vfs.OnDiskFull(o.FS, g.onDiskFull),
		CacheSize:    o.CacheBytes,
		MemTableSize: uint64(o.MemTableBytes),
	}
	// Bloom filters on every level (later levels take L0's): most point reads miss — a
	// replicated command's id is looked up before it applies, and is new — and without a
	// filter each miss reads an index and a data block of every table in its way.
	opts.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	// zstd for the two lowest levels, where most bytes (the request log) end up: a third less
	// disk than Snappy there (BenchmarkRequestLogDisk); the upper levels stay fast.
	opts.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionGood })
	db, err := pebble.Open(dir, opts)
	if err != nil {
		g.close()
		return nil, fmt.Errorf("persistence: open %s: %w", dir, err)
	}
	s := &Store{db: db, space: g, ledger: newLedger(db, g, o.MemTableBytes), accounts: newAccountCache(), keys: newKeyCache()}
	if err := s.indexAccounts(); err != nil {
		s.ledger.close()
		db.Close()
		return nil, fmt.Errorf("persistence: open %s: indexing accounts: %w", dir, err)
	}
	return s, nil
}

// The store's memory (docs/decisions.md, "Memory and the per-call account read"): the block
// cache holds the blocks reads brought in, up to CacheBytes, and a memtable is resident as
// far as writes filled it, two of them once one has been flushed (Pebble keeps it for
// reuse). A gateway's hot data (accounts, keys, quota records, the last minute of the
// request log) is small and mostly read once per account actor's life, and what a call reads
// of keys and accounts is cached (keycache.go, accountcache.go): a 2 MiB cache and 1 MiB
// memtables, 4 MiB in all, where 8 MiB and Pebble's 4 MiB kept 16 MiB resident once a node
// had written 8 MiB. A cluster node, whose shards read the store on every step, keeps 64
// MiB of cache, and writes every step of its shards: 16 MiB memtables, where 1 MiB ones
// filled faster than they flushed under load and stalled the shards' applies (ForCluster).
const (
	defaultCacheBytes    = 2 << 20
	defaultMemTableBytes = 1 << 20
	// ClusterCacheBytes and ClusterMemTableBytes are a cluster node's unless they are set.
	ClusterCacheBytes    = 64 << 20
	ClusterMemTableBytes = 16 << 20
)

// ForCluster is o with a cluster node's cache and memtable where o leaves them unset.
func (o Options) ForCluster() Options {
	if o.CacheBytes == 0 {
		o.CacheBytes = ClusterCacheBytes
	}
	if o.MemTableBytes == 0 {
		o.MemTableBytes = ClusterMemTableBytes
	}
	return o
}

func (o *Options) memoryDefaults() {
	if o.CacheBytes <= 0 {
		o.CacheBytes = defaultCacheBytes
	}
	if o.MemTableBytes <= 0 {
		o.MemTableBytes = defaultMemTableBytes
	}
}

// CheckWritable reports whether a write would be taken now: nil, or an error wrapping
// ErrFull while the data directory's disk is below its reserve. It measures the disk.
func (s *Store) CheckWritable() error { return s.space.check() }

// Writable reports the store's state as last seen, without measuring the disk.
func (s *Store) Writable() bool { return s.space.writable.Load() }

// Space is the store's disk state, measured now.
func (s *Store) Space() SpaceState { return s.space.state() }

// Close closes the database. Every acknowledged write is already synced to
// the WAL, so nothing is lost if Close is skipped; it releases the directory
// lock and files. Calling it more than once is a no-op; using the Store
// after Close is a programming error.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.ledger.close()
	s.space.close()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("persistence: close: %w", err)
	}
	return nil
}

// quietLogger drops Pebble's informational chatter (WAL replay notices on
// every Open) but keeps errors visible and fatal errors fatal, as Pebble's
// Logger contract requires.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	log.Printf("pebble: "+format, args...)
}
func (quietLogger) Fatalf(format string, args ...any) {
	log.Fatalf("pebble: "+format, args...)
}

// getMsgpack decodes the value at key into v (a binaryRecord's binary encoding, or msgpack).
// A missing key yields a bare ErrNotFound, which callers wrap with the id they were looking
// for.
func (s *Store) getMsgpack(key []byte, v any) error { return getMsgpackIn(s.db, key, v) }

// getMsgpackIn is getMsgpack through r: the database, or a batch that reads its own writes.
func getMsgpackIn(r pebble.Reader, key []byte, v any) error {
	val, closer, err := r.Get(key)
	if err != nil {
		return mapNotFound(err)
	}
	// val is only valid until closer.Close, so decode before closing.
	if r, ok := v.(binaryRecord); ok && len(val) > 0 && val[0] == binaryV1 {
		err = r.readBinary(val[1:])
	} else {
		err = msgpack.Unmarshal(val, v)
	}
	closer.Close()
	if err != nil {
		return fmt.Errorf("decode %q: %w", key, err)
	}
	return nil
}

// mapNotFound turns Pebble's not-found into ours so callers can use
// errors.Is(err, ErrNotFound) without importing Pebble.
func mapNotFound(err error) error {
	if errors.Is(err, pebble.ErrNotFound) {
		return ErrNotFound
	}
	return err
}

// has reports whether key exists.
func (s *Store) has(key []byte) (bool, error) { return hasIn(s.db, key) }

// hasIn is has through r.
func hasIn(r pebble.Reader, key []byte) (bool, error) {
	_, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	closer.Close()
	return true, nil
}

// putMsgpack encodes v into the batch at key: in its binary encoding when it has one
// (binaryRecord, quotabinary.go), else msgpack. Encoding happens before anything is
// committed, so an encode failure leaves the store untouched.
func putMsgpack(b *pebble.Batch, key []byte, v any) error {
	if r, ok := v.(binaryRecord); ok {
		return b.Set(key, r.appendBinary(nil), nil)
	}
	val, err := msgpack.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %q: %w", key, err)
	}
	return b.Set(key, val, nil)
}

// commit applies b durably and releases it. Every write in this package goes
// through here (or commitWith) so that nothing is acknowledged before it is on disk, and
// nothing reaches Pebble while the disk is full.
func (s *Store) commit(b *pebble.Batch) error { return s.commitWith(b, pebble.Sync) }

// commitWith is commit with the caller's sync choice.
func (s *Store) commitWith(b *pebble.Batch, opt *pebble.WriteOptions) error {
	defer b.Close()
	if err := s.space.check(); err != nil {
		return err
	}
	return b.Commit(opt)
}

// scan calls fn for every key in [lower, upper) in ascending order until fn
// returns false or an error. k and v are only valid during the call.
func (s *Store) scan(lower, upper []byte, fn func(k, v []byte) (bool, error)) error {
	return scanIn(s.db, lower, upper, fn)
}

// scanIn is scan through r.
func scanIn(r pebble.Reader, lower, upper []byte, fn func(k, v []byte) (bool, error)) (err error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}()
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		more, err := fn(it.Key(), v)
		if err != nil || !more {
			return err
		}
	}
	return it.Error()
}

// scanPrefix is scan over every key starting with prefix.
func (s *Store) scanPrefix(prefix []byte, fn func(k, v []byte) (bool, error)) error {
	return s.scan(prefix, prefixUpper(prefix), fn)
}

// scanPrefixIn is scanPrefix through r.
func scanPrefixIn(r pebble.Reader, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	return scanIn(r, prefix, prefixUpper(prefix), fn)
}

// prefixUpper returns the smallest key greater than every key with the given
// prefix. Prefixes here always end in '/', so the last byte never overflows;
// the loop still handles 0xff for safety.
func prefixUpper(prefix []byte) []byte {
	up := append([]byte(nil), prefix...)
	for i := len(up) - 1; i >= 0; i-- {
		if up[i] < 0xff {
			up[i]++
			return up[:i+1]
		}
	}
	return nil // all 0xff: no upper bound
}

// dbKey concatenates a namespace and its components into a fresh key.
func dbKey(parts ...string) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	k := make([]byte, 0, n)
	for _, p := range parts {
		k = append(k, p...)
	}
	return k
}

// nowUTC is the clock used for CreatedAt/RevokedAt; unix time is UTC by
// definition.
func nowUTC() time.Time { return time.Now().UTC() }

package persistence

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// nsLogDict holds each account's request-log strings (key ids, models, routes, formats
// outside logLabels): logstr/<acct>/<code, 4 bytes big-endian> holds the string its entries
// name by code, so a 24-byte key id costs an entry one byte or two. Codes are the account's
// own, given out in the order its entries are written (on a shard's replicas in the order
// of its log, so every replica gives the same ones), and live in the account's space: a
// shard's snapshot carries them with the entries.
const nsLogDict = "logstr/"

const (
	// maxDictCodes bounds an account's dictionary; later strings are written inline.
	maxDictCodes = 1 << 16
	// maxDictsCached bounds how many accounts' dictionaries are held in memory.
	maxDictsCached = 1 << 14 // about 400 bytes a dictionary of a few keys, models and routes
)

// logDict is one account's dictionary as the store knows it: what is on disk and the codes
// given out in batches not yet committed. A code given out is never given to another string,
// even if its batch fails: every batch naming a code not yet known to be on disk writes its
// pair again, so an entry never reaches the disk before the string it names.
type logDict struct {
	mu      sync.Mutex
	strs    []string
	durable []bool
	pending int // codes given out and not yet on disk
	// codes indexes strs once it is longer than dictScanned; a shorter one is searched
	// (most accounts name a key or two, a model and a route: the map would be 200 bytes).
	codes map[string]uint32
}

// dictScanned is the longest dictionary searched without an index.
const dictScanned = 16

// code is s's code, if s has one.
func (d *logDict) code(s string) (uint32, bool) {
	if d.codes != nil {
		code, ok := d.codes[s]
		return code, ok
	}
	for i, t := range d.strs {
		if t == s {
			return uint32(i), true
		}
	}
	return 0, false
}

// add gives s the next code.
func (d *logDict) add(s string, durable bool) uint32 {
	code := uint32(len(d.strs))
	d.strs = append(d.strs, s)
	d.durable = append(d.durable, durable)
	switch {
	case d.codes != nil:
		d.codes[s] = code
	case len(d.strs) > dictScanned:
		d.codes = make(map[string]uint32, len(d.strs))
		for i := len(d.strs) - 1; i >= 0; i-- { // the first of two equal strings keeps its code, as the search finds
			d.codes[d.strs[i]] = uint32(i)
		}
	}
	return code
}

// logDicts caches the accounts' dictionaries.
type logDicts struct {
	mu    sync.Mutex
	accts map[string]*logDict
}

func logDictKey(account string, code uint32) []byte {
	return binary.BigEndian.AppendUint32(dbKey(nsLogDict, account, "/"), code)
}

// lock returns account's dictionary locked, read from r on first use. The cache's lock is
// held until then, so a dictionary is never evicted between its lookup and a code given out.
func (ds *logDicts) lock(r pebble.Reader, account string) (*logDict, error) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	d, ok := ds.accts[account]
	if !ok {
		var err error
		if d, err = readLogDict(r, account); err != nil {
			return nil, err
		}
		if ds.accts == nil {
			ds.accts = map[string]*logDict{}
		}
		if len(ds.accts) >= maxDictsCached {
			ds.evict()
		}
		ds.accts[account] = d
	}
	d.mu.Lock()
	return d, nil
}

// readLogDict reads account's dictionary from r.
func readLogDict(r pebble.Reader, account string) (*logDict, error) {
	d := &logDict{}
	prefix := dbKey(nsLogDict, account, "/")
	err := scanPrefixIn(r, prefix, func(k, v []byte) (bool, error) {
		if len(k) != len(prefix)+4 || binary.BigEndian.Uint32(k[len(prefix):]) != uint32(len(d.strs)) {
			return false, fmt.Errorf("log dictionary key %q out of sequence", k)
		}
		d.add(string(v), true)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("log dictionary of %s: %w", account, err)
	}
	return d, nil
}

// evict forgets dictionaries whose codes are all on disk (reading them again gives the same
// codes), half of the cache at most.
func (ds *logDicts) evict() {
	n := len(ds.accts) / 2
	for name, d := range ds.accts {
		if n == 0 {
			return
		}
		d.mu.Lock()
		idle := d.pending == 0
		d.mu.Unlock()
		if idle {
			delete(ds.accts, name)
			n--
		}
	}
}

// forget drops accounts' dictionaries after their pairs were replaced (a shard's snapshot):
// nothing of theirs may be in flight.
func (ds *logDicts) forget(accounts []string) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	for _, a := range accounts {
		delete(ds.accts, a)
	}
}

// logEncoder writes entries into one batch and remembers the codes the batch puts on disk
// (done marks them once it is committed).
type logEncoder struct {
	s     *Store
	r     pebble.Reader // where a dictionary is read from on first use
	wrote []dictWrite
}

type dictWrite struct {
	d    *logDict
	code uint32
}

// code is s's code in account's dictionary (ok false: write it inline), its pair written
// into b unless it is known to be on disk.
func (enc *logEncoder) code(b *pebble.Batch, account, s string) (code uint32, ok bool, err error) {
	d, err := enc.s.dicts.lock(enc.r, account)
	if err != nil {
		return 0, false, err
	}
	defer d.mu.Unlock()
	code, ok = d.code(s)
	if !ok {
		if len(d.strs) >= maxDictCodes {
			return 0, false, nil
		}
		code = d.add(s, false)
		d.pending++
	}
	if !d.durable[code] {
		if err := b.Set(logDictKey(account, code), []byte(s), nil); err != nil {
			return 0, false, err
		}
		enc.wrote = append(enc.wrote, dictWrite{d, code})
	}
	return code, true, nil
}

// done records the outcome of the batch's commit.
func (enc *logEncoder) done(err error) {
	if err != nil {
		return
	}
	for _, w := range enc.wrote {
		w.d.mu.Lock()
		if !w.d.durable[w.code] {
			w.d.durable[w.code] = true
			w.d.pending--
		}
		w.d.mu.Unlock()
	}
	enc.wrote = enc.wrote[:0]
}

// logDecoder reads an account's entries: the dictionary is read once, on the first entry
// that needs it.
type logDecoder struct {
	s       *Store
	account string
	strs    []string
}

// str is the string of code.
func (dec *logDecoder) str(code uint64) (string, bool) {
	if code >= uint64(len(dec.strs)) && dec.s != nil { // a code given out since: read again
		d, err := dec.s.dicts.lock(dec.s.db, dec.account)
		if err != nil {
			return "", false
		}
		dec.strs = d.strs[:len(d.strs):len(d.strs)]
		d.mu.Unlock()
	}
	if code >= uint64(len(dec.strs)) {
		return "", false
	}
	return dec.strs[code], true
}

// logEncoder is an encoder for one batch, reading dictionaries from r.
func (s *Store) logEncoder(r pebble.Reader) *logEncoder { return &logEncoder{s: s, r: r} }

// logDecoder is a decoder of account's entries.
func (s *Store) logDecoder(account string) *logDecoder { return &logDecoder{s: s, account: account} }

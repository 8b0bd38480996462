package persistence

import "sync"

// keyCache keeps what LookupKey found for a secret, keyed by its SHA-256, so a key in use
// costs no Pebble reads per call: the check was three (hash → id, id → record, the account's
// disabled mark), each a block read and a decompression whenever a compaction had moved the
// block out of the cache, and a third of a plain call's CPU under load.
//
// Only successes are kept. Every write that can change one — a key created, revoked or
// updated, an account disabled or enabled, a replica's snapshot recovery — goes through a
// metadata batch (updateMetaLocked) or ReplaceMeta, and each empties the cache once it has
// committed and before it returns: metadata writes are rare next to key checks, and emptying
// is simpler to trust than naming what a write touched. A read that raced a write keeps
// nothing (gen), as accountCache.
type keyCache struct {
	mu  sync.RWMutex
	m   map[[32]byte]Key
	gen uint64
}

// maxCachedKeys bounds the cache; past it an arbitrary key makes room.
const maxCachedKeys = 1 << 16

func newKeyCache() *keyCache { return &keyCache{m: map[[32]byte]Key{}} }

func (c *keyCache) get(sum [32]byte) (Key, bool, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	k, ok := c.m[sum]
	return k, ok, c.gen
}

// put keeps k, read by a lookup that began at generation gen, unless a write came since.
func (c *keyCache) put(sum [32]byte, k Key, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if _, ok := c.m[sum]; !ok && len(c.m) >= maxCachedKeys {
		for s := range c.m {
			delete(c.m, s)
			break
		}
	}
	c.m[sum] = k
}

// clear forgets every key.
func (c *keyCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.m)
}

package persistence

import "sync"

// accountCache keeps decoded account records for GetAccount, which every admitted call
// makes (the admission reads the account's plan), so a busy account costs no Pebble read
// and no decode per call.
//
// Every write of an account record goes through a metadata batch (updateMetaLocked, which
// the cluster's metadata state machine applies through too), ReplaceMeta (a replica's
// recovery from a snapshot) or putAccount; each drops what it wrote once it has committed
// and before it returns. So a read that starts after a write returned never sees the record
// the write replaced, on the node that wrote it and on a replica that applied it. A read that
// raced a write does not keep what it read: gen moved on meanwhile (put).
type accountCache struct {
	mu    sync.RWMutex
	m     map[string]Account
	gen   uint64            // bumped by every drop: a read begun before it keeps nothing
	plans map[string]string // plan names, interned: accounts share a few
}

// maxCachedAccounts bounds the cache (about 150 bytes an account); past it an arbitrary
// account makes room.
const maxCachedAccounts = 1 << 16

func newAccountCache() *accountCache {
	return &accountCache{m: map[string]Account{}, plans: map[string]string{}}
}

func (c *accountCache) get(id string) (Account, bool) {
	c.mu.RLock()
	a, ok := c.m[id]
	c.mu.RUnlock()
	return a, ok
}

// generation is what a read notes before it reads the store, for put.
func (c *accountCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// put keeps a, read from the store by a read that began at generation gen, unless a write
// dropped anything since: a's record may be the one that write replaced.
func (c *accountCache) put(a Account, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if p, ok := c.plans[a.Plan]; ok {
		a.Plan = p
	} else if len(c.plans) < maxCachedAccounts {
		c.plans[a.Plan] = a.Plan
	}
	if _, ok := c.m[a.ID]; !ok && len(c.m) >= maxCachedAccounts {
		for id := range c.m {
			delete(c.m, id)
			break
		}
	}
	c.m[a.ID] = a
}

// drop forgets the accounts ids (all of them when all is set).
func (c *accountCache) drop(all bool, ids ...string) {
	if !all && len(ids) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if all {
		clear(c.m)
		clear(c.plans)
		return
	}
	for _, id := range ids {
		delete(c.m, id)
	}
}

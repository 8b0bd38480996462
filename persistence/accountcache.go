package persistence

import "sync"

// accountCache keeps accounts' plans for AccountPlan, which every admitted call asks (the
// admission reads the account's plan), so a busy account costs no Pebble read and no decode
// per call. It keeps the plan alone with the move a subscription scheduled, under the id the
// caller passed; the accounts on one plan with no move share one entry: about 50 bytes an
// account, where the decoded record with its e-mail was about 190.
//
// Every write of an account record goes through a metadata batch (updateMetaLocked, which
// the cluster's metadata state machine applies through too), ReplaceMeta (a replica's
// recovery from a snapshot) or putAccount; each drops what it wrote once it has committed
// and before it returns. So a read that starts after a write returned never sees the plan
// the write replaced, on the node that wrote it and on a replica that applied it. A read that
// raced a write does not keep what it read: gen moved on meanwhile (put).
type accountCache struct {
	mu    sync.RWMutex
	m     map[string]*cachedPlan // account id → plan
	gen   uint64                 // bumped by every drop: a read begun before it keeps nothing
	plans map[string]*cachedPlan // the entries of accounts with no move scheduled, one per plan
}

// maxCachedAccounts bounds the cache; past it an arbitrary account makes room.
const maxCachedAccounts = 1 << 16

func newAccountCache() *accountCache {
	return &accountCache{m: map[string]*cachedPlan{}, plans: map[string]*cachedPlan{}}
}

// cachedPlan is an account's plan and the move it has scheduled (Account.PlanAt). Entries
// are never changed once kept: the accounts on a plan with no move share one.
type cachedPlan struct {
	plan, next string
	at         int64
}

func (c *accountCache) get(id string) (e *cachedPlan, ok bool) {
	c.mu.RLock()
	e, ok = c.m[id]
	c.mu.RUnlock()
	return e, ok
}

// generation is what a read notes before it reads the store, for put.
func (c *accountCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// put keeps account id's plan, read from the store by a read that began at generation gen,
// unless a write dropped anything since: the record it read may be the one that write
// replaced.
func (c *accountCache) put(id string, e cachedPlan, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	kept := &e
	if e.next == "" {
		kept = c.shared(e.plan)
	}
	if _, ok := c.m[id]; !ok && len(c.m) >= maxCachedAccounts {
		for id := range c.m {
			delete(c.m, id)
			break
		}
	}
	c.m[id] = kept
}

// shared is the entry of plan with no move scheduled, kept once. The lock is held.
func (c *accountCache) shared(plan string) *cachedPlan {
	if kept, ok := c.plans[plan]; ok {
		return kept
	}
	e := &cachedPlan{plan: plan}
	if len(c.plans) < maxCachedAccounts {
		c.plans[plan] = e
	}
	return e
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

package accounts

import (
	"sync"

	"github.com/modelgate/modelgate/actors/quota/step"
)

// accountCache keeps the accounts an Update last wrote, decoded, so the next step of a busy
// account does not read and decode it from the store. It holds exactly what the store holds
// for each account it has (Update puts an account only once its batch has committed, and a
// failed Update empties it), so it changes no result.
//
// An account in the cache shares its slices and maps with the one an Update works on: that
// Update either commits (and puts its own back) or fails (and the cache is emptied).
type accountCache struct{ m boundedMap[step.Account] }

// maxCachedAccounts bounds the caches per shard; past it an arbitrary account makes room.
const maxCachedAccounts = 2048

// boundedMap holds at most maxCachedAccounts accounts' values.
type boundedMap[V any] map[string]V

func (m boundedMap[V]) put(name string, v V) {
	if _, ok := m[name]; !ok && len(m) >= maxCachedAccounts {
		for k := range m {
			delete(m, k)
			break
		}
	}
	m[name] = v
}

func newAccountCache() *accountCache { return &accountCache{m: boundedMap[step.Account]{}} }

// get and put on a nil cache (a state machine not opened) find and keep nothing.
func (c *accountCache) get(name string) (step.Account, bool) {
	if c == nil {
		return step.Account{}, false
	}
	a, ok := c.m[name]
	return a, ok
}

func (c *accountCache) put(name string, a step.Account) {
	if c != nil {
		c.m.put(name, a)
	}
}

// writtenAccounts is the encoded form of the accounts committed Updates last wrote, for
// readers outside Update (the shard leader's speculation, lead.go): the exact bytes the
// store holds for each, so decoding them gives what a store read would, without the read.
// The bytes are never changed once put; Update puts them only after its batch committed,
// and clear empties the set when an Update fails or the state is replaced.
type writtenAccounts struct {
	mu sync.Mutex
	m  boundedMap[[]byte]
}

func (w *writtenAccounts) get(name string) ([]byte, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.m[name]
	return b, ok
}

func (w *writtenAccounts) put(name string, enc []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = boundedMap[[]byte]{}
	}
	w.m.put(name, enc)
}

func (w *writtenAccounts) clear() {
	w.mu.Lock()
	w.m = nil
	w.mu.Unlock()
}

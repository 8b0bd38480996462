package catalog

import "sync/atomic"

// Holder publishes the current catalog. Requests read it once at their start and keep that
// version to the end, so a reload never changes a request in flight.
type Holder struct{ p atomic.Pointer[Catalog] }

// NewHolder holds c.
func NewHolder(c *Catalog) *Holder {
	h := &Holder{}
	h.p.Store(c)
	return h
}

// Load is the current catalog.
func (h *Holder) Load() *Catalog { return h.p.Load() }

// Store swaps in a new catalog.
func (h *Holder) Store(c *Catalog) { h.p.Store(c) }

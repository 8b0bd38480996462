package persistence

import (
	"errors"
	"fmt"
	"github.com/cockroachdb/pebble/v2"
)

// Quota namespaces: quota/<acct> holds an account's QuotaRecord, credit/<acct>/<key> the
// CreditGrant of one idempotent top-up.
const (
	nsQuota  = "quota/"
	nsCredit = "credit/"
)

// QuotaRecord is the durable quota state of one account, written only by the account's
// quota actor. Money is pico-USD (codec/money), counts of calls are thousandths of a call,
// times are unix seconds UTC unless the field says nanoseconds.
type QuotaRecord struct {
	Balance     int64 `msgpack:"bal"`   // credit balance; below 0 only within a plan's overdraft
	Spent       int64 `msgpack:"spent"` // credits ever charged
	WindowStart int64 `msgpack:"ws"`    // start of the window WindowUsed belongs to
	WindowUsed  int64 `msgpack:"wu"`    // settled calls in that window
	WeekStart   int64 `msgpack:"wks"`   // the Monday 00:00 UTC WeekUsed belongs to
	WeekUsed    int64 `msgpack:"wku"`
	Day         int64 `msgpack:"day"` // the 00:00 UTC the daily counters belong to
	Images      int64 `msgpack:"img"` // images committed that day
	Video       int64 `msgpack:"vid"` // video seconds committed that day
	// Media are the open image and video reservations: a video task outlives a restart.
	Media []MediaHold `msgpack:"media,omitempty"`
	// Holds are credits reserved for work that outlives its call (a video task beyond the
	// plan), until that work settles or releases them.
	Holds []CreditHold `msgpack:"holds,omitempty"`
	// AccountBurst, KeyBurst and Throttled are written when the actor passivates (so an idle
	// spell loses nothing); a crash may lose them. They hold admission times (unix ns)
	// inside the last 60 s, of the whole account and per key id, and the end of each
	// throttled key's throttle (unix ns).
	AccountBurst []int64            `msgpack:"ab,omitempty"`
	KeyBurst     map[string][]int64 `msgpack:"kb,omitempty"`
	Throttled    map[string]int64   `msgpack:"thr,omitempty"`
}

// Media kinds of a MediaHold.
const (
	MediaImages = "images"
	MediaVideo  = "video_seconds"
)

// MediaHold is a reservation of daily images or video seconds.
type MediaHold struct {
	ID     uint64 `msgpack:"id"`
	Kind   string `msgpack:"k"`
	Amount int64  `msgpack:"n"`
	Day    int64  `msgpack:"day"` // the 00:00 UTC it was reserved on
}

// CreditHold is credits held under a key (a video task's "video/<task id>"): the balance
// they hold is not available to other calls.
type CreditHold struct {
	Key    string `msgpack:"k"`
	Amount int64  `msgpack:"amt"` // pico-USD
	At     int64  `msgpack:"at"`  // unix seconds UTC
}

// CreditGrant records one applied top-up under its idempotency key.
type CreditGrant struct {
	Amount  int64 `msgpack:"amt"` // pico-USD
	At      int64 `msgpack:"at"`  // unix seconds UTC
	Balance int64 `msgpack:"bal"` // the balance right after it
}

// QuotaWrite is one change of an account's quota state, applied as a single synced batch:
// the state, optionally the top-up that changed it, optionally request log entries whose
// costs it charged. Nothing is acknowledged before it is on disk.
type QuotaWrite struct {
	Account  string
	State    *QuotaRecord
	GrantKey string       // with Grant: the idempotency key of a top-up
	Grant    *CreditGrant // nil when no top-up is part of this write
	Log      []LogEntry   // written under log/ exactly as AppendLog writes them
	// NoSync skips the fsync for a write that moves no money (counts within the plan): it
	// survives a process crash (the OS has it) and may lose its last milliseconds only to a
	// power loss. Charges and top-ups are always synced before they are acknowledged.
	NoSync bool
}

const maxIdempotencyKeyLen = 128

// LoadQuota returns an account's quota record; found is false for an account that never
// had one (the zero record is its initial state).
func (s *Store) LoadQuota(account string) (rec QuotaRecord, found bool, err error) {
	if err := validateLogAccount(account); err != nil {
		return rec, false, fmt.Errorf("persistence: load quota: %w", err)
	}
	err = s.getMsgpack(dbKey(nsQuota, account), &rec)
	switch {
	case errors.Is(err, ErrNotFound):
		return QuotaRecord{}, false, nil
	case err != nil:
		return QuotaRecord{}, false, fmt.Errorf("persistence: load quota of %s: %w", account, err)
	}
	return rec, true, nil
}

// CreditGrantFor returns the top-up recorded under an idempotency key, if any.
func (s *Store) CreditGrantFor(account, key string) (g CreditGrant, found bool, err error) {
	if err := validateCreditKey(account, key); err != nil {
		return g, false, fmt.Errorf("persistence: credit grant: %w", err)
	}
	err = s.getMsgpack(dbKey(nsCredit, account, "/", key), &g)
	switch {
	case errors.Is(err, ErrNotFound):
		return CreditGrant{}, false, nil
	case err != nil:
		return CreditGrant{}, false, fmt.Errorf("persistence: credit grant %s/%s: %w", account, key, err)
	}
	return g, true, nil
}

// WriteQuota applies w atomically, durably (pebble.Sync) unless w.NoSync. Invalid input
// writes nothing.
func (s *Store) WriteQuota(w QuotaWrite) error {
	if err := validateLogAccount(w.Account); err != nil {
		return fmt.Errorf("persistence: write quota: %w", err)
	}
	if w.State == nil {
		return fmt.Errorf("persistence: write quota of %s: %w: no state", w.Account, ErrInvalid)
	}
	if w.Grant != nil {
		if err := validateCreditKey(w.Account, w.GrantKey); err != nil {
			return fmt.Errorf("persistence: write quota: %w", err)
		}
	}
	for i := range w.Log {
		if err := ValidateLogEntry(&w.Log[i]); err != nil {
			return fmt.Errorf("persistence: write quota of %s: log[%d]: %w", w.Account, i, err)
		}
	}
	b := s.db.NewBatch()
	err := putMsgpack(b, dbKey(nsQuota, w.Account), w.State)
	if err == nil && w.Grant != nil {
		err = putMsgpack(b, dbKey(nsCredit, w.Account, "/", w.GrantKey), w.Grant)
	}
	for i := 0; err == nil && i < len(w.Log); i++ {
		e := &w.Log[i]
		err = putMsgpack(b, logKey(e.AccountID, e.Time, e.RequestID), e)
	}
	if err != nil {
		b.Close()
		return fmt.Errorf("persistence: write quota of %s: %w", w.Account, err)
	}
	opt := pebble.Sync
	if w.NoSync {
		opt = pebble.NoSync
	}
	if err := s.commitWith(b, opt); err != nil {
		return fmt.Errorf("persistence: write quota of %s: %w", w.Account, err)
	}
	return nil
}

// ValidateLogEntry reports what AppendLog would reject in e, so a caller can refuse a bad
// entry before it joins a batch with other writes.
func ValidateLogEntry(e *LogEntry) error { return validateLogEntry(e) }

func validateCreditKey(account, key string) error {
	if err := validateLogAccount(account); err != nil {
		return err
	}
	if CheckIdempotencyKey(key) != nil {
		return fmt.Errorf("%w: idempotency key %q must be 1-%d printable ASCII bytes", ErrInvalid, key, maxIdempotencyKeyLen)
	}
	return nil
}

// CheckIdempotencyKey refuses a top-up's idempotency key the store cannot keep, so a caller
// refuses it before the key reaches the account's write: 1-128 printable ASCII characters.
func CheckIdempotencyKey(key string) error {
	if key == "" || len(key) > maxIdempotencyKeyLen || !printableASCII(key) {
		return invalidf("idempotency_key", "idempotency_key must be 1-%d printable ASCII characters without spaces", maxIdempotencyKeyLen)
	}
	return nil
}

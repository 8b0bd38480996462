package persistence

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/vmihailenco/msgpack/v5"
)

// Quota namespaces: quota/<acct> holds an account's QuotaRecord, qkey/<acct>/<key id> the
// KeyQuota of one of its keys, credit/<acct>/<key> the CreditGrant of one idempotent top-up
// or charge.
const (
	nsQuota    = "quota/"
	nsKeyQuota = "qkey/"
	nsCredit   = "credit/"
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
	// LogSeq is the sequence number of the account's last request log entry written through
	// its quota actor (LogEntry.Seq), written in the same batch as that entry: a usage query
	// reads it to fix the set of entries it pages through.
	LogSeq uint64 `msgpack:"lseq,omitempty"`
	// KeySpend is what the account's keys with a budget spent in their current budget
	// period, in key id order.
	KeySpend []KeySpend `msgpack:"kspend,omitempty"`
}

// KeySpend is one key's spend (pico-USD, at the models' rates) in the budget period of
// Period that starts at Start (unix seconds UTC; 0 for BudgetTotal).
type KeySpend struct {
	KeyID  string `msgpack:"k"`
	Period string `msgpack:"p"`
	Start  int64  `msgpack:"s,omitempty"`
	Spent  int64  `msgpack:"amt,omitempty"`
}

// KeyQuota is the durable throttle state of one key: its load history over the plan's
// throttle window (Buckets of Width ns, the newest being bucket number Last), the epoch of
// that history (bumped when a throttle starts it over), and the end of its throttle (unix
// ns). The burst windows are not here: the request log holds them (LogEntry.Counted).
type KeyQuota struct {
	Epoch          uint32   `msgpack:"ep,omitempty"`
	ThrottledUntil int64    `msgpack:"thr,omitempty"`
	Width          int64    `msgpack:"w,omitempty"`
	Last           int64    `msgpack:"l,omitempty"`
	Buckets        []uint32 `msgpack:"b,omitempty"`
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
	// Expires (unix ns, 0: never) ends an image reservation whose call never ended it — its
	// node died mid-call — so it stops counting against the day (a video's has none: its
	// task resumes and ends it).
	Expires int64 `msgpack:"exp,omitempty"`
}

// CreditHold is credits held under a key (a video task's "video/<task id>"): the balance
// they hold is not available to other calls.
type CreditHold struct {
	Key    string `msgpack:"k"`
	Amount int64  `msgpack:"amt"` // pico-USD
	At     int64  `msgpack:"at"`  // unix seconds UTC
}

// CreditGrant records one applied top-up (or, negative, a charge) under its idempotency key.
type CreditGrant struct {
	Amount  int64 `msgpack:"amt"` // pico-USD
	At      int64 `msgpack:"at"`  // unix seconds UTC
	Balance int64 `msgpack:"bal"` // the balance right after it
}

// KeyedGrant is a grant with its idempotency key, as the credit history reads it: the key
// says what the grant was made for (a Stripe purchase's, say).
type KeyedGrant struct {
	Key   string      `msgpack:"key"`
	Grant CreditGrant `msgpack:"g"`
}

// GrantWrite is a CreditGrant and its idempotency key.
type GrantWrite struct {
	Key   string
	Grant CreditGrant
}

// KeyQuotaWrite sets (State) or deletes (State nil) one key's KeyQuota.
type KeyQuotaWrite struct {
	KeyID string
	State *KeyQuota
}

// QuotaWrite is one change of an account's quota state, applied as a single synced batch:
// the state, the top-ups and charges that changed it, the keys' throttle state, and the
// request log entries it settled. Nothing is acknowledged before it is on disk.
type QuotaWrite struct {
	Account string
	State   *QuotaRecord
	Grants  []GrantWrite
	Keys    []KeyQuotaWrite
	Log     []LogEntry // written under log/ exactly as AppendLog writes them
}

const maxIdempotencyKeyLen = 128

// LoadQuota returns an account's quota record; found is false for an account that never
// had one (the zero record is its initial state).
func (s *Store) LoadQuota(account string) (rec QuotaRecord, found bool, err error) {
	if err := validateLogAccount(account); err != nil {
		return rec, false, fmt.Errorf("load quota: %w", err)
	}
	err = s.getMsgpack(dbKey(nsQuota, account), &rec)
	switch {
	case errors.Is(err, ErrNotFound):
		return QuotaRecord{}, false, nil
	case err != nil:
		return QuotaRecord{}, false, fmt.Errorf("load quota of %s: %w", account, err)
	}
	return rec, true, nil
}

// LoadKeyQuotas returns the throttle state of every key of an account that has one.
func (s *Store) LoadKeyQuotas(account string) (map[string]KeyQuota, error) {
	if err := validateLogAccount(account); err != nil {
		return nil, fmt.Errorf("load key quotas: %w", err)
	}
	prefix := dbKey(nsKeyQuota, account, "/")
	out := map[string]KeyQuota{}
	err := s.scanPrefix(prefix, func(k, v []byte) (bool, error) {
		var q KeyQuota
		if err := msgpack.Unmarshal(v, &q); err != nil {
			return false, fmt.Errorf("decode %q: %w", k, err)
		}
		out[string(k[len(prefix):])] = q
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("load key quotas of %s: %w", account, err)
	}
	return out, nil
}

// CreditGrantFor returns the top-up recorded under an idempotency key, if any.
func (s *Store) CreditGrantFor(account, key string) (g CreditGrant, found bool, err error) {
	if err := validateCreditKey(account, key); err != nil {
		return g, false, fmt.Errorf("credit grant: %w", err)
	}
	return grantIn(s.db, account, key)
}

// CreditGrants are the account's top-ups in time order (the account API's credit history).
// They live beside its request log in this node's store in both modes: a cluster's account
// shards write them to every replica.
func (s *Store) CreditGrants(account string) ([]KeyedGrant, error) {
	if err := validateLogAccount(account); err != nil {
		return nil, fmt.Errorf("credit grants: %w", err)
	}
	var out []KeyedGrant
	err := s.scanPrefix(dbKey(nsCredit, account, "/"), func(k, v []byte) (bool, error) {
		var g CreditGrant
		if err := msgpack.Unmarshal(v, &g); err != nil {
			return false, fmt.Errorf("decode %q: %w", k, err)
		}
		out = append(out, KeyedGrant{Key: string(k[len(nsCredit)+len(account)+1:]), Grant: g})
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("credit grants of %s: %w", account, err)
	}
	slices.SortStableFunc(out, func(a, b KeyedGrant) int { return cmp.Compare(a.Grant.At, b.Grant.At) })
	return out, nil
}

// grantIn reads a grant through r (the database, or a batch that sees its own writes).
func grantIn(r pebble.Reader, account, key string) (g CreditGrant, found bool, err error) {
	err = getMsgpackIn(r, dbKey(nsCredit, account, "/", key), &g)
	switch {
	case errors.Is(err, ErrNotFound):
		return CreditGrant{}, false, nil
	case err != nil:
		return CreditGrant{}, false, fmt.Errorf("credit grant %s/%s: %w", account, key, err)
	}
	return g, true, nil
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

func validateKeyID(id string) error {
	if id == "" || len(id) > maxLogIDLen || !printableASCII(id) || strings.IndexByte(id, '/') >= 0 {
		return fmt.Errorf("%w: key id %q must be 1-%d printable ASCII bytes without '/'", ErrInvalid, id, maxLogIDLen)
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

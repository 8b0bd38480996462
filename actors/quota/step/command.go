package step

import (
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

// Kind is what a command does.
type Kind uint8

const (
	Admit        Kind = iota + 1 // check every limit and reserve, or refuse
	Settle                       // end an admitted call (ID) with its outcome
	Record                       // log (and, Counts, count) a call answered without an admission
	AddCredits                   // a top-up of Amount under the idempotency key Key
	Charge                       // debit Amount once per idempotency key Key (with its "charge/" prefix)
	Hold                         // hold Amount of credits under Key for work that outlives call ID
	ReleaseHold                  // give the hold under Key back
	MediaReserve                 // reserve N of today's Media (images or video seconds)
	MediaCommit                  // end media reservation ID: N produced
	MediaRelease                 // end media reservation ID: nothing produced
	Expire                       // release calls past their expiry, forget idle keys
	View                         // the admin view of the state
	// Reverse takes Amount back under the idempotency key Key (a refund or a dispute of a
	// purchase); the balance may go below zero. Appended: a kind's number is in Raft logs.
	Reverse
	maxKind
)

// Command is one step's input. It carries everything Apply reads besides the Account: the
// proposer's clock (Now), the plan by value, and what the caller looked up in the same
// store (Prior). Fields a kind does not list are ignored.
type Command struct {
	Kind Kind  `msgpack:"k"`
	Now  int64 `msgpack:"now"` // the proposer's clock, unix ns; the step uses max(Account.Last, Now)
	// Plan: Admit, Record (when Counts), Hold, MediaReserve and View; Charge reads only
	// its Overdraft (the floor a charge stops at).
	Plan Plan `msgpack:"plan"`
	// Key is the calling key (Admit, Record) or the idempotency key (AddCredits, Charge,
	// Hold, ReleaseHold; a charge's with ChargeKeyPrefix).
	Key string `msgpack:"key,omitempty"`
	// ID is the reservation Settle, MediaCommit and MediaRelease end, and the admitted call
	// whose paid estimate a Hold takes over (0: none).
	ID uint64 `msgpack:"id,omitempty"`
	// Units is what Admit or Record counts, in thousandths of a call (positive); on Settle,
	// when above 0 and below what the call reserved, what it counts instead.
	Units int64 `msgpack:"u,omitempty"`
	// Amount is Admit's estimated cost, Settle's actual cost, and the sum of AddCredits,
	// Charge and Hold.
	Amount money.Amount `msgpack:"amt,omitempty"`
	// At is an admitted call's arrival (unix ns; 0: now): its slot in the sliding windows.
	At  int64 `msgpack:"at,omitempty"`
	TTL int64 `msgpack:"ttl,omitempty"` // Admit, MediaReserve of images: ns until a reservation never ended expires
	// Counts: Settle, the call counts (else it is refunded); Record, it is a client error
	// that counts.
	Counts bool `msgpack:"c,omitempty"`
	// Media is the media kind (persistence.MediaImages or MediaVideo) of a media command,
	// or of the reservation MediaID a Settle ends with N produced (0: released).
	Media   string `msgpack:"m,omitempty"`
	MediaID uint64 `msgpack:"mid,omitempty"`
	N       int64  `msgpack:"n,omitempty"`
	// FromHold makes a Charge at most what Key holds, and ends that hold (SettleHold).
	FromHold bool `msgpack:"fh,omitempty"`
	// Log is the entry Settle, Record and Charge write (Record: required). Apply does not
	// change it; Result.Log is the entry to write.
	Log *persistence.LogEntry `msgpack:"log,omitempty"`
	// Prior is the grant already recorded under Key (AddCredits, Charge, Reverse), nil when none:
	// grants are not part of the Account (they only grow), so the caller reads them from
	// the store the state lives in, including grants of commands applied before this one
	// whose batch is not written yet.
	Prior *persistence.CreditGrant `msgpack:"prior,omitempty"`
	// KeyLimits are the calling key's own limits (Admit, Record; View with Key), as the
	// caller read them with the key: the step never reads the store. Nil: none.
	KeyLimits *persistence.KeyLimits `msgpack:"kl,omitempty"`
	// Node and Inc are the admitting cluster node and its incarnation (Admit; Call.Node).
	Node uint64 `msgpack:"nd,omitempty"`
	Inc  uint64 `msgpack:"inc,omitempty"`
	// Res is the id Admit gives its reservation when the proposer chose it (0: the
	// account's next, NextID). A cluster's shard leader answers an admission before its
	// entry is committed, so the id must not depend on the log: a reservation lost with a
	// leader must never share its id with a later one. An Admit whose Res is already a call
	// of the account is answered as that call's admission again, changing nothing.
	Res uint64 `msgpack:"res,omitempty"`
	// Late makes a Settle whose reservation is unknown (its admission was answered by a
	// shard leader that died before committing it) bill the call as if it had been admitted
	// at the settle: Plan, Key, At, TTL and KeyLimits are the admission's, Reserved its
	// units.
	// Without Late such a settle fails with UnknownReservation and bills nothing.
	Late     bool  `msgpack:"late,omitempty"`
	Reserved int64 `msgpack:"rsv,omitempty"`
}

// ChargeKeyPrefix namespaces charges among an account's idempotency records.
const ChargeKeyPrefix = "charge/"

// Limit names what refused a call (the values of quota.Limit).
type Limit string

const (
	LimitBurst    Limit = "burst"
	LimitThrottle Limit = "throttle"
	LimitWindow   Limit = "window"
	LimitWeekly   Limit = "weekly"
	LimitCredits  Limit = "credits"
	LimitImages   Limit = "image_daily_limit_exceeded"
	LimitVideo    Limit = "video_daily_limit_exceeded"
	// The key's own limits (Command.KeyLimits).
	LimitKeyExpired Limit = "key_expired"
	LimitKeyRPM     Limit = "key_rpm_exceeded"
	LimitKeyBudget  Limit = "key_budget_exhausted"
)

// Failure is why a command changed nothing.
type Failure uint8

const (
	OK                  Failure = iota
	UnknownReservation          // Settle, MediaCommit, MediaRelease: no such reservation
	IdempotencyConflict         // AddCredits, Reverse: Key moved another amount; Charge: Key is a top-up
	Overflow                    // AddCredits, Reverse: the balance would overflow
	Invalid                     // a malformed command (unknown kind, negative amount or time)
)

// Budget is a sliding 60 s budget: Limit calls, Remaining of them free, and Reset (unix
// ns), when the oldest call in the window leaves it (now when the window is empty).
type Budget struct {
	Limit     int64 `msgpack:"l,omitempty"`
	Remaining int64 `msgpack:"r,omitempty"`
	Reset     int64 `msgpack:"t,omitempty"`
}

// Counter is a counter on a schedule: the allowance of a window or week (thousandths of a
// call) or a day's images or video seconds. ResetsAt is unix seconds.
type Counter struct {
	Used     int64 `msgpack:"u,omitempty"`
	Reserved int64 `msgpack:"r,omitempty"`
	Limit    int64 `msgpack:"l,omitempty"`
	ResetsAt int64 `msgpack:"t,omitempty"`
}

// Result is what a step decided, and the effects the caller persists in the same batch as
// the Account. Fields a kind does not produce are zero.
type Result struct {
	Fail Failure `msgpack:"f,omitempty"`
	// Admit, Hold, MediaReserve: the decision. ID is the new reservation (Admit,
	// MediaReserve). RetryAfter is ns; ResetsAt unix s (window, weekly, credits, media and a
	// key's budget: when it returns; a key's expiry: when it expired).
	Admitted   bool   `msgpack:"ok,omitempty"`
	ID         uint64 `msgpack:"id,omitempty"`
	Paid       bool   `msgpack:"paid,omitempty"`
	Refused    Limit  `msgpack:"ref,omitempty"`
	RetryAfter int64  `msgpack:"ra,omitempty"`
	ResetsAt   int64  `msgpack:"rs,omitempty"`
	MaxRPM     int64  `msgpack:"rpm,omitempty"`
	Burst      Budget `msgpack:"burst"`
	// Settle, Charge: what was counted and charged, and the balance after. AddCredits: the
	// balance, and Added when this command applied the top-up.
	Counted bool         `msgpack:"cnt,omitempty"`
	Charged money.Amount `msgpack:"chg,omitempty"`
	Balance money.Amount `msgpack:"bal,omitempty"`
	Added   bool         `msgpack:"add,omitempty"`
	// Repeat: AddCredits or Charge found Prior (nothing changed), Hold found Key holding.
	Repeat bool    `msgpack:"rep,omitempty"`
	Daily  Counter `msgpack:"daily"` // MediaReserve: the day's counter after it
	// Moved is the paid estimate of call Command.ID that a Hold took over.
	Moved   money.Amount `msgpack:"mv,omitempty"`
	View    *State       `msgpack:"view,omitempty"`
	Expired []uint64     `msgpack:"exp,omitempty"` // Expire: the calls released unsettled

	// Effects. Dirty: Rec changed and is to be written. Log: the request-log entry to
	// write (Command.Log with its cost, sequence and counts filled in). Grant: the
	// top-up or charge to record under its key (empty Key: none). KeyChanged: a key whose
	// durable throttle state (Account.KeyRecord) changed. Forgotten: keys Expire dropped
	// whose durable state is to be deleted. Advanced: keys Expire kept whose durable state
	// moved on all the same (their activity window advanced): written again, so that a
	// replica writing after every step and one writing after many store the same.
	Dirty      bool                   `msgpack:"dirty,omitempty"`
	Log        *persistence.LogEntry  `msgpack:"log,omitempty"`
	Grant      persistence.GrantWrite `msgpack:"grant"`
	KeyChanged string                 `msgpack:"kc,omitempty"`
	Forgotten  []string               `msgpack:"fgt,omitempty"`
	Advanced   []string               `msgpack:"adv,omitempty"`
}

// KeysToWrite are the keys whose durable throttle state r changed: to be written again
// (Account.KeyRecord), or deleted where that is nil.
func (r *Result) KeysToWrite() []string {
	keys := append(r.Forgotten[:len(r.Forgotten):len(r.Forgotten)], r.Advanced...)
	if r.KeyChanged != "" {
		keys = append(keys, r.KeyChanged)
	}
	return keys
}

// State is the admin view of an account (View).
type State struct {
	Balance  money.Amount `msgpack:"bal,omitempty"`
	Spent    money.Amount `msgpack:"spent,omitempty"`
	Held     money.Amount `msgpack:"held,omitempty"`
	InFlight int          `msgpack:"fl,omitempty"`
	Window   Counter      `msgpack:"win"`
	Weekly   Counter      `msgpack:"wk"`
	Burst    Budget       `msgpack:"burst"` // account-wide (zero when per key or unlimited)
	Keys     []KeyView    `msgpack:"keys,omitempty"`
	Images   Counter      `msgpack:"img"`
	Video    Counter      `msgpack:"vid"`
	// Key is the own limits of the key View asked about (Command.Key with KeyLimits).
	Key *KeyLimitsView `msgpack:"key,omitempty"`
}

// KeyView is one key in the admin view: keys with calls in the last minute, load history
// or a throttle, in key order.
type KeyView struct {
	KeyID          string `msgpack:"id"`
	Burst          Budget `msgpack:"burst"` // per-key burst, or the throttle's cap when throttled
	RecentCalls    int64  `msgpack:"n,omitempty"`
	ThrottledUntil int64  `msgpack:"thr,omitempty"` // unix ns; 0: not throttled
}

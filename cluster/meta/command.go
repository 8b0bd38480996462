// Package meta is the metadata shard (docs/cluster.md, "Sizing": the metadata shard): accounts and API keys as a
// deterministic state machine replicated to every node, and the store the admin API and the
// key check use in cluster mode, which proposes writes to that shard and reads the local
// replica.
package meta

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/persistence"
)

// Kind is what a command does.
type Kind string

// The account and key writes of the admin interface, one kind each.
const (
	KindCreateAccount Kind = "create_account" // Account
	KindSetPlan       Kind = "set_plan"       // Plan
	KindCreateKey     Kind = "create_key"     // Key
	KindImportKey     Kind = "import_key"     // Key
	KindRevokeKey     Kind = "revoke_key"     // Revoke
)

// Key updates: name, models, ZDR and limits.
const (
	KindUpdateKey Kind = "update_key" // Update
)

// Command is one entry of the metadata shard's log: a write its proposer has decided (ids,
// secret hash, timestamps; persistence's proposer halves), which every replica applies the
// same way. Exactly the payload its Kind names is set.
type Command struct {
	// ID is the proposer's random id for the command; a retried proposal carries the same
	// one, so it applies once (the state machine remembers the ids of recent commands).
	ID      string                     `msgpack:"id"`
	Kind    Kind                       `msgpack:"kind"`
	Account *persistence.NewAccount    `msgpack:"account,omitempty"`
	Plan    *persistence.PlanChange    `msgpack:"plan,omitempty"`
	Key     *persistence.NewKey        `msgpack:"key,omitempty"`
	Revoke  *persistence.KeyRevocation `msgpack:"revoke,omitempty"`

	// The sign-in writes (authcommands.go).
	Signup     *persistence.NewSignup      `msgpack:"signup,omitempty"`
	Token      *persistence.NewToken       `msgpack:"token,omitempty"`
	TokenUse   *persistence.TokenUse       `msgpack:"token_use,omitempty"`
	Session    *persistence.NewSession     `msgpack:"session,omitempty"`
	SessionEnd *persistence.SessionEnd     `msgpack:"session_end,omitempty"`
	Touch      *persistence.SessionTouch   `msgpack:"touch,omitempty"`
	Password   *persistence.PasswordChange `msgpack:"password,omitempty"`
	State      *persistence.AccountState   `msgpack:"state,omitempty"`
	Update     *persistence.KeyChange      `msgpack:"update,omitempty"`

	// The Stripe writes (billingcommands.go).
	Payment      *persistence.Payment            `msgpack:"payment,omitempty"`
	Subscription *persistence.SubscriptionChange `msgpack:"subscription,omitempty"`

	Lease *LeaseRenewal `msgpack:"lease,omitempty"` // lease.go
}

// maxCommandID bounds a command id (it is part of a store key).
const maxCommandID = 64

// NewCommandID is a fresh random command id: 128 bits in hex.
func NewCommandID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (it panics instead, since Go 1.24)
	return hex.EncodeToString(b[:])
}

// Encode is the command's log entry.
func (c Command) Encode() ([]byte, error) { return encode(c) }

// DecodeCommand reads a log entry.
func DecodeCommand(b []byte) (Command, error) {
	var c Command
	if err := msgpack.Unmarshal(b, &c); err != nil {
		return Command{}, fmt.Errorf("meta: decode command: %w", err)
	}
	return c, nil
}

// Result is what applying a command (or answering a Lookup) gave: the record written or
// read, or the refusal the single node would have returned.
type Result struct {
	// Index is the log index of the entry that applied the command (for a Lookup: the
	// applied index it answered at). A proposer waits for its node to reach it.
	Index   uint64               `msgpack:"index"`
	Account *persistence.Account `msgpack:"account,omitempty"`
	Key     *persistence.Key     `msgpack:"key,omitempty"`
	Refusal *Refusal             `msgpack:"refusal,omitempty"`
	// Recorded: a Stripe write wrote its record (false: the record was there already).
	Recorded bool `msgpack:"recorded,omitempty"`
}

// DecodeResult reads a Result.
func DecodeResult(b []byte) (Result, error) {
	var r Result
	if err := msgpack.Unmarshal(b, &r); err != nil {
		return Result{}, fmt.Errorf("meta: decode result: %w", err)
	}
	if r.Key != nil && r.Key.Models == nil {
		r.Key.Models = []string{} // as persistence returns it: JSON "[]", never null
	}
	return r, nil
}

// Refusal is a persistence refusal carried in a Result: Err gives back the error value the
// single node returns, so the admin API answers a cluster write as it answers a local one.
type Refusal struct {
	Kind      string `msgpack:"kind"` // not_found, invalid, conflict, disabled, email_taken
	What      string `msgpack:"what,omitempty"`
	ID        string `msgpack:"id,omitempty"`
	Field     string `msgpack:"field,omitempty"`
	Msg       string `msgpack:"msg,omitempty"`
	Email     string `msgpack:"email,omitempty"`
	AccountID string `msgpack:"account_id,omitempty"`
}

var refusalKinds = []struct {
	name string
	kind error
}{{"not_found", persistence.ErrNotFound}, {"invalid", persistence.ErrInvalid}, {"conflict", persistence.ErrConflict},
	{"disabled", persistence.ErrDisabled}}

// RefusalOf is err as a Refusal, ok false when err is not a refusal (a failure of the store,
// which must not become part of the replicated state).
func RefusalOf(err error) (*Refusal, bool) {
	if taken, ok := errors.AsType[*persistence.EmailTakenError](err); ok {
		return &Refusal{Kind: "email_taken", Email: taken.Email, AccountID: taken.AccountID}, true
	}
	e, ok := errors.AsType[*persistence.Error](err)
	if !ok {
		return nil, false
	}
	for _, k := range refusalKinds {
		if e.Kind == k.kind {
			return &Refusal{Kind: k.name, What: e.What, ID: e.ID, Field: e.Field, Msg: e.Msg}, true
		}
	}
	return nil, false
}

// invalid is the refusal of an entry that is not a command this shard applies.
func invalid(format string, args ...any) *Refusal {
	return &Refusal{Kind: "invalid", Field: "command", Msg: fmt.Sprintf(format, args...)}
}

// Err is the refusal as the error value persistence gives.
func (r *Refusal) Err() error {
	if r.Kind == "email_taken" {
		return &persistence.EmailTakenError{Email: r.Email, AccountID: r.AccountID}
	}
	for _, k := range refusalKinds {
		if r.Kind == k.name {
			return &persistence.Error{Kind: k.kind, What: r.What, ID: r.ID, Field: r.Field, Msg: r.Msg}
		}
	}
	return fmt.Errorf("meta: a refusal of unknown kind %q: %s", r.Kind, r.Msg)
}

// encode is msgpack with sorted map keys, so equal values always give equal bytes.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("meta: encode: %w", err)
	}
	return buf.Bytes(), nil
}

package meta

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/persistence"
)

// Query is a read of the metadata shard (StateMachine.Lookup, the Replicator's Read): one
// account or one key, by exactly one of its fields. A key is found by its secret's hash,
// never by the secret, so a query holds nothing that can call the gateway.
type Query struct {
	AccountID  string `msgpack:"account_id,omitempty"`
	KeyID      string `msgpack:"key_id,omitempty"`
	SecretHash string `msgpack:"secret_hash,omitempty"` // lower-case hex SHA-256
	// Sync asks for nothing but the applied index: after a linearizable read of it, this
	// node's replica holds every command committed before the read (Store.sync).
	Sync bool `msgpack:"sync,omitempty"`
}

// Encode is the query as Lookup takes it.
func (q Query) Encode() ([]byte, error) { return encode(q) }

// Lookup answers an encoded Query against the applied state with an encoded Result: the
// record, or the not-found refusal persistence gives; Index is the applied index it read at.
func (m *StateMachine) Lookup(query []byte) ([]byte, error) {
	var q Query
	if err := msgpack.Unmarshal(query, &q); err != nil {
		return nil, fmt.Errorf("meta: lookup: decode query: %w", err)
	}
	res := Result{Index: m.Applied()}
	var err error
	if q.Sync {
		if q != (Query{Sync: true}) {
			return nil, fmt.Errorf("meta: lookup: a query names exactly one of account_id, key_id, secret_hash, sync: %+v", q)
		}
		return encode(res)
	}
	switch {
	case q.AccountID != "" && q.KeyID == "" && q.SecretHash == "":
		var a persistence.Account
		a, err = m.store.GetAccount(q.AccountID)
		res.Account = &a
	case q.KeyID != "" && q.AccountID == "" && q.SecretHash == "":
		var k persistence.Key
		k, err = m.store.GetKey(q.KeyID)
		res.Key = &k
	case q.SecretHash != "" && q.AccountID == "" && q.KeyID == "":
		var k persistence.Key
		k, err = m.store.LookupKeyHash(q.SecretHash)
		res.Key = &k
		if errors.Is(err, persistence.ErrNotFound) {
			err = unknownSecret
		}
	default:
		return nil, fmt.Errorf("meta: lookup: a query names exactly one of account_id, key_id, secret_hash: %+v", q)
	}
	if err != nil {
		r, ok := RefusalOf(err)
		if !ok {
			return nil, fmt.Errorf("meta: lookup: %w", err)
		}
		res = Result{Index: res.Index, Refusal: r}
	}
	return encode(res)
}

// unknownSecret is the refusal of a secret hash no key has (persistence says it with a
// plain wrapped ErrNotFound, which names nothing).
var unknownSecret = &persistence.Error{Kind: persistence.ErrNotFound, What: "key", Msg: "no key matches the given secret"}

package accounts

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/cluster/meta"
	"github.com/modelgate/modelgate/persistence"
)

// ShardRead is a read of an account shard's state, sent by a node that holds no replica of
// the shard to one that does (ReadPath). Exactly one member is set.
type ShardRead struct {
	// Linear is a Query, answered after a linearizable read of the shard.
	Linear []byte `msgpack:"q,omitempty"`
	// The rest read the replica's store as it stands, as a holder reads its own.
	Log    *persistence.LogQuery `msgpack:"log,omitempty"`
	Entry  *EntryRead            `msgpack:"entry,omitempty"`
	Grants string                `msgpack:"grants,omitempty"` // an account's credit grants
	Task   string                `msgpack:"task,omitempty"`   // a video task by id
	Asset  string                `msgpack:"asset,omitempty"`  // the holders of an asset by id
}

// EntryRead asks for one request-log entry of an account.
type EntryRead struct {
	Account string `msgpack:"acct"`
	ID      string `msgpack:"id"`
}

// readAnswer is a ShardRead's answer: Out (msgpack of the value read, or a Query's result),
// or the refusal the store answered (not found, invalid).
type readAnswer struct {
	Out     []byte        `msgpack:"out,omitempty"`
	Refusal *meta.Refusal `msgpack:"refusal,omitempty"`
}

func (a readAnswer) err() error {
	if a.Refusal != nil {
		return a.Refusal.Err()
	}
	return nil
}

// Reads is a cluster node's reads of what the account shards hold beyond the quota state
// (the request log, credit grants, video tasks, asset holders): from this node's replica
// when it holds the account's shard, else from a node that does. It also answers other
// nodes' reads (ServeRead, ServeNodes).
type Reads struct {
	o     *Owner
	store *persistence.Store
}

// NewReads reads store, this node's replicas, and sends the rest through o.
func NewReads(o *Owner, store *persistence.Store) *Reads { return &Reads{o: o, store: store} }

// QueryLog implements the request-log reader of the usage pages and GET /v1/key.
func (r *Reads) QueryLog(q persistence.LogQuery) (persistence.LogPage, error) {
	var page persistence.LogPage
	if shard := r.o.Shard(q.Account); !r.o.holds(shard) {
		return page, r.elsewhere(shard, &ShardRead{Log: &q}, &page)
	}
	return r.store.QueryLog(q)
}

// LogEntry implements the reader of GET /v1/generations/{id}.
func (r *Reads) LogEntry(account, id string) (persistence.LogEntry, error) {
	var e persistence.LogEntry
	if r.o.holds(r.o.Shard(account)) {
		return r.store.LogEntry(account, id)
	}
	return e, r.elsewhere(r.o.Shard(account), &ShardRead{Entry: &EntryRead{Account: account, ID: id}}, &e)
}

// CreditGrants implements the reader of the credits history.
func (r *Reads) CreditGrants(account string) ([]persistence.KeyedGrant, error) {
	var g []persistence.KeyedGrant
	if r.o.holds(r.o.Shard(account)) {
		return r.store.CreditGrants(account)
	}
	return g, r.elsewhere(r.o.Shard(account), &ShardRead{Grants: account}, &g)
}

// GetTask reads video task id: from this node's replicas, else from each shard not held
// here in turn (a task's id does not name its account).
func (r *Reads) GetTask(id string) (persistence.VideoTask, error) {
	t, err := r.store.GetTask(id)
	if !errors.Is(err, persistence.ErrNotFound) {
		return t, err
	}
	for s := range r.o.notHeld() {
		if e := r.elsewhere(s, &ShardRead{Task: id}, &t); !errors.Is(e, persistence.ErrNotFound) {
			return t, e
		}
	}
	return t, err
}

// AssetHolders finds asset id among the account shards, as the package's AssetHolders
// does on one node's replicas, asking a holder of each shard not held here.
func (r *Reads) AssetHolders(id string) (shard uint64, holders []uint64, ok bool, err error) {
	shard, holders, ok, err = AssetHolders(r.store, r.o.first, len(r.o.batchers), id)
	if ok || err != nil {
		return shard, holders, ok, err
	}
	for s := range r.o.notHeld() {
		var found assetFound
		if err := r.elsewhere(s, &ShardRead{Asset: id}, &found); err != nil {
			return 0, nil, false, err
		}
		if found.OK {
			return found.Shard, found.Holders, true, nil
		}
	}
	return 0, nil, false, nil
}

type assetFound struct {
	Shard   uint64   `msgpack:"shard"`
	Holders []uint64 `msgpack:"holders"`
	OK      bool     `msgpack:"ok"`
}

// elsewhere sends read to a holder of shard and decodes its value into out.
func (r *Reads) elsewhere(shard uint64, read *ShardRead, out any) error {
	a, err := r.o.readElsewhere(context.Background(), shard, read)
	if err != nil {
		return err
	}
	if err := a.err(); err != nil {
		return err
	}
	if err := msgpack.Unmarshal(a.Out, out); err != nil {
		return fmt.Errorf("accounts: shard %d: a read that does not decode: %w", shard, err)
	}
	return nil
}

// shards yields the account shards; notHeld those with no replica on this node.
func (o *Owner) shards() func(func(uint64) bool) {
	return func(yield func(uint64) bool) {
		for s := o.first; s < o.first+uint64(len(o.batchers)); s++ {
			if !yield(s) {
				return
			}
		}
	}
}

func (o *Owner) notHeld() func(func(uint64) bool) {
	return func(yield func(uint64) bool) {
		for s := range o.shards() {
			if !o.holds(s) && !yield(s) {
				return
			}
		}
	}
}

// ServeRead is the internal listener's handler of ReadPath+"{shard}".
func (r *Reads) ServeRead(w http.ResponseWriter, req *http.Request) {
	shard, raw, ok := internalRequest(w, req)
	if !ok {
		return
	}
	if r.o.leadingOf(shard) == nil || !r.o.holds(shard) {
		r.o.misdirected(w, shard, &NotLeaderError{})
		return
	}
	var read ShardRead
	if err := msgpack.Unmarshal(raw, &read); err != nil {
		http.Error(w, "body: not a shard read: "+err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), AttemptWait)
	defer cancel()
	var a readAnswer
	v, err := r.local(ctx, shard, &read)
	if err == nil {
		if read.Linear != nil {
			a.Out = v.([]byte)
		} else {
			a.Out, err = msgpack.Marshal(v)
		}
	}
	if err != nil {
		refusal, ok := meta.RefusalOf(err) // a store refusal crosses as itself
		if !ok {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		a = readAnswer{Refusal: refusal}
	}
	body, err := msgpack.Marshal(&a)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/msgpack")
	w.Write(body)
}

// local answers read on this node's replica of shard.
func (r *Reads) local(ctx context.Context, shard uint64, read *ShardRead) (any, error) {
	switch {
	case read.Linear != nil:
		return r.o.rep.Read(ctx, shard, read.Linear)
	case read.Log != nil:
		if r.o.Shard(read.Log.Account) != shard {
			return nil, &persistence.Error{Kind: persistence.ErrInvalid, Msg: "the account is in another shard"}
		}
		return r.store.QueryLog(*read.Log)
	case read.Entry != nil:
		return r.store.LogEntry(read.Entry.Account, read.Entry.ID)
	case read.Grants != "":
		return r.store.CreditGrants(read.Grants)
	case read.Task != "":
		return r.store.GetTask(read.Task)
	case read.Asset != "":
		s, h, ok, err := AssetHolders(r.store, r.o.first, len(r.o.batchers), read.Asset)
		return assetFound{Shard: s, Holders: h, OK: ok}, err
	}
	return nil, &persistence.Error{Kind: persistence.ErrInvalid, Msg: "an empty shard read"}
}

// ServeNodes is the internal listener's handler of NodesPath: the internal addresses
// published in the shards this node holds, so a node that shares no shard with another
// can still find it.
func (r *Reads) ServeNodes(w http.ResponseWriter, _ *http.Request) {
	var held []uint64
	for s := range r.o.shards() {
		if r.o.holds(s) {
			held = append(held, s)
		}
	}
	out, err := PeersOf(r.store, held)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	body, err := msgpack.Marshal(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/msgpack")
	w.Write(body)
}

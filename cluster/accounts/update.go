package accounts

import (
	"encoding/binary"
	"slices"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/persistence"
)

// update is one Update's work: the accounts its commands touched, changed in memory and
// written once at its end (flush), with what their steps wrote. A later command of the same
// Update sees an earlier one's account and grants here, before they reach the batch.
type update struct {
	m     *StateMachine
	b     *persistence.ShardBatch
	accts map[string]*touched
	tasks []persistence.VideoTask // tasks written, in order (StateMachine's task hook)
	incs  *incarnations           // the nodes' incarnations, once this Update changed one
}

// touched is an account as this Update left it, and its writes.
type touched struct {
	a      step.Account
	grants map[string]persistence.CreditGrant // granted in this Update, by key
	w      persistence.QuotaWrite             // grants and log entries, in order
	keys   []string                           // keys whose throttle state changed, sorted
	moved  bool                               // a step changed it (one refused as Invalid changes nothing)
	enc    []byte                             // a moved account as flush wrote it
}

// entry applies one log entry (a Batcher batch) and returns its encoded results.
func (u *update) entry(index uint64, data []byte) ([]byte, error) {
	cmds, err := cluster.DecodeBatch(data)
	if err != nil {
		return cluster.EncodeResults(nil) // not a batch: the proposer learns it from the count
	}
	results := make([][]byte, len(cmds))
	for i, raw := range cmds {
		if results[i], err = u.command(index, uint32(i), raw); err != nil {
			return nil, err
		}
	}
	return cluster.EncodeResults(results)
}

// command applies the n-th command of entry index once per id, and remembers its result.
func (u *update) command(index uint64, n uint32, raw []byte) ([]byte, error) {
	c, err := decodeCommand(raw)
	if err != nil || c.ID == "" || len(c.ID) > maxCommandID {
		return (&step.Result{Fail: step.Invalid}).Encode() // no usable id: not remembered
	}
	if prev, ok, err := u.m.seen(u.b, c.ID, index); err != nil || ok {
		return prev, err
	}
	out, err := u.apply(&c)
	if err != nil {
		return nil, err
	}
	if err := u.b.SetRaw(u.m.cmdKey(c.ID), append(binary.BigEndian.AppendUint64(nil, index), out...)); err != nil {
		return nil, err
	}
	u.m.ids.add(c.ID, index)
	return out, u.b.SetRaw(u.m.recentKey(index, n), []byte(c.ID))
}

// apply applies a task change or a quota step and encodes its result.
func (u *update) apply(c *Command) ([]byte, error) {
	if c.Prune != nil {
		r, err := u.prune(c.Prune)
		if err != nil {
			return nil, err
		}
		return r.Encode()
	}
	if c.Node != nil {
		r, err := u.nodeAddr(c.Node)
		if err != nil {
			return nil, err
		}
		return r.Encode()
	}
	if c.Task != nil {
		r, err := u.task(c.Account, c.Task)
		if err != nil {
			return nil, err
		}
		return r.Encode()
	}
	r, err := u.step(c)
	if err != nil {
		return nil, err
	}
	return r.Encode()
}

// step applies one command to its account: the grant under its key attached (Prior), a due
// expiry first, the step, and its effects queued for the account's write. The result comes
// back without the effects (they are written here, not by the proposer).
func (u *update) step(c *Command) (step.Result, error) {
	sc := c.Step
	sc.Prior = nil // the replica's to attach, from its own store
	if malformed(&sc) || !writable(c.Account, &sc) {
		return step.Result{Fail: step.Invalid}, nil
	}
	t, err := u.account(c.Account)
	if err != nil {
		return step.Result{}, err
	}
	if sc.Kind == step.AddCredits || sc.Kind == step.Charge || sc.Kind == step.Reverse {
		g, found := t.grants[sc.Key]
		if !found {
			if g, found, err = u.b.CreditGrantFor(c.Account, sc.Key); err != nil {
				return step.Result{}, err
			}
		}
		if found {
			sc.Prior = &g
		}
	}
	t.moved = true
	incs, err := u.currentIncs()
	if err != nil {
		return step.Result{}, err
	}
	r, ex := stepOn(&t.a, &sc, incs)
	t.keyChanged(ex.KeysToWrite()...)
	if r.Log != nil {
		t.w.Log = append(t.w.Log, *r.Log)
	}
	if r.Grant.Key != "" {
		t.grants[r.Grant.Key] = r.Grant.Grant
		t.w.Grants = append(t.w.Grants, r.Grant)
	}
	t.keyChanged(r.KeysToWrite()...)
	return *answerOf(r), nil
}

// malformed is step.Apply's own first check: a command it refuses without reading or
// changing the account, which then is neither loaded nor expired nor written.
func malformed(c *step.Command) bool {
	return c.Kind == 0 || c.Kind > step.Reverse || c.Now < 0 || c.At < 0 || c.Units < 0 || c.Amount < 0 || c.N < 0 || c.TTL < 0
}

// writable reports whether what c may write (its log entry, its grant, its key's throttle
// state) is something the store keeps: a command it would refuse is refused before it
// changes the account, the same way on every replica.
func writable(account string, c *step.Command) bool {
	w := persistence.QuotaWrite{Account: account, State: &persistence.QuotaRecord{}}
	switch c.Kind {
	case step.AddCredits, step.Charge, step.Reverse:
		w.Grants = []persistence.GrantWrite{{Key: c.Key}}
	case step.Admit, step.Record:
		if c.Key != "" {
			w.Keys = []persistence.KeyQuotaWrite{{KeyID: c.Key}}
		}
	}
	if c.Log != nil {
		w.Log = []persistence.LogEntry{*c.Log}
	}
	return persistence.CheckQuotaWrite(&w) == nil
}

// account is the account as this Update has it, loaded from the batch on first use.
func (u *update) account(acct string) (*touched, error) {
	if t, ok := u.accts[acct]; ok {
		return t, nil
	}
	a, ok := u.m.accts.get(acct)
	if !ok {
		var err error
		if a, err = loadAccount(u.b.GetRaw, u.m.acctKey(acct)); err != nil {
			return nil, err
		}
	}
	t := &touched{a: a, grants: map[string]persistence.CreditGrant{}, w: persistence.QuotaWrite{Account: acct}}
	u.accts[acct] = t
	return t, nil
}

func (t *touched) keyChanged(ids ...string) {
	for _, id := range ids {
		if i, found := slices.BinarySearch(t.keys, id); id != "" && !found {
			t.keys = slices.Insert(t.keys, i, id)
		}
	}
}

// cache keeps every account this Update touched, as its batch (now committed) wrote it.
func (u *update) cache() {
	for name, t := range u.accts {
		u.m.accts.put(name, t.a)
		if t.enc != nil {
			u.m.written.put(name, t.enc)
		}
	}
}

// flush writes every touched account: its step.Account, and its record, grants, log entries
// and keys' throttle state as the single node writes them.
func (u *update) flush() error {
	names := make([]string, 0, len(u.accts))
	for name := range u.accts {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t := u.accts[name]
		if !t.moved {
			continue
		}
		enc, err := t.a.Encode()
		if err != nil {
			return err
		}
		if err := u.b.SetRaw(u.m.acctKey(name), enc); err != nil {
			return err
		}
		t.enc = enc
		rec := t.a.Rec
		t.w.State = &rec
		for _, id := range t.keys {
			t.w.Keys = append(t.w.Keys, persistence.KeyQuotaWrite{KeyID: id, State: t.a.KeyRecord(id)})
		}
		if err := u.b.PutQuota(&t.w); err != nil {
			return err
		}
	}
	return nil
}

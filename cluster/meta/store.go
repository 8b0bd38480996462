package meta

import (
	"context"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/persistence"
)

// Store is the admin API's store and the key check's Keys in cluster mode: writes are
// proposed to the metadata shard through the Replicator (the proposer halves run here, so
// secrets never leave this node: commands carry their hashes), reads come from this node's
// replica. Every write returns only after this node has applied it, and after every node
// holding a read lease has applied it or lost its lease (lease.go): when RevokeKey returns,
// no node accepts the key.
type Store struct {
	local *persistence.Store
	sm    *StateMachine
	rep   cluster.Replicator
	shard uint64

	// Node is this node's id: its own lease is not waited for (it applied the write).
	Node uint64
	// Lease, when set, is this node's read lease: while it holds, reads that must be
	// current (a login) read the replica without a consensus round.
	Lease *Holder

	// Timeout bounds one write: its proposal attempts and the wait for this node to apply it.
	Timeout time.Duration
	// Attempt bounds one proposal attempt. An attempt that fails is retried with the same
	// command, whose id makes it apply once, until Timeout.
	Attempt time.Duration
}

// NewStore proposes to shard through rep; local and sm are this node's replica of it.
func NewStore(local *persistence.Store, sm *StateMachine, rep cluster.Replicator, shard uint64) *Store {
	return &Store{local: local, sm: sm, rep: rep, shard: shard, Timeout: 5 * time.Second, Attempt: 500 * time.Millisecond}
}

// retryPause is the pause between failed proposal attempts, so a replicator that fails at
// once (no leader yet) is not spun on.
const retryPause = 50 * time.Millisecond

// CreateAccount proposes a new account; a taken e-mail is refused here when this replica
// already knows it, and by the shard otherwise (*persistence.EmailTakenError either way).
func (s *Store) CreateAccount(email, plan string) (persistence.Account, error) {
	c, err := s.local.PrepareAccount(email, plan)
	if err != nil {
		return persistence.Account{}, err
	}
	res, err := s.propose(Command{Kind: KindCreateAccount, Account: &c})
	return account(res, err)
}

// SetAccountPlan proposes a change of plan.
func (s *Store) SetAccountPlan(id, plan string) (persistence.Account, error) {
	c, err := s.local.PreparePlan(id, plan)
	if err != nil {
		return persistence.Account{}, err
	}
	res, err := s.propose(Command{Kind: KindSetPlan, Plan: &c})
	return account(res, err)
}

// CreateKey proposes a new key and returns it with its secret, which only this call sees.
func (s *Store) CreateKey(accountID string, spec persistence.KeySpec) (persistence.Key, string, error) {
	c, secret, err := s.local.PrepareKey(accountID, spec)
	if err != nil {
		return persistence.Key{}, "", err
	}
	k, err := key(s.propose(Command{Kind: KindCreateKey, Key: &c}))
	if err != nil {
		return persistence.Key{}, "", err
	}
	return k, secret, nil
}

// ImportKey proposes a key for a secret issued elsewhere.
func (s *Store) ImportKey(accountID string, spec persistence.KeySpec, secret string) (persistence.Key, error) {
	c, err := s.local.PrepareImport(accountID, spec, secret)
	if err != nil {
		return persistence.Key{}, err
	}
	return key(s.propose(Command{Kind: KindImportKey, Key: &c}))
}

// RevokeKey proposes the revocation and returns once this node has applied it.
func (s *Store) RevokeKey(id string) (persistence.Key, error) {
	c := s.local.PrepareRevoke(id)
	return key(s.propose(Command{Kind: KindRevokeKey, Revoke: &c}))
}

// UpdateKey proposes a change of a key (name, models, ZDR, limits); an expiry is checked
// against this node's clock here, before the proposal.
func (s *Store) UpdateKey(id string, u persistence.KeyUpdate) (persistence.Key, error) {
	c, err := s.local.PrepareKeyUpdate(id, u)
	if err != nil {
		return persistence.Key{}, err
	}
	return key(s.propose(Command{Kind: KindUpdateKey, Update: &c}))
}

// GetAccount reads this node's replica.
func (s *Store) GetAccount(id string) (persistence.Account, error) { return s.local.GetAccount(id) }

// ListAccountsPage reads this node's replica.
func (s *Store) ListAccountsPage(q persistence.AccountQuery) (persistence.AccountPage, error) {
	return s.local.ListAccountsPage(q)
}

// GetKey reads this node's replica.
func (s *Store) GetKey(id string) (persistence.Key, error) { return s.local.GetKey(id) }

// ListKeys reads this node's replica.
func (s *Store) ListKeys(accountID string) ([]persistence.Key, error) {
	return s.local.ListKeys(accountID)
}

// LookupKey reads this node's replica.
func (s *Store) LookupKey(secret string) (persistence.Key, error) { return s.local.LookupKey(secret) }

// propose commits cmd under a fresh id, retrying the same bytes until Timeout, and waits
// until this node has applied it. A refusal comes back as persistence's error value.
func (s *Store) propose(cmd Command) (Result, error) {
	cmd.ID = NewCommandID()
	entry, err := cmd.Encode()
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
	defer cancel()
	var out []byte
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, s.Attempt)
		out, err = s.rep.Propose(attempt, s.shard, entry)
		cancelAttempt()
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return Result{}, fmt.Errorf("meta: %s not committed within %s: %w", cmd.Kind, s.Timeout, err)
		case <-time.After(retryPause):
		}
	}
	res, err := DecodeResult(out)
	if err != nil {
		return Result{}, err
	}
	if res.Refusal != nil {
		return Result{}, res.Refusal.Err()
	}
	if err := s.sm.WaitApplied(ctx, res.Index); err != nil {
		return Result{}, fmt.Errorf("meta: %s committed at %d: %w", cmd.Kind, res.Index, err)
	}
	if waitsForLeases(cmd.Kind) {
		if err := s.sm.WaitLeases(ctx, res.Index, s.Node); err != nil {
			return Result{}, fmt.Errorf("meta: %s committed at %d: %w", cmd.Kind, res.Index, err)
		}
	}
	return res, nil
}

func account(res Result, err error) (persistence.Account, error) {
	if err != nil {
		return persistence.Account{}, err
	}
	if res.Account == nil {
		return persistence.Account{}, fmt.Errorf("meta: the shard's answer at %d has no account", res.Index)
	}
	return *res.Account, nil
}

func key(res Result, err error) (persistence.Key, error) {
	if err != nil {
		return persistence.Key{}, err
	}
	if res.Key == nil {
		return persistence.Key{}, fmt.Errorf("meta: the shard's answer at %d has no key", res.Index)
	}
	return *res.Key, nil
}

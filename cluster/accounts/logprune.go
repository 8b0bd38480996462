package accounts

import (
	"context"
	"fmt"
	"slices"

	"github.com/vmihailenco/msgpack/v5"
)

// The request log is part of a shard's replicated state (its snapshots carry it), so its
// retention (server.log_retention_days) is a replicated command: LogPrune carries the cutoff
// its proposer computed, and every replica deletes, in the same applied entry, exactly the
// entries older than it (persistence.LogCutoff) with their index pairs (docs/cluster.md,
// "Request log retention").

// LogPrune deletes the shard's accounts' request-log entries with Time < Before (rounded
// down to the index's window), at most maxPrunePerCommand of them.
type LogPrune struct {
	Before int64 `msgpack:"before"`
}

// PruneResult is what a LogPrune deleted, and whether older entries remain (the proposer
// sends it again).
type PruneResult struct {
	Deleted int    `msgpack:"n"`
	More    bool   `msgpack:"more,omitempty"`
	Fail    string `msgpack:"fail,omitempty"`
}

// Encode is the result as Update returns it.
func (r *PruneResult) Encode() ([]byte, error) { return msgpack.Marshal(r) }

// maxPrunePerCommand bounds the entries one command deletes (its index pairs are point
// deletions in the Update's batch); a variable for tests.
var maxPrunePerCommand = 8192

// prune applies a LogPrune to the shard's accounts, in order.
func (u *update) prune(p *LogPrune) (PruneResult, error) {
	if p.Before <= 0 {
		return PruneResult{Fail: TaskInvalid}, nil
	}
	if err := u.flushLogs(); err != nil {
		return PruneResult{}, err
	}
	prefix := u.m.key("acct/")
	var accts []string
	err := u.b.ScanRaw(prefix, prefixEnd(prefix), func(k, _ []byte) (bool, error) {
		accts = append(accts, string(k[len(prefix):]))
		return true, nil
	})
	if err != nil {
		return PruneResult{}, err
	}
	for name := range u.accts { // touched in this Update: maybe not yet under acct/
		accts = append(accts, name)
	}
	slices.Sort(accts)
	accts = slices.Compact(accts)
	var r PruneResult
	for _, a := range accts {
		n, more, err := u.b.PruneLog(a, p.Before, maxPrunePerCommand-r.Deleted)
		if err != nil {
			return PruneResult{}, err
		}
		r.Deleted += n
		if more || r.Deleted == maxPrunePerCommand {
			r.More = true
			break
		}
	}
	return r, nil
}

// flushLogs writes the entries this Update logged so far, so that a prune sees them as it
// would had they been applied in an Update of their own.
func (u *update) flushLogs() error {
	names := make([]string, 0, len(u.accts))
	for name, t := range u.accts {
		if len(t.w.Log) > 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		t := u.accts[name]
		if err := u.b.PutLog(name, t.w.Log); err != nil {
			return err
		}
		t.w.Log = nil
	}
	return nil
}

// prefixEnd is the first key after every key starting with prefix (which ends in '/').
func prefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	end[len(end)-1]++
	return end
}

// PruneLog deletes the shard's request-log entries older than before (on every replica),
// command after command until none is left or ctx ends, and returns how many it deleted.
func (o *Owner) PruneLog(ctx context.Context, shard uint64, before int64) (int, error) {
	total := 0
	for {
		raw, err := (&Command{ID: NewCommandID(), Prune: &LogPrune{Before: before}}).Encode()
		if err != nil {
			return total, err
		}
		out, err := o.submitRaw(ctx, shard, raw, TotalWait)
		if err != nil {
			return total, err
		}
		var r PruneResult
		if err := msgpack.Unmarshal(out, &r); err != nil || r.Fail != "" {
			return total, fmt.Errorf("accounts: shard %d refused the log prune: %q %v", shard, r.Fail, err)
		}
		total += r.Deleted
		if !r.More {
			return total, nil
		}
	}
}

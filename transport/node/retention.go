package node

import (
	"context"
	"log/slog"
	"time"

	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// DefaultLogRetentionEvery is how often the request log's retention runs.
const DefaultLogRetentionEvery = time.Hour

// logRetention deletes request-log entries older than the catalog's
// server.log_retention_days (read at every run, so a reload applies it): a single node
// prunes its store; a cluster node proposes the cutoff to each account shard it leads, a
// replicated command every replica applies alike (docs/cluster.md).
type logRetention struct {
	stop  context.CancelFunc
	ended <-chan struct{}
}

// prune deletes the entries before a cutoff (unix ns).
type pruneFunc func(ctx context.Context, before int64) (int, error)

// whereRetention names the retention loop to supervise (its panics, its fault point).
const whereRetention = "node.log-retention"

func startLogRetention(every time.Duration, cat *catalog.Holder, prune pruneFunc, log *slog.Logger) *logRetention {
	if every <= 0 {
		every = DefaultLogRetentionEvery
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &logRetention{stop: cancel}
	// Started again after a panic, the loop waits a whole period before its next run: a
	// pruning that panics is not repeated at once.
	r.ended = supervise.Loop(whereRetention, ctx.Done(), func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				supervise.Fault(whereRetention)
				retainLog(ctx, now, cat, prune, log)
			}
		}
	})
	return r
}

// retainLog is one run: the entries older than the catalog's retention at now are pruned.
func retainLog(ctx context.Context, now time.Time, cat *catalog.Holder, prune pruneFunc, log *slog.Logger) {
	days := cat.Load().Server.LogRetentionDays
	if days <= 0 {
		return
	}
	before := now.Add(-time.Duration(days) * 24 * time.Hour).UnixNano()
	n, err := prune(ctx, before)
	switch {
	case err != nil && ctx.Err() == nil:
		log.Warn("request log retention failed; it runs again later", "days", days, "deleted", n, "err", err)
	case n > 0:
		log.Info("request log retention", "days", days, "deleted", n)
	}
}

func (r *logRetention) close() {
	if r != nil {
		r.stop()
		<-r.ended
	}
}

// singlePrune is retention on a single node: its own store.
func singlePrune(store *persistence.Store) pruneFunc {
	return func(_ context.Context, before int64) (int, error) { return store.PruneLog(before) }
}

// clusterPrune is retention on a cluster node: a LogPrune to each account shard it leads.
func clusterPrune(c *clusterNode) pruneFunc {
	return func(ctx context.Context, before int64) (int, error) {
		total := 0
		for _, s := range c.shards() {
			if s == membership.MetaShard || !c.leads.leads(s) {
				continue
			}
			n, err := c.owner.PruneLog(ctx, s, before)
			total += n
			if err != nil {
				return total, err
			}
		}
		return total, nil
	}
}

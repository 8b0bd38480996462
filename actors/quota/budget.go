package quota

import (
	"context"
	"time"
)

// MaxWait is the longest a call waits, in a cluster, for its key check and its admission
// together before it is answered 503 with Retry-After (docs/cluster.md, "Accounts over shards"): one
// budget, not one each, so a node that loses the leaders of both the metadata shard and the
// account's shard still answers within it.
const MaxWait = 2 * time.Second

type waitBudgetKey struct{}

// WithWaitBudget tells the account's owner that the caller waits no later than until: a step
// proposed through ctx gives up then, if not sooner. Only the admission carries it: a settle
// owes its client the answer already streamed, and waits its own full time.
func WithWaitBudget(ctx context.Context, until time.Time) context.Context {
	return context.WithValue(ctx, waitBudgetKey{}, until)
}

// WaitBudget is the budget WithWaitBudget put in ctx.
func WaitBudget(ctx context.Context) (time.Time, bool) {
	until, ok := ctx.Value(waitBudgetKey{}).(time.Time)
	return until, ok
}

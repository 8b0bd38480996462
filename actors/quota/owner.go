package quota

import (
	"context"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/internal/supervise"
)

// Owner performs an account's quota steps: the service builds each command (stamped with
// its clock, the plan by value) and turns the step's result into its answer; the owner
// decides where the step runs and answers once what it changed is durable. The single
// node's owner is the account's actor here (NewService); a cluster's is the account's shard
// (cluster/accounts.Owner, NewServiceOver).
//
// A result whose Fail is not step.OK changed nothing; an error means the step's outcome is
// not known to be durable (the single node: it is not; a cluster: retries ran out).
type Owner interface {
	Do(ctx context.Context, account string, c *step.Command) (step.Result, error)
}

// localOwner runs the steps in the account's actor on this node.
type localOwner struct{ s *Service }

// stepMsg asks the account's actor for one step.
type stepMsg struct {
	c     *step.Command
	reply reply[step.Result]
}

func (m *stepMsg) Fail(err error) { m.reply.send(step.Result{}, err) }

// Do sends c to the account's actor and waits for its answer or ctx. An admission whose
// caller has gone is given back when it comes, or it would hold the allowance until the
// reservation's TTL.
func (o localOwner) Do(ctx context.Context, account string, c *step.Command) (step.Result, error) {
	m := &stepMsg{c: c, reply: newReply[step.Result]()}
	if err := o.s.send(account, m); err != nil {
		return step.Result{}, err
	}
	select {
	case res := <-m.reply:
		return res.v, res.err
	case <-ctx.Done():
		if c.Kind == step.Admit {
			// A panic here leaves the admission to expire at its reservation's TTL.
			supervise.Go("quota.admit-cancel", func() {
				if res := <-m.reply; res.err == nil && res.v.Admitted {
					o.s.expectWrite(1) // Admit counted no admission: its caller had gone
					o.s.Settle(context.Background(), Reservation{Account: account, ID: res.v.ID}, Outcome{})
				}
			})
		}
		return step.Result{}, ctx.Err()
	}
}

// step applies one command and answers: at once when it wrote nothing that matters to the
// answer (a refusal, an admission, a view), else once what it changed is durable.
//
//go:noinline
func (a *accountActor) step(m *stepMsg) {
	c := m.c
	if c.Kind == step.Admit || c.Kind == step.View || c.Kind == step.Record && c.Counts {
		if err := a.fillWindows(c); err != nil {
			m.Fail(err)
			return
		}
	}
	if c.Kind == step.AddCredits || c.Kind == step.Charge || c.Kind == step.Reverse {
		g, found, err := a.grantFor(c.Key)
		if err != nil {
			m.Fail(err)
			return
		}
		if found {
			c.Prior = &g
		}
	}
	res := &result[step.Result]{v: a.apply(c)} // on the heap: it is about to travel anyway
	r := &res.v
	switch {
	case r.Fail != step.OK, c.Kind == step.Admit, c.Kind == step.View,
		(c.Kind == step.Hold || c.Kind == step.MediaReserve) && !r.Admitted:
		m.reply.put(res)
	case r.Repeat && (c.Kind == step.AddCredits || c.Kind == step.Charge || c.Kind == step.Reverse):
		a.answerWhenWritten(func(err error) { m.reply.send(*r, err) }, c.Key)
	default:
		a.await(func(err error) {
			// A failed write is answered by the actor after its rollback, which dropped a
			// hold: the call still in flight holds its estimate again.
			if err != nil && c.Kind == step.Hold {
				a.st.Rehold(c.ID, r.Moved)
			}
			m.reply.send(*r, err)
		})
	}
}

// answerWhenWritten answers a repeated top-up or charge: at once when its grant is on disk,
// else once it is (a repeat must not be told "done" before the first is durable).
func (a *accountActor) answerWhenWritten(done func(error), key string) {
	if _, unwritten := a.unwritten[key]; unwritten {
		a.await(done)
		return
	}
	done(nil)
}

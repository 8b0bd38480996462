package quota

import (
	"log/slog"
	"time"

	"github.com/modelgate/modelgate/actors/placement"
	"github.com/modelgate/modelgate/actors/quota/step"
)

// sweep is the idle check: every IdleTimeout each active account gets a tick, handled on
// the sweeping goroutine when the account is idle (most are) rather than a goroutine each.
func (s *Service) sweep(stop <-chan struct{}) {
	t := time.NewTicker(s.cfg.IdleTimeout)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			for _, a := range s.dir.Incarnations() {
				a.box.Run(a, tick{})
			}
		}
	}
}

// onTick expires abandoned reservations, forgets idle keys, and passivates an actor that
// received nothing since the last tick and holds no call in flight and no unwritten change.
// A passivated actor is garbage once its mailbox is empty: nothing else refers to it.
func (a *accountActor) onTick() {
	if a.life.Retired() {
		return
	}
	r := a.apply(&step.Command{Kind: step.Expire, Now: a.now()})
	for _, id := range r.Expired {
		slog.Warn("quota reservation expired unsettled; released", "account", a.acct, "reservation", id)
	}
	if a.life.Quiet() && len(a.st.Calls) == 0 && a.idle() {
		a.passivate()
	}
}

// passivate retires through the directory: everything is on disk already (the burst windows
// in the request log). It fails, and the actor carries on, when a message is on its way.
func (a *accountActor) passivate() {
	if h := a.svc.hookRetire; h != nil {
		h(a.acct, false)
	}
	if !placement.Retire(a.svc.dir, &a.life, a.acct, a) {
		return
	}
	if h := a.svc.hookRetire; h != nil {
		h(a.acct, true)
	}
}

// retire is Service.Close's passivation: it waits for the writes in flight and for messages
// on their way instead of giving up, and drops in-flight call reservations.
func (a *accountActor) retire(m *retireMsg) {
	if a.life.Retired() {
		m.reply.send(struct{}{}, nil)
		return
	}
	if !a.idle() {
		a.retiring = m // onWritten comes back here
		a.scheduleFlush()
		return
	}
	a.retiring = nil
	if !placement.Retire(a.svc.dir, &a.life, a.acct, a) {
		a.send(retireAgain{m}) // behind the message still on its way
		return
	}
	m.reply.send(struct{}{}, nil)
}

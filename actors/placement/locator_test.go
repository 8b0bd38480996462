package placement

import (
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
)

// relay is an owner that, on "retire", has itself stopped and, still in that Receive,
// sends to another owner (as a task actor hands its queue to its next incarnation); every
// other message it reports on got.
type relay struct {
	loc *Local
	id  string
	got chan<- string
}

func (r *relay) Receive(c *actor.Context) {
	msg, ok := c.Message().(string)
	if !ok {
		return
	}
	if msg != "retire" {
		r.got <- r.id + ":" + msg
		return
	}
	go r.loc.Stop("relay", r.id)
	// Wait until the stop has begun (the owner is no longer listed), then send on.
	for {
		r.loc.mu.RLock()
		_, listed := r.loc.pids["relay/"+r.id]
		r.loc.mu.RUnlock()
		if !listed {
			break
		}
		time.Sleep(time.Millisecond)
	}
	r.loc.Send("relay", r.id+"-next", "handed on")
}

// An owner being stopped whose last Receive sends to another owner finishes: the stop
// waits for it without holding the locator, and a message to the stopped id meanwhile
// activates a fresh owner once the old one is gone.
func TestAnOwnerStoppedWhileItSendsToAnotherFinishes(t *testing.T) {
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	loc := NewLocal(e)
	got := make(chan string, 4)
	loc.Register("relay", 16, func(id string) actor.Producer {
		return func() actor.Receiver { return &relay{loc: loc, id: id, got: got} }
	})
	loc.Send("relay", "a", "retire")
	want := []string{"a-next:handed on", "a:again"}
	for i, w := range want {
		if i == 1 {
			loc.Send("relay", "a", "again")
		}
		select {
		case g := <-got:
			if g != w {
				t.Fatalf("got %q, want %q", g, w)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no %q within 5 s: the stop and the owner's last send wait on each other", w)
		}
	}
}

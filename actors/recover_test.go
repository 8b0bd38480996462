package actors

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/modelgate/modelgate/internal/supervise"
)

type boom struct{ reply chan error }

func (b boom) Fail(err error) { b.reply <- err }

type count struct{ reply chan int }

type counter struct{ n int }

func (c *counter) Receive(ctx *actor.Context) {
	switch m := ctx.Message().(type) {
	case boom:
		c.n++
		panic("kaput")
	case count:
		m.reply <- c.n
	}
}

func TestRecoverRepliesAndKeepsState(t *testing.T) {
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	before := supervise.CountAt("actor.counter")
	pid := e.Spawn(func() actor.Receiver { return &counter{} }, "counter", Options("c1", SmallInbox)...)
	for i := 0; i < 5; i++ { // more panics than Hollywood survives on its own
		reply := make(chan error, 1)
		e.Send(pid, boom{reply})
		select {
		case err := <-reply:
			if !errors.Is(err, supervise.ErrPanicked) || strings.Contains(err.Error(), "kaput") {
				t.Fatalf("the reply %v: want ErrPanicked, without the panic's value", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("no error reply after panic")
		}
	}
	reply := make(chan int, 1)
	e.Send(pid, count{reply})
	if n := <-reply; n != 5 {
		t.Fatalf("state after panics = %d, want 5 (state kept)", n)
	}
	if n := supervise.CountAt("actor.counter"); n != before+5 {
		t.Fatalf("actor.counter panics counted %d, want %d", n, before+5)
	}
}

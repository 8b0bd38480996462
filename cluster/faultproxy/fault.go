package faultproxy

import (
	"fmt"
	"time"
)

// Direction is one way through a proxy. A proxied TCP connection has a client (the side that
// dialled the proxy) and a target (the address the proxy forwards to).
type Direction int

const (
	// ClientToTarget is what the dialling side sends.
	ClientToTarget Direction = iota
	// TargetToClient is what the target answers on the same connection.
	TargetToClient
)

func (d Direction) String() string {
	if d == TargetToClient {
		return "target→client"
	}
	return "client→target"
}

type faultKind uint8

const (
	pass faultKind = iota
	drop
	blackhole
	delay
)

// Fault is what a proxy does to the bytes of one direction. Compare faults with ==.
type Fault struct {
	kind   faultKind
	delay  time.Duration
	jitter time.Duration // each chunk's delay is delay ± up to jitter (Network)
	loss   float64       // the share of chunks held back one retransmission time-out (Network)
}

var (
	// Pass forwards every byte at once (the default).
	Pass = Fault{}
	// Drop closes every connection, open or new, with a reset: a refused link. TCP cannot
	// refuse one way only, so Drop on either direction drops the whole connection.
	Drop = Fault{kind: drop}
	// Blackhole reads and discards, never forwards and never closes: a hung link that only
	// time-outs detect. A connection that lost bytes to it stays black-holed until the fault
	// is lifted, which resets it (see Proxy.Set).
	Blackhole = Fault{kind: blackhole}
)

// Delay forwards each chunk d after it was read, in order. A chunk already read keeps its due
// time when the fault changes (it is in flight). Delay(0) is Pass.
func Delay(d time.Duration) Fault {
	if d <= 0 {
		return Pass
	}
	return Fault{kind: delay, delay: d}
}

// RetransmitTimeout is what a lost chunk costs under Network: Linux's least TCP
// retransmission time-out, after which the sender sends the lost segment again.
const RetransmitTimeout = 200 * time.Millisecond

// Network is a link with a one-way delay d, varying by up to ±jitter per chunk, that loses a
// share loss (0–1) of its chunks. A proxy carries TCP streams, so it cannot lose bytes:
// what loss does to a TCP stream is delay, the lost segment and every one behind it waiting
// for the retransmission (RetransmitTimeout). Chunks stay in order (a chunk is never due
// before the one read ahead of it), as TCP delivers them.
func Network(d, jitter time.Duration, loss float64) Fault {
	if d <= 0 && jitter <= 0 && loss <= 0 {
		return Pass
	}
	return Fault{kind: delay, delay: d, jitter: max(jitter, 0), loss: min(max(loss, 0), 1)}
}

// due is when a chunk read at now is delivered under f (a delay), given the due time of the
// chunk before it in the same direction.
func (f Fault) due(now, prev time.Time, rnd func() float64) time.Time {
	d := f.delay
	if f.jitter > 0 {
		d += time.Duration((2*rnd() - 1) * float64(f.jitter))
	}
	if f.loss > 0 && rnd() < f.loss {
		d += RetransmitTimeout
	}
	at := now.Add(max(d, 0))
	if at.Before(prev) {
		at = prev // in order, as TCP delivers
	}
	return at
}

func (f Fault) String() string {
	switch f.kind {
	case drop:
		return "drop"
	case blackhole:
		return "blackhole"
	case delay:
		if f.jitter > 0 || f.loss > 0 {
			return fmt.Sprintf("network(%s ± %s, %.1f%% loss)", f.delay, f.jitter, 100*f.loss)
		}
		return fmt.Sprintf("delay(%s)", f.delay)
	}
	return "pass"
}

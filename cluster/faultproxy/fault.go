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
	kind  faultKind
	delay time.Duration
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

func (f Fault) String() string {
	switch f.kind {
	case drop:
		return "drop"
	case blackhole:
		return "blackhole"
	case delay:
		return fmt.Sprintf("delay(%s)", f.delay)
	}
	return "pass"
}

package faultproxy

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"time"
)

const (
	// readSize is the largest chunk one read takes from a socket.
	readSize = 32 << 10
	// queueLen bounds the chunks in flight per direction (delayed ones wait here); a full
	// queue stops reading, so a slow or delayed link pushes back on its sender as TCP does.
	queueLen = 256
)

// link is one proxied connection: the client's socket, the proxy's socket to the target, and
// per direction a reader (applies the fault) and a writer (delivers in order, when due).
type link struct {
	p              *Proxy
	client, target net.Conn // target is nil until dialled, and for ever when hung
	cancel         context.CancelFunc
	done           chan struct{} // closed when the link ends

	// Guarded by p.mu.
	hung     bool    // opened while both ways were black-holed: never dialled through
	lost     [2]bool // bytes of that direction went into a black hole
	finished int     // directions that reached their end of stream
	ended    bool
}

// chunk is one read's bytes, or the end of the stream (eof), due at due (zero: at once).
type chunk struct {
	data []byte
	due  time.Time
	eof  bool
}

// brokenUnder reports whether faults leave l unable to carry on: a hung link once either way
// is no longer black-holed, a direction that lost bytes once it is. p.mu is held.
func (l *link) brokenUnder(faults [2]Fault) bool {
	if l.hung {
		return faults[ClientToTarget] != Blackhole || faults[TargetToClient] != Blackhole
	}
	for dir, lost := range l.lost {
		if lost && faults[dir] != Blackhole {
			return true
		}
	}
	return false
}

func (l *link) run(ctx context.Context) {
	p := l.p
	defer p.wg.Done()
	if l.hung {
		p.wg.Add(1)
		go l.read(ClientToTarget, l.client, nil)
		l.finish() // target→client: nothing will ever come from a target never dialled
		return
	}
	d := net.Dialer{Timeout: dialTimeout}
	t, err := d.DialContext(ctx, "tcp", p.target)
	if err != nil {
		p.end(l, true)
		return
	}
	p.mu.Lock()
	if l.ended {
		p.mu.Unlock()
		_ = t.Close()
		return
	}
	l.target = t
	p.wg.Add(4)
	p.mu.Unlock()
	toTarget, toClient := make(chan chunk, queueLen), make(chan chunk, queueLen)
	go l.read(ClientToTarget, l.client, toTarget)
	go l.write(ClientToTarget, t, toTarget)
	go l.read(TargetToClient, t, toClient)
	go l.write(TargetToClient, l.client, toClient)
}

// read takes chunks from src and queues those the fault of dir lets through.
func (l *link) read(dir Direction, src net.Conn, q chan<- chunk) {
	defer l.p.wg.Done()
	buf := make([]byte, readSize)
	var prev time.Time // the due time of the last chunk queued
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if f, keep := l.admit(dir, n); keep {
				c := chunk{data: append([]byte(nil), buf[:n]...)}
				if f.kind == delay {
					c.due = f.due(time.Now(), prev, rand.Float64)
					prev = c.due
				}
				select {
				case q <- c:
				case <-l.done:
					return
				}
			}
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, io.EOF) {
			l.p.end(l, true) // a reset (or our own close) ends both ways
			return
		}
		if l.swallowsEOF(dir) {
			l.finish() // a black hole loses the end of stream as well
			return
		}
		select {
		case q <- chunk{eof: true}:
		case <-l.done:
		}
		return
	}
}

// admit decides n bytes just read in dir: discarded (and the direction latched as lossy) under
// a black hole, else kept under the fault returned.
func (l *link) admit(dir Direction, n int) (Fault, bool) {
	p := l.p
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.faults[dir]
	if l.ended {
		return f, false
	}
	if l.hung || l.lost[dir] || f == Blackhole {
		l.lost[dir] = true
		p.discarded[dir].Add(int64(n))
		return f, false
	}
	return f, true
}

// swallowsEOF reports whether a black hole takes the end of stream of dir; a lost end of
// stream breaks the direction like lost bytes do.
func (l *link) swallowsEOF(dir Direction) bool {
	p := l.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if l.hung || l.lost[dir] || p.faults[dir] == Blackhole {
		l.lost[dir] = true
		return true
	}
	return false
}

// write delivers q's chunks to dst in order, each not before it is due.
func (l *link) write(dir Direction, dst net.Conn, q <-chan chunk) {
	defer l.p.wg.Done()
	for {
		var c chunk
		select {
		case c = <-q:
		case <-l.done:
			return
		}
		if c.eof {
			closeWrite(dst)
			l.finish()
			return
		}
		if wait := time.Until(c.due); !c.due.IsZero() && wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-l.done:
				t.Stop()
				return
			}
		}
		// Counted before the write so the count is never behind what the far end has seen.
		l.p.forwarded[dir].Add(int64(len(c.data)))
		if n, err := dst.Write(c.data); err != nil {
			l.p.forwarded[dir].Add(-int64(len(c.data) - n))
			l.p.end(l, true)
			return
		}
	}
}

// finish records that one direction reached its end; the link ends when both have.
func (l *link) finish() {
	p := l.p
	p.mu.Lock()
	defer p.mu.Unlock()
	l.finished++
	if l.finished == 2 {
		p.endLocked(l, false)
	}
}

// closeWrite passes an end of stream on while the other direction goes on.
func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		return
	}
	_ = c.Close()
}

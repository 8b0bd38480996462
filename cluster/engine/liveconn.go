package engine

// A raft connection that notices its peer's death.
//
// Dragonboat keeps one outgoing connection per peer and drops it only when a write fails
// or after a minute unused. A node that sends nothing to a peer while that peer is killed
// and restarted keeps the connection to the dead process: its next message (a vote, when
// a leader dies later) is written into a socket the peer's kernel has already closed, and
// is lost; the write after it fails, and dragonboat's circuit breaker then refuses every
// message to that live peer for 0.5–1 s. Elections that need that peer's vote stalled for
// up to 2.4 s under kill -9 that way.
//
// An outgoing raft connection never receives a byte (answers come on the peer's own
// connection), so one read that returns at all, EOF or error, means the peer is gone. The
// watcher closes the socket then, and the next message goes over a fresh dial to whatever
// listens at the address now; a write that fails anyway is retried once on a fresh dial
// before dragonboat hears of it (not one that timed out: a silent peer is left to
// dragonboat's breaker). Raft tolerates the one duplicate this may cause.

import (
	"context"
	"errors"
	"net"
	"reflect"
	"sync/atomic"
	"unsafe"

	"github.com/lni/dragonboat/v4/raftio"
	pb "github.com/lni/dragonboat/v4/raftpb"

	"github.com/modelgate/modelgate/internal/supervise"
)

// liveConn is the connection dragonboat sends one peer's messages on.
type liveConn struct {
	dial func() (*watchedConn, error)
	cur  *watchedConn
}

// watchedConn is one dialled connection and the watcher's verdict on it.
type watchedConn struct {
	raftio.IConnection
	dead atomic.Bool
}

func newLiveConn(dial func() (*watchedConn, error)) (*liveConn, error) {
	c, err := dial()
	if err != nil {
		return nil, err
	}
	return &liveConn{dial: dial, cur: c}, nil
}

// SendMessageBatch sends on the current connection, or on a fresh one when the peer behind
// the current one is gone.
func (c *liveConn) SendMessageBatch(b pb.MessageBatch) error {
	if c.cur.dead.Load() {
		if err := c.redial(); err != nil {
			return err
		}
	}
	err := c.cur.SendMessageBatch(b)
	if err == nil || timedOut(err) {
		return err // a peer that does not answer in time is left to dragonboat's breaker
	}
	if c.redial() != nil {
		return err
	}
	return c.cur.SendMessageBatch(b)
}

// timedOut reports a write that hit its deadline: a silent peer, where a second dial would
// only wait again.
func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// redial replaces the current connection with a fresh one.
func (c *liveConn) redial() error {
	fresh, err := c.dial()
	if err != nil {
		return err
	}
	c.cur.close()
	c.cur = fresh
	return nil
}

func (c *liveConn) Close() { c.cur.close() }

// close closes the connection unless the watcher has (dragonboat logs a second close).
func (w *watchedConn) close() {
	if !w.dead.Swap(true) {
		w.IConnection.Close()
	}
}

// watch starts the watcher on conn's socket. A connection whose socket cannot be found
// (another transport) is returned as it is, unwatched.
func watch(conn raftio.IConnection) *watchedConn {
	w := &watchedConn{IConnection: conn}
	raw := socketOf(conn)
	if raw == nil {
		return w
	}
	supervise.Go("engine.raft-conn-watch", func() {
		var b [1]byte
		_, _ = raw.Read(b[:])
		if !w.dead.Swap(true) {
			_ = raw.Close() // not conn.Close, which logs the failed goodbye to a dead peer
		}
	})
	return w
}

// socketOf is the socket under dragonboat's TCP connection: its field conn, followed while
// it is one of dragonboat's own wrappers (TCPConnection → connection → the TLS or TCP
// connection; never into the TLS one, whose records only it may read). The fields are
// unexported; the pinned version's layout is checked by the transport tests.
func socketOf(conn raftio.IConnection) net.Conn {
	v := reflect.ValueOf(conn)
	var found net.Conn
	for v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct &&
		v.Elem().Type().PkgPath() == dragonboatTransport {
		f := v.Elem().FieldByName("conn")
		if !f.IsValid() || f.Type() != reflect.TypeFor[net.Conn]() || f.IsNil() {
			return nil
		}
		found = *(*net.Conn)(unsafe.Pointer(f.UnsafeAddr()))
		v = reflect.ValueOf(found)
	}
	return found
}

const dragonboatTransport = "github.com/lni/dragonboat/v4/internal/transport"

// dialLive is GetConnection's body: a watched connection that redials addr.
func dialLive(ctx context.Context, inner raftio.ITransport, addr string) (raftio.IConnection, error) {
	return newLiveConn(func() (*watchedConn, error) {
		conn, err := inner.GetConnection(ctx, addr)
		if err != nil {
			return nil, err
		}
		return watch(conn), nil
	})
}

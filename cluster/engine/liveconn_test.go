package engine

import (
	"context"
	"crypto/tls"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/lni/dragonboat/v4/config"
	"github.com/lni/dragonboat/v4/raftio"
	pb "github.com/lni/dragonboat/v4/raftpb"

	"github.com/modelgate/modelgate/cluster/certs"
	"github.com/modelgate/modelgate/internal/testutil"
)

// transportConfigs are a receiving and a sending node's transport settings, plain or with
// mutual TLS from certificates made by cluster/certs.
func transportConfigs(t *testing.T, mutualTLS bool) (recv, send config.NodeHostConfig) {
	t.Helper()
	recv = config.NodeHostConfig{RaftAddress: testutil.FreeAddr(t)}
	send = config.NodeHostConfig{RaftAddress: testutil.FreeAddr(t)}
	if mutualTLS {
		dir := t.TempDir()
		specs := []certs.NodeSpec{{Name: "n1", Hosts: []string{"127.0.0.1"}}, {Name: "n2", Hosts: []string{"127.0.0.1"}}}
		if _, err := certs.Generate(dir, specs, certs.Options{}); err != nil {
			t.Fatal(err)
		}
		for i, c := range []*config.NodeHostConfig{&recv, &send} {
			name := specs[i].Name
			c.MutualTLS = true
			c.CAFile = filepath.Join(dir, certs.CACertFile)
			c.CertFile = filepath.Join(dir, certs.NodeCertFile(name))
			c.KeyFile = filepath.Join(dir, certs.NodeKeyFile(name))
		}
	}
	return recv, send
}

// receiver is a started dragonboat TCP transport that hands every batch it receives to got.
func receiver(t *testing.T, cfg config.NodeHostConfig, got chan<- uint64) raftio.ITransport {
	t.Helper()
	tr := newTCPTransport(cfg, func(b pb.MessageBatch) {
		for _, m := range b.Requests {
			got <- m.Term
		}
	}, func(pb.Chunk) bool { return true })
	if err := tr.Start(); err != nil {
		t.Fatal(err)
	}
	return tr
}

func batchOf(term uint64) pb.MessageBatch {
	return pb.MessageBatch{BinVer: raftio.TransportBinVersion, Requests: []pb.Message{{Type: pb.Heartbeat, Term: term}}}
}

func expectBatch(t *testing.T, got <-chan uint64, term uint64) {
	t.Helper()
	select {
	case g := <-got:
		if g != term {
			t.Fatalf("received term %d, want %d", g, term)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("batch of term %d never arrived", term)
	}
}

// A peer killed and started again at the same address while this node sent it nothing:
// the next message reaches the new process, with no error for dragonboat to trip its
// breaker on, instead of being written into the dead process's socket.
func TestRaftConnectionReachesARestartedPeer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mutualTLS bool
	}{{"plain TCP", false}, {"mutual TLS", true}} {
		t.Run(tc.name, func(t *testing.T) {
			recvCfg, sendCfg := transportConfigs(t, tc.mutualTLS)
			got := make(chan uint64, 16)
			first := receiver(t, recvCfg, got)
			sender := raftTransportFactory{}.Create(sendCfg, func(pb.MessageBatch) {}, func(pb.Chunk) bool { return true })
			conn, err := sender.GetConnection(context.Background(), recvCfg.RaftAddress)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// The watcher reads the TLS connection, never the TCP one under it (whose
			// records TLS alone may read), and finds something to read at all: a nil
			// here means dragonboat's connection layout changed.
			switch sock := socketOf(conn.(*liveConn).cur.IConnection); sock.(type) {
			case *tls.Conn:
				if !tc.mutualTLS {
					t.Fatal("found a TLS connection on plain TCP")
				}
			case *net.TCPConn:
				if tc.mutualTLS {
					t.Fatal("found the TCP connection under TLS")
				}
			default:
				t.Fatalf("socket under dragonboat's connection: %T, want the TLS or TCP connection", sock)
			}
			if err := conn.SendMessageBatch(batchOf(1)); err != nil {
				t.Fatal(err)
			}
			expectBatch(t, got, 1)

			if err := first.Close(); err != nil { // closes the accepted connection, as a killed process's kernel does
				t.Fatal(err)
			}
			second := receiver(t, recvCfg, got)
			defer second.Close()
			for _, term := range []uint64{2, 3} {
				if err := conn.SendMessageBatch(batchOf(term)); err != nil {
					t.Fatalf("send of term %d after the restart: %v", term, err)
				}
				expectBatch(t, got, term)
			}
		})
	}
}

// The watcher looks under dragonboat's wrappers only: a connection of another kind is left
// unwatched rather than read from.
func TestSocketOfStopsAtForeignTypes(t *testing.T) {
	type foreign struct{ conn net.Conn }
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	cases := []struct {
		name string
		conn raftio.IConnection
	}{
		{"another transport's connection", fakeConn{&foreign{conn: a}}},
		{"nil", nil},
	}
	for _, tc := range cases {
		if got := socketOf(tc.conn); got != nil {
			t.Errorf("%s: socketOf = %T, want nil", tc.name, got)
		}
	}
}

type fakeConn struct{ f any }

func (fakeConn) Close()                                 {}
func (fakeConn) SendMessageBatch(pb.MessageBatch) error { return nil }

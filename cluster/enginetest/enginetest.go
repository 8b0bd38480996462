// Package enginetest lays out a cluster of real engine nodes run in one process, for the
// cluster's tests and the bench's cluster scenario: a certificate each from one CA (as
// `modelgate cluster certs` makes them), a free loopback Raft address and a data directory.
// It does not import the engine, so the engine's own tests use it too; each caller makes
// its engine.Config from a Node.
package enginetest

import (
	"fmt"
	"path/filepath"

	"github.com/modelgate/modelgate/cluster/certs"
	"github.com/modelgate/modelgate/internal/freeport"
)

// Node is one node's place in the layout.
type Node struct {
	ID       uint64
	Name     string // its certificate's name
	RaftAddr string
	DataDir  string
	// The TLS files of mutual TLS between the nodes ("" for a plain layout).
	CAFile, CertFile, KeyFile string
}

// Name is the certificate name of node id.
func Name(id uint64) string { return fmt.Sprintf("n%d", id) }

// Layout lays out nodes 1…n under dir: certificates in dir/certs (none when plain), each
// node's data in dir/n<id>.
func Layout(dir string, n int, plain bool) ([]Node, error) {
	var specs []certs.NodeSpec
	for id := uint64(1); id <= uint64(n); id++ {
		specs = append(specs, certs.NodeSpec{Name: Name(id), Hosts: []string{"127.0.0.1", "localhost"}})
	}
	if !plain {
		if _, err := certs.Generate(CertDir(dir), specs, certs.Options{}); err != nil {
			return nil, err
		}
	}
	var nodes []Node
	for id := uint64(1); id <= uint64(n); id++ {
		node, err := place(dir, id, plain)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, node)
	}
	return nodes, nil
}

// Joiner lays out node id, joining later, with a certificate from the layout's CA.
func Joiner(dir string, id uint64) (Node, error) {
	spec := certs.NodeSpec{Name: Name(id), Hosts: []string{"127.0.0.1", "localhost"}}
	if _, err := certs.Generate(CertDir(dir), []certs.NodeSpec{spec}, certs.Options{}); err != nil {
		return Node{}, err
	}
	return place(dir, id, false)
}

// CertDir is where a layout under dir keeps its certificates.
func CertDir(dir string) string { return filepath.Join(dir, "certs") }

func place(dir string, id uint64, plain bool) (Node, error) {
	addr, err := freeport.Addr()
	if err != nil {
		return Node{}, err
	}
	n := Node{ID: id, Name: Name(id), RaftAddr: addr, DataDir: filepath.Join(dir, Name(id))}
	if !plain {
		n.CAFile = filepath.Join(CertDir(dir), certs.CACertFile)
		n.CertFile = filepath.Join(CertDir(dir), certs.NodeCertFile(n.Name))
		n.KeyFile = filepath.Join(CertDir(dir), certs.NodeKeyFile(n.Name))
	}
	return n, nil
}

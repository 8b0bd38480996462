package clusterbench

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/cluster/accounts"
	"github.com/modelgate/modelgate/cluster/certs"
	"github.com/modelgate/modelgate/cluster/engine"
	"github.com/modelgate/modelgate/cluster/enginetest"
	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/persistence"
)

// member is one node the load drives: its quota service over its own Pebble store, and, in
// a cluster, the engine and the Owner the service proposes through.
type member struct {
	id    uint64
	store *persistence.Store
	svc   *quota.Service
	// Cluster members only; eng is nil while the member is killed.
	cfg   engine.Config
	eng   *engine.Node
	owner *accounts.Owner
	steps *http.Server // its internal listener: steps forwarded to the shards it leads
	fwd   *accounts.HTTPForward
	sms   sync.Map // its replicas, by shard
	held  map[uint64]bool
}

// deployment is the members of one measured setup, all in this process.
type deployment struct {
	members []*member
	shards  []uint64 // account shards (cluster only)
	// voters are each account shard's founding voters (cluster only), placed as cluster
	// init places them (membership.File.Voters): each member runs only its shards.
	voters map[uint64]map[uint64]string
	single bool // one node, its account actors in this process
}

// startSingle is one node as `modelgate serve` runs it without cluster.json: the quota
// service over its account actors and the Pebble store, no Raft.
func startSingle(dir string) (*deployment, error) {
	st, err := persistence.Open(filepath.Join(dir, "pebble"))
	if err != nil {
		return nil, err
	}
	svc := quota.NewService(st, quota.Config{})
	return &deployment{members: []*member{{id: 1, store: st, svc: svc}}, single: true}, nil
}

// startCluster is nodes engine nodes on loopback ports with mutual TLS (plain TCP when plain) (certificates from
// cluster/certs, as `modelgate cluster certs` makes them), the engine's default settings,
// and the account shards over accounts.StateMachine, each on its replicas voters, as
// cluster mode runs them (transport/node); it returns once every shard has a leader all
// its replicas agree on.
func startCluster(dir string, nodes, replicas, shards int, plain bool) (*deployment, error) {
	layout, err := enginetest.Layout(dir, nodes, plain)
	if err != nil {
		return nil, err
	}
	d := &deployment{voters: map[uint64]map[uint64]string{}}
	for i := range shards {
		d.shards = append(d.shards, membership.FirstAccountShard+uint64(i))
	}
	placed := membership.File{Replicas: replicas}
	for _, node := range layout {
		m := &member{id: node.ID, cfg: engine.Config{NodeID: node.ID, RaftAddr: node.RaftAddr, DataDir: node.DataDir, PlainTCPForMeasurement: plain,
			CAFile: node.CAFile, CertFile: node.CertFile, KeyFile: node.KeyFile}}
		if m.store, err = persistence.OpenWith(filepath.Join(m.cfg.DataDir, "pebble"), persistence.Options{}.ForCluster()); err != nil {
			d.close()
			return nil, err
		}
		d.members = append(d.members, m)
		placed.Peers = append(placed.Peers, membership.Peer{ID: node.ID, Addr: node.RaftAddr})
	}
	for _, shard := range d.shards {
		d.voters[shard] = map[uint64]string{}
		for _, p := range placed.Voters(shard) {
			d.voters[shard][p.ID] = p.Addr
		}
	}
	for _, m := range d.members {
		if err := d.start(m); err != nil {
			d.close()
			return nil, err
		}
	}
	if err := d.waitLeaders(30 * time.Second); err != nil {
		d.close()
		return nil, err
	}
	if err := d.waitAddresses(30 * time.Second); err != nil {
		d.close()
		return nil, err
	}
	time.Sleep(accounts.LeaderLease + 200*time.Millisecond) // the leaders' leases begin: the measurement is of the steady state
	return d, nil
}

// waitAddresses waits until every member knows every member's internal address in every
// shard it holds (where it finds the nodes it forwards steps to).
func (d *deployment) waitAddresses(within time.Duration) error {
	deadline := time.Now().Add(within)
	for _, m := range d.members {
		for _, shard := range d.shards {
			for m.held[shard] {
				peers, err := accounts.Peers(m.store, shard)
				if err == nil && len(peers) == len(d.members) {
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("member %d knows %d addresses in shard %d after %v (%v)", m.id, len(peers), shard, within, err)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	return nil
}

// start runs m's engine and its replica of each shard placed on it (again after kill: the
// engine's stored membership wins, and each state machine resumes after its applied index).
func (d *deployment) start(m *member) error {
	eng, err := engine.New(m.cfg)
	if err != nil {
		return err
	}
	m.held = map[uint64]bool{}
	for _, shard := range d.shards {
		if d.voters[shard][m.id] == "" {
			continue
		}
		m.held[shard] = true
		err := eng.StartShard(shard, d.voters[shard], false, false, func(shard, _ uint64) cluster.StateMachine {
			sm := accounts.NewStateMachine(m.store, shard)
			m.sms.Store(shard, sm)
			return sm
		})
		if err != nil {
			eng.Close()
			return err
		}
	}
	m.eng, m.owner = eng, accounts.NewOwner(eng, d.shards[0], len(d.shards))
	if err := d.serveSteps(m); err != nil {
		m.owner.Close()
		eng.Close()
		return err
	}
	m.svc = quota.NewServiceOver(m.owner, quota.Config{})
	return nil
}

// serveSteps turns leader admission on for m as a node does: an internal listener (mutual
// TLS, plain HTTP in a plain measurement) takes the steps other members forward to the
// shards m leads, and its address is published in every shard.
func (d *deployment) serveSteps(m *member) error {
	var serverTLS, clientTLS *tls.Config
	scheme := "http"
	if !m.cfg.PlainTCPForMeasurement {
		var err error
		if serverTLS, clientTLS, err = certs.MutualTLS(m.cfg.CAFile, m.cfg.CertFile, m.cfg.KeyFile); err != nil {
			return err
		}
		scheme = "https"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if serverTLS != nil {
		ln = tls.NewListener(ln, serverTLS)
	}
	held, voters := m.held, d.voters
	m.owner.Place(accounts.Placement{Held: func(s uint64) bool { return held[s] },
		Voters: func(s uint64) []uint64 { return slices.Sorted(maps.Keys(voters[s])) }})
	reads := accounts.NewReads(m.owner, m.store)
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+accounts.StepsPath, m.owner.ServeSteps)
	mux.HandleFunc("POST "+accounts.ReadPath+"{shard}", reads.ServeRead)
	mux.HandleFunc("GET "+accounts.NodesPath, reads.ServeNodes)
	m.steps = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go m.steps.Serve(ln)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute}}
	local := func(shard uint64) *accounts.StateMachine {
		v, _ := m.sms.Load(shard)
		sm, _ := v.(*accounts.StateMachine)
		return sm
	}
	m.fwd = &accounts.HTTPForward{Client: client, Store: m.store, Shards: d.shards, Scheme: scheme}
	m.owner.LeadAdmissions(m.id, local, m.fwd)
	addr, owner := ln.Addr().String(), m.owner
	for _, shard := range d.shards {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			owner.PublishAddr(ctx, shard, accounts.NodeAddr{ID: m.id, Addr: addr})
		}()
	}
	return nil
}

// kill stops m's engine at once: its replicas stop and its peers see its connections
// close, as after kill -9 (its store stays open: this process still holds it).
func (d *deployment) kill(m *member) {
	m.steps.Close()
	m.owner.Close()
	m.eng.Close()
	m.eng, m.owner = nil, nil
}

// waitLeaders waits until the running replicas of every shard agree on a running leader.
func (d *deployment) waitLeaders(within time.Duration) error {
	deadline := time.Now().Add(within)
	for _, shard := range d.shards {
		for {
			if _, ok := d.leader(shard); ok {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("no leader of shard %d agreed on within %v", shard, within)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return nil
}

// leader is shard's leader when every running replica of it names the same running one.
func (d *deployment) leader(shard uint64) (*member, bool) {
	var seen uint64
	for _, m := range d.running() {
		if !m.held[shard] {
			continue
		}
		l, ok := m.eng.Leader(shard)
		if !ok || seen != 0 && l != seen {
			return nil, false
		}
		seen = l
	}
	for _, m := range d.running() {
		if m.id == seen {
			return m, true
		}
	}
	return nil, false
}

func (d *deployment) running() []*member {
	var out []*member
	for _, m := range d.members {
		if d.single || m.eng != nil {
			out = append(out, m)
		}
	}
	return out
}

// committed is the sum over shards of the entries applied by the running replica of each
// that has applied most: its growth over a run is the number of proposals committed.
func (d *deployment) committed() uint64 {
	most := map[uint64]uint64{}
	for _, m := range d.running() {
		if m.eng == nil {
			continue
		}
		for _, st := range m.eng.Status(context.Background()) {
			most[st.Shard] = max(most[st.Shard], st.Applied)
		}
	}
	var n uint64
	for _, a := range most {
		n += a
	}
	return n
}

// fromMemory is how many admissions the running members answered from memory so far.
func (d *deployment) fromMemory() uint64 {
	var n uint64
	for _, m := range d.running() {
		if m.owner != nil {
			n += m.owner.Stats.FromMemory.Load()
		}
	}
	return n
}

// forwardBatches is how many batches of forwarded steps the members sent so far, and the
// steps they carried.
func (d *deployment) forwardBatches() (batches, steps uint64) {
	for _, m := range d.members {
		if m.fwd != nil {
			b, s := m.fwd.ForwardBatches()
			batches, steps = batches+b, steps+s
		}
	}
	return batches, steps
}

// close stops everything; the single node's service first writes what it holds.
func (d *deployment) close() {
	var wg sync.WaitGroup
	for _, m := range d.members {
		wg.Go(func() {
			if d.single {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				m.svc.Close(ctx)
				cancel()
			} else if m.eng != nil {
				d.kill(m)
			}
		})
	}
	wg.Wait()
	for _, m := range d.members {
		if m.store != nil {
			m.store.Close()
		}
	}
}

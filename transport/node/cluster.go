package node

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/cluster/accounts"
	"github.com/modelgate/modelgate/cluster/engine"
	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/cluster/meta"
	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/keycheck"
)

// clusterNode is what a node runs in cluster mode (Config.Cluster set): the Raft engine, the
// metadata shard's replica and the store over it that admin and the key check use.
type clusterNode struct {
	file   membership.File
	engine *engine.Node
	metaSM *meta.StateMachine
	meta   *meta.Store
	owner  *accounts.Owner // where this node's quota service proposes its accounts' steps
	leads  *leadership     // the account shards this node leads: where video tasks run
	assets *assetPeers     // finished videos copied to and fetched from other nodes
	keys   *leasedKeys
	lease  *meta.Holder // this node's read lease on the metadata shard
	held   *shardSet    // the account shards running on this node
	store  *persistence.Store
	// reads answers what the account shards hold beyond quota (the request log, grants,
	// tasks, asset holders): this node's replica, or a holder's for a shard not held here.
	reads *accounts.Reads
	fwd   *accounts.HTTPForward
	// replicas are this node's account-shard state machines, by shard: a shard's leader
	// admits from its replica's state (accounts.Owner.LeadAdmissions).
	replicas sync.Map
	// internal is the client of the other nodes' internal listeners.
	internal *http.Client

	draining atomic.Bool
	drained  chan struct{} // closed when a drain has finished and the node should exit
	ready    readiness
	// incarnation is this process's random number, on every call it admits and published
	// in every account shard at start: the shards then release the calls of the node's
	// earlier process, which no one will settle (step.ReleaseOrphans).
	incarnation uint64
}

// engineConfig is the engine's settings for f's node, keeping its files under dataDir/raft.
func engineConfig(f membership.File, dataDir string) engine.Config {
	return engine.Config{NodeID: f.NodeID, RaftAddr: f.RaftAddr, DataDir: dataDir,
		CAFile: f.Certs.CA, CertFile: f.Certs.Cert, KeyFile: f.Certs.Key}
}

// PeerRoutesEnv names a JSON file of raft peer routes ({"peer's raft address": "address to
// dial"}), read once at start: a test and diagnostic hook that puts a fault proxy between
// nodes (e2e/clustertest sets it). Unset in production.
const PeerRoutesEnv = "MODELGATE_TEST_PEER_ROUTES"

// InternalAddrEnv names the host:port the internal listener takes instead of a port chosen
// at start on the raft host: a test hook that lets a fault proxy stand in front of it (its
// peers reach it through the routes of PeerRoutesEnv). Unset in production.
const InternalAddrEnv = "MODELGATE_TEST_INTERNAL_ADDR"

// checkCluster refuses a cluster node before it touches its data directory: a cluster file
// that does not hold together (a repeated node id, a peer list edited after init), a
// certificate peers would refuse, or no shared admin token (each node would invent its own).
func checkCluster(cfg Config) error {
	f := *cfg.Cluster
	if err := f.Validate(); err != nil {
		return fmt.Errorf("cluster file %s: %w", membership.Path(cfg.DataDir), err)
	}
	if err := engine.CheckCerts(engineConfig(f, cfg.DataDir)); err != nil {
		return fmt.Errorf("cluster node %d: %w", f.NodeID, err)
	}
	if cfg.AdminToken == "" {
		if _, err := os.Stat(filepath.Join(cfg.DataDir, "admin-token")); err != nil {
			return errors.New("cluster mode needs the cluster's admin token: set MODELGATE_ADMIN_TOKEN, the same on every node")
		}
	}
	return nil
}

// startCluster starts the engine and this node's shards over store: the metadata shard on
// every node (a voter on membership.File.MetaVoters, a non-voting replica elsewhere) and the
// account shards this node holds (startShards).
func startCluster(cfg Config, store *persistence.Store) (*clusterNode, error) {
	f := *cfg.Cluster
	ecfg := engineConfig(f, cfg.DataDir)
	if path := os.Getenv(PeerRoutesEnv); path != "" {
		routes, err := engine.ReadPeerRoutes(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", PeerRoutesEnv, err)
		}
		ecfg.PeerRoutes = routes
		cfg.Logger.Warn("test hook on: raft peers are dialled through the routes of "+PeerRoutesEnv, "routes", len(routes))
	}
	eng, err := engine.New(ecfg)
	if err != nil {
		return nil, err
	}
	c := &clusterNode{file: f, engine: eng, metaSM: meta.NewStateMachine(store), drained: make(chan struct{}), incarnation: newIncarnation()}
	c.meta = meta.NewStore(store, c.metaSM, eng, membership.MetaShard)
	c.lease = meta.NewHolder(f.NodeID, c.metaSM, eng, membership.MetaShard)
	c.meta.Node, c.meta.Lease = f.NodeID, c.lease
	c.keys = &leasedKeys{lease: c.lease, local: store, linear: &linearKeys{rep: eng, timeout: keyCheckTimeout}}
	c.leads = newLeadership(f.NodeID, f.Shards)
	eng.OnLeaderChange(c.leads.changed) // before the shards start: no election goes unheard
	if err := c.startShards(store); err != nil {
		eng.Close()
		return nil, err
	}
	c.owner = accounts.NewOwner(eng, membership.FirstAccountShard, f.Shards)
	_, clientTLS, err := internalTLS(f.Certs)
	if err != nil {
		c.owner.Close()
		eng.Close()
		return nil, err
	}
	c.internal = internalClient(clientTLS, ecfg.PeerRoutes)
	c.fwd = &accounts.HTTPForward{Client: c.internal, Store: store, Shards: f.AccountShards()}
	// Where to look for the leader of a shard not held here: its voters as placed at init,
	// then every node known (rebalances move voters; a node holding the shard names its
	// leader).
	c.owner.Place(accounts.Placement{Held: c.held.has, Voters: func(s uint64) []uint64 {
		placed := ids(f.Voters(s))
		for _, n := range c.fwd.Nodes() {
			if !slices.Contains(placed, n) {
				placed = append(placed, n)
			}
		}
		return placed
	}})
	c.owner.LeadAdmissions(f.NodeID, c.replica, c.fwd)
	c.reads = accounts.NewReads(c.owner, store)
	supervise.Go("node.read-lease", c.lease.Run)
	c.watchReadiness()
	return c, nil
}

// startShards runs this node's shards: the metadata shard on every node, and the account
// shards it holds. On its first start a founding node holds the shards it is placed on as a
// voter (membership.File.Voters), so that a node applies only its shards' entries and adding
// nodes spreads the work, and a joined node follows every account shard as a non-voting
// replica, as the member that took the join added it; after that a node starts what it held
// when it stopped (shardSet), `cluster rebalance` having moved shards to it or away. A step
// or read of a shard not held here goes to a node holding it (accounts.Placement).
func (c *clusterNode) startShards(store *persistence.Store) error {
	f := c.file
	metaFactory := func(_, _ uint64) cluster.StateMachine { return c.metaSM }
	var metaVoters map[uint64]string // nil: joins it, non-voting
	if v := addrs(f.MetaVoters()); !f.Join && v[f.NodeID] != "" {
		metaVoters = v
	}
	if err := c.start(membership.MetaShard, metaVoters, metaFactory); err != nil {
		return err
	}
	if !f.Join {
		c.engine.OnLeaderChange(func(shard, leader uint64) {
			if shard == membership.MetaShard && leader == f.NodeID {
				supervise.Go("node.meta-followers", c.addMetaFollowers)
			}
		})
	}
	held, stored, err := loadShardSet(store)
	if err != nil {
		return err
	}
	c.held, c.store = held, store
	if !stored {
		for _, s := range f.AccountShards() {
			_, placed := addrs(f.Voters(s))[f.NodeID]
			if f.Join || placed {
				if err := held.put(s, f.Join, false); err != nil {
					return err
				}
			}
		}
	}
	for _, s := range held.list() {
		if err := c.startAccountShard(s); err != nil {
			return err
		}
	}
	return nil
}

// addMetaFollowers makes each founding peer that is not a voter of the metadata shard a
// non-voting replica of it, once this node leads it: such a peer started the shard as a
// joiner and waits to be added. Adding one already there changes nothing; a peer removed
// from the cluster is refused, which is what removal means.
func (c *clusterNode) addMetaFollowers() {
	voters := addrs(c.file.MetaVoters())
	for _, p := range c.file.Peers {
		if voters[p.ID] != "" {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), memberChangeTimeout)
		err := c.engine.AddNonVoting(ctx, membership.MetaShard, p.ID, p.Addr)
		cancel()
		if err != nil {
			slog.Debug("a founding peer was not added to the metadata shard", "node", p.ID, "err", err)
		}
	}
}

// startAccountShard runs this node's replica of account shard s as the shard set says it
// began: a founder with the shard's initial voters (ignored by the engine after the first
// start), a joiner with none.
func (c *clusterNode) startAccountShard(s uint64) error {
	var initial map[uint64]string
	if !c.held.joined(s) {
		initial = addrs(c.file.Voters(s))
	}
	return c.start(s, initial, accountShardMachine(c.store, c.leads.adopt, &c.replicas))
}

// shards are the shards running on this node: the metadata shard, then the account shards
// it holds.
func (c *clusterNode) shards() []uint64 {
	return append([]uint64{membership.MetaShard}, c.held.list()...)
}

// start runs this node's replica of shard: founding with initial, or joining (non-voting)
// when initial is nil.
func (c *clusterNode) start(shard uint64, initial map[uint64]string, factory func(shard, replica uint64) cluster.StateMachine) error {
	join := initial == nil
	return c.engine.StartShard(shard, initial, join, join, factory)
}

func ids(peers []membership.Peer) []uint64 {
	out := make([]uint64, len(peers))
	for i, p := range peers {
		out[i] = p.ID
	}
	return out
}

func addrs(peers []membership.Peer) map[uint64]string {
	m := make(map[uint64]string, len(peers))
	for _, p := range peers {
		m[p.ID] = p.Addr
	}
	return m
}

func (c *clusterNode) close() {
	if c != nil {
		c.ready.stop()
		c.lease.Close()
		c.assets.close()
		if c.owner != nil {
			c.owner.Close() // the batches under way end first: they propose through the engine
		}
		c.engine.Close()
	}
}

// replica is this node's replica of account shard shard (nil before it has started).
func (c *clusterNode) replica(shard uint64) *accounts.StateMachine {
	v, _ := c.replicas.Load(shard)
	sm, _ := v.(*accounts.StateMachine)
	return sm
}

// internalClient is the client of the other nodes' internal listeners: steps forwarded to
// a shard's leader are many and small, so it keeps many connections to each node open.
// It dials through routes (the test hook PeerRoutesEnv's; nil in production).
func internalClient(tlsConf *tls.Config, routes engine.PeerRoutes) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute,
		DialContext: routes.Dial}}
}

// accountShardMachine makes the state machine of an account shard's replica: the quota
// step and the video tasks over this node's store (cluster/accounts), each task it applies
// handed to onTask.
func accountShardMachine(store *persistence.Store, onTask func(persistence.VideoTask), made *sync.Map) func(shard, replica uint64) cluster.StateMachine {
	return func(shard, _ uint64) cluster.StateMachine {
		sm := accounts.NewStateMachine(store, shard)
		sm.SetTaskHook(onTask)
		made.Store(shard, sm)
		return sm
	}
}

// clusterStore is the metadata shard's store as admin and the account API use it, with
// the request log of the account shards (this node's replica, or a holder's).
type clusterStore struct {
	*meta.Store
	log *accounts.Reads
}

// QueryLog implements admin.Store.
func (s clusterStore) QueryLog(q persistence.LogQuery) (persistence.LogPage, error) {
	return s.log.QueryLog(q)
}

// leasedKeys is the key check in cluster mode: while this node holds its read lease, a key
// is read from this node's replica (every key change that has returned is applied here:
// cluster/meta/lease.go); without the lease, or for a secret the replica does not know (a key
// made a moment ago on another node), it is read linearizably.
type leasedKeys struct {
	lease  *meta.Holder
	local  *persistence.Store
	linear *linearKeys
	// Key checks answered each way, for the metrics.
	byLease, byRead atomic.Uint64
}

// LookupKey implements keycheck.Keys.
func (k *leasedKeys) LookupKey(secret string) (persistence.Key, error) {
	if k.lease.Valid() {
		key, err := k.local.LookupKey(secret)
		if !errors.Is(err, persistence.ErrNotFound) {
			k.byLease.Add(1)
			return key, err
		}
	}
	k.byRead.Add(1)
	return k.linear.LookupKey(secret)
}

// LeaseValid implements metrics.ReadLeaseSource.
func (k *leasedKeys) LeaseValid() bool { return k.lease.Valid() }

// KeyChecks implements metrics.ReadLeaseSource.
func (k *leasedKeys) KeyChecks() (lease, linear uint64) { return k.byLease.Load(), k.byRead.Load() }

// keyCheckTimeout bounds the linearizable read behind one key check: after it the call is
// answered 503 with Retry-After (keycheck.ErrUnavailable), not held.
const keyCheckTimeout = quota.MaxWait

// linearKeys is the key check in cluster mode: each lookup is a linearizable read of the
// metadata shard (ReadIndex, then this node's replica once it has applied that far), so a
// key revoked on any node is refused here as soon as the revocation returned there, and a
// node cut off from the shard's quorum refuses keys instead of trusting a stale copy. The
// engine batches concurrent reads into one ReadIndex round.
type linearKeys struct {
	rep     cluster.Replicator
	timeout time.Duration
}

// LookupKey implements keycheck.Keys.
func (k *linearKeys) LookupKey(secret string) (persistence.Key, error) {
	sum := sha256.Sum256([]byte(secret))
	q, err := meta.Query{SecretHash: hex.EncodeToString(sum[:])}.Encode()
	if err != nil {
		return persistence.Key{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), k.timeout)
	defer cancel()
	out, err := k.rep.Read(ctx, membership.MetaShard, q)
	if err != nil {
		return persistence.Key{}, fmt.Errorf("key check: %w: the metadata shard did not answer: %w", keycheck.ErrUnavailable, err)
	}
	res, err := meta.DecodeResult(out)
	switch {
	case err != nil:
		return persistence.Key{}, err
	case res.Refusal != nil:
		return persistence.Key{}, res.Refusal.Err()
	case res.Key == nil:
		return persistence.Key{}, fmt.Errorf("key check: the metadata shard's answer at %d has no key", res.Index)
	}
	return *res.Key, nil
}

// newIncarnation is a random number for this process: never 0 (a single node's) nor all
// ones (a removed node's, accounts.NodeAddr.Gone).
func newIncarnation() uint64 {
	for {
		if n := rand.Uint64(); n != 0 && n != ^uint64(0) {
			return n
		}
	}
}

package node

import (
	"fmt"
	"os"
	"slices"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/actors/video"
	"github.com/modelgate/modelgate/cluster/accounts"
	"github.com/modelgate/modelgate/cluster/engine"
	"github.com/modelgate/modelgate/cluster/meta"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/assets"
	"github.com/modelgate/modelgate/transport/account"
	"github.com/modelgate/modelgate/transport/admin"
	"github.com/modelgate/modelgate/transport/api"
	"github.com/modelgate/modelgate/transport/auth"
	"github.com/modelgate/modelgate/transport/billing"
	"github.com/modelgate/modelgate/transport/keycheck"
	"github.com/modelgate/modelgate/transport/metrics"
	"github.com/modelgate/modelgate/transport/upstream"
)

// The interfaces the wiring relies on, checked where the parts meet: a video task reads a
// failed poll or download through its own interface (the upstream client's errors must keep
// answering it, or a lost job would be polled until its deadline), and the metadata shard's
// store is the cluster's key check and admin store.
var (
	_ video.UpstreamError = (*upstream.Error)(nil)
	_ keycheck.Keys       = (*leasedKeys)(nil)
	_ keycheck.Keys       = (*meta.Store)(nil)
	_ admin.Store         = clusterStore{}
	_ auth.Store          = (*persistence.Store)(nil)
)

// backend is where a node keeps its accounts and who runs their steps: its own store on a
// single node (singleBackend), the cluster's shards on a cluster node (clusterBackend).
// Start builds one, then the same gateway over it.
type backend struct {
	keys   keycheck.Keys
	admin  admin.Store
	auth   auth.Store
	pay    billing.Store // payments and subscriptions
	log    requestLog
	quota  *quota.Service
	assets api.Assets // generated files, as the API serves them
	video  video.Deps // where video tasks are kept and run
	prune  pruneFunc  // the request log's retention
	// started runs once the video service is up (a cluster's leaders run their shards' tasks).
	started func(*video.Service)
	// metrics adds the backend's own gauges.
	metrics func(*metrics.Metrics)
}

// requestLog is the request log as the API and the account API read it.
type requestLog interface {
	api.RequestLog
	account.Grants
}

// singleBackend is a single node's: everything in its own store, every account's steps in
// its quota actors.
func (n *Node) singleBackend(store *persistence.Store, files *assets.Store, up *upstream.Client) backend {
	var quotaStore quota.Store = store
	if n.cfg.QuotaStore != nil {
		quotaStore = n.cfg.QuotaStore(store)
	}
	q := quota.NewService(quotaStore, n.cfg.Quota)
	return backend{
		keys: store, admin: store, auth: store, pay: store, log: store, quota: q, assets: assetFiles{files},
		video:   video.Deps{Tasks: store, Assets: files, Upstream: up, Quota: q, Catalog: n.Catalog, Logger: n.cfg.Logger},
		prune:   singlePrune(store),
		started: func(*video.Service) {},
		metrics: func(*metrics.Metrics) {},
	}
}

// clusterBackend starts the node's part of the cluster (cluster.go) and is its backend:
// accounts and keys in the replicated metadata shard, each account's steps proposed to its
// shard, whose leader owns them (docs/cluster.md), video tasks in their account's shard, run
// by its leader, and finished videos on two nodes.
func (n *Node) clusterBackend(store *persistence.Store, files *assets.Store, up *upstream.Client) (backend, error) {
	c, err := startCluster(n.cfg, store)
	if err != nil {
		return backend{}, err
	}
	n.cluster = c
	qcfg := n.cfg.Quota
	qcfg.Node, qcfg.Incarnation = c.file.NodeID, c.incarnation
	q := quota.NewServiceOver(c.owner, qcfg)
	if c.assets, err = startAssetPeers(c, store, files, n.cfg.Logger); err != nil {
		return backend{quota: q}, err
	}
	tasks := accounts.NewTasks(c.reads)
	return backend{
		keys: c.keys, admin: clusterStore{c.meta, c.reads}, auth: c.meta, pay: c.meta, log: c.reads, quota: q,
		assets: clusterAssetFiles{assetFiles{files}, c.assets},
		video: video.Deps{Tasks: tasks, Placement: c.leads, Copies: c.assets, Assets: files, Upstream: up, Quota: q,
			Catalog: n.Catalog, Logger: n.cfg.Logger},
		prune:   clusterPrune(c),
		started: func(v *video.Service) { c.leads.serve(v, tasks, n.cfg.Logger) },
		metrics: func(m *metrics.Metrics) {
			m.Raft(c.engine)
			m.ReadLease(c.keys)
			m.QuotaSteps(c.owner)
			m.ForwardBatches(c.fwd)
		},
	}, nil
}

// clusterStoreOptions are a cluster node's store options: its shard state machines read and
// write the store on every step, with the cache and memtables they were measured with
// (docs/cluster.md), not the single node's small ones; and the Raft log (the engine's own
// Pebble under raft/) gets the store's disk-full guard: calls are refused while its
// filesystem is below the reserve, as for the store's.
func clusterStoreOptions(cfg Config) (persistence.Options, error) {
	o := cfg.Store.ForCluster()
	raftDir := engine.RaftDir(cfg.DataDir)
	if err := os.MkdirAll(raftDir, 0o700); err != nil {
		return o, fmt.Errorf("raft directory: %w", err)
	}
	o.AlsoWatch = append(slices.Clone(o.AlsoWatch), raftDir)
	return o, nil
}

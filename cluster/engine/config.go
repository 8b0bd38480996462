package engine

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"

	"github.com/lni/dragonboat/v4/config"
)

// Config is one node's engine settings. Zero durations and counts take the defaults below
// (docs/cluster.md says why each is what it is).
type Config struct {
	// NodeID names this node in every shard: its replica id in each Raft group (> 0, unique
	// in the cluster, never reused after a removal).
	NodeID uint64
	// RaftAddr is the host:port peers reach this node's Raft transport at; it must be one of
	// the names or IPs in the node certificate, since peers verify it.
	RaftAddr string
	// DataDir holds the engine's files under DataDir/raft (the write-ahead log in wal/, the
	// rest in nodehost/). The state machines keep their own files elsewhere.
	DataDir string

	// RTTMillisecond is one network round trip between nodes in ms, the engine's clock tick
	// (default 10, right for loopback and one LAN).
	RTTMillisecond uint64
	// ElectionRTT is the election timeout in ticks (default 20: 200–400 ms at 10 ms ticks).
	ElectionRTT uint64
	// HeartbeatRTT is the leader's heartbeat interval in ticks (default 2).
	HeartbeatRTT uint64
	// SnapshotEntries is how many applied entries between automatic snapshots (default
	// 10000); CompactionOverhead is how many entries the log keeps behind a snapshot so a
	// follower a little behind catches up from the log, not from a snapshot (default 5000).
	SnapshotEntries    uint64
	CompactionOverhead uint64
	// LogDBShards is how many Pebble instances hold the Raft log (default 1). Each fsyncs
	// on its own: one makes every fsync carry the writes of all the shards that were ready,
	// which measured faster here than 4 (docs/cluster.md, "Engine settings").
	LogDBShards uint64
	// ExecShards is how many workers step the shards' Raft groups and write their log
	// (default 4). Each worker's write is one fsync: fewer workers give fewer, fuller
	// fsyncs. The engine records it and LogDBShards in the data directory and refuses to
	// start with other values (ErrSettingsChanged).
	ExecShards uint64

	// CAFile is the cluster CA's certificate; CertFile and KeyFile are this node's
	// certificate (signed by that CA, for server and client auth) and key. All required:
	// node-to-node traffic is always mutual TLS.
	CAFile   string
	CertFile string
	KeyFile  string

	// PlainTCPForMeasurement turns mutual TLS off: node-to-node traffic in clear, no
	// certificates. Only the cluster bench sets it, to measure what TLS costs; `serve` has
	// no way to, and Validate refuses it together with certificate files (a node meant to
	// run with TLS that would silently run without).
	PlainTCPForMeasurement bool

	// PeerRoutes, when set, makes this node dial some peers at other addresses (a fault
	// proxy in partition tests; see PeerRoutes). Off in production.
	PeerRoutes PeerRoutes
}

// The defaults (docs/cluster.md, "Engine settings").
const (
	DefaultRTTMillisecond     = 10
	DefaultElectionRTT        = 20
	DefaultHeartbeatRTT       = 2
	DefaultSnapshotEntries    = 10000
	DefaultCompactionOverhead = 5000
	DefaultLogDBShards        = 1
	DefaultExecShards         = 4
)

// withDefaults returns c with every unset tunable given its default.
func (c Config) withDefaults() Config {
	def := func(v *uint64, d uint64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.RTTMillisecond, DefaultRTTMillisecond)
	def(&c.ElectionRTT, DefaultElectionRTT)
	def(&c.HeartbeatRTT, DefaultHeartbeatRTT)
	def(&c.SnapshotEntries, DefaultSnapshotEntries)
	def(&c.CompactionOverhead, DefaultCompactionOverhead)
	def(&c.LogDBShards, DefaultLogDBShards)
	def(&c.ExecShards, DefaultExecShards)
	return c
}

// Validate says what is wrong with c (after defaults), naming the field.
func (c Config) Validate() error {
	var errs []error
	if c.NodeID == 0 {
		errs = append(errs, errors.New("engine config: NodeID must be > 0"))
	}
	if _, port, err := net.SplitHostPort(c.RaftAddr); err != nil {
		errs = append(errs, fmt.Errorf("engine config: RaftAddr %q is not host:port", c.RaftAddr))
	} else if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		errs = append(errs, fmt.Errorf("engine config: RaftAddr %q has no valid port", c.RaftAddr))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("engine config: DataDir is required"))
	}
	for _, f := range []struct{ name, v string }{
		{"CAFile", c.CAFile}, {"CertFile", c.CertFile}, {"KeyFile", c.KeyFile},
	} {
		switch {
		case f.v == "" && !c.PlainTCPForMeasurement:
			errs = append(errs, fmt.Errorf("engine config: %s is required (node-to-node traffic is mutual TLS)", f.name))
		case f.v != "" && c.PlainTCPForMeasurement:
			errs = append(errs, fmt.Errorf("engine config: %s is set but PlainTCPForMeasurement turns TLS off", f.name))
		}
	}
	if c.HeartbeatRTT > 0 && c.ElectionRTT <= 2*c.HeartbeatRTT {
		errs = append(errs, fmt.Errorf("engine config: ElectionRTT (%d) must be more than twice HeartbeatRTT (%d)", c.ElectionRTT, c.HeartbeatRTT))
	}
	if err := c.PeerRoutes.validate(); err != nil {
		errs = append(errs, fmt.Errorf("engine config: %w", err))
	}
	if c.CompactionOverhead > c.SnapshotEntries && c.SnapshotEntries > 0 {
		errs = append(errs, fmt.Errorf("engine config: CompactionOverhead (%d) must not exceed SnapshotEntries (%d)", c.CompactionOverhead, c.SnapshotEntries))
	}
	return errors.Join(errs...)
}

// raftDir is where the engine keeps its files.
func (c Config) raftDir() string { return RaftDir(c.DataDir) }

// RaftDir is where the engine of a node with data directory dataDir keeps its files.
func RaftDir(dataDir string) string { return filepath.Join(dataDir, "raft") }

func (c Config) nodeHostConfig(l *eventListener, sys systemEvents) config.NodeHostConfig {
	logdb := config.GetSmallMemLogDBConfig()
	logdb.Shards = c.LogDBShards
	transport := raftTransportFactory{routes: c.PeerRoutes}
	eng := config.GetDefaultEngineConfig()
	eng.ExecShards = c.ExecShards
	return config.NodeHostConfig{
		WALDir:              filepath.Join(c.raftDir(), "wal"),
		NodeHostDir:         filepath.Join(c.raftDir(), "nodehost"),
		RTTMillisecond:      c.RTTMillisecond,
		RaftAddress:         c.RaftAddr,
		MutualTLS:           !c.PlainTCPForMeasurement,
		CAFile:              c.CAFile,
		CertFile:            c.CertFile,
		KeyFile:             c.KeyFile,
		RaftEventListener:   l,
		SystemEventListener: sys,
		Expert: config.ExpertConfig{
			Engine:           eng,
			LogDB:            logdb,
			TransportFactory: transport,
		},
	}
}

func (c Config) shardConfig(shard uint64, nonVoting bool) config.Config {
	return config.Config{
		ReplicaID:          c.NodeID,
		ShardID:            shard,
		CheckQuorum:        true,
		PreVote:            true,
		ElectionRTT:        c.ElectionRTT,
		HeartbeatRTT:       c.HeartbeatRTT,
		SnapshotEntries:    c.SnapshotEntries,
		CompactionOverhead: c.CompactionOverhead,
		IsNonVoting:        nonVoting,
	}
}

package node

import (
	"context"
	"log/slog"
	"sync"

	"github.com/modelgate/modelgate/actors/video"
	"github.com/modelgate/modelgate/cluster/accounts"
	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence"
)

// Video tasks in cluster mode (docs/cluster.md "Video tasks in a cluster"): the task store
// is the account shards (accounts.Tasks), and a task's actor runs on its shard's leader.
// leadership follows the engine's leader changes, tells the video service where tasks run
// (video.Placement) and moves their actors: a shard gained is caught up and its open tasks
// resumed, a shard lost stops them.

// What the video service needs of a cluster node; FreshTasks is found by a type assertion,
// so a mismatch would silently fall back to local reads.
var (
	_ video.Tasks      = (*accounts.Tasks)(nil)
	_ video.FreshTasks = (*accounts.Tasks)(nil)
	_ video.Placement  = (*leadership)(nil)
	_ video.Copies     = (*assetPeers)(nil)
)

// leadership is which account shards this node leads, as the engine last reported.
type leadership struct {
	self   uint64
	first  uint64
	shards int

	mu    sync.Mutex
	led   map[uint64]bool
	video *video.Service  // nil until the service is built
	tasks *accounts.Tasks // with video
	log   *slog.Logger
}

func newLeadership(self uint64, shards int) *leadership {
	return &leadership{self: self, first: membership.FirstAccountShard, shards: shards, led: map[uint64]bool{}}
}

// leads reports whether this node leads shard now.
func (l *leadership) leads(shard uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.led[shard]
}

// Here implements video.Placement.
func (l *leadership) Here(account string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.led[accounts.ShardOf(account, l.first, l.shards)]
}

// changed is the engine's OnLeaderChange callback.
func (l *leadership) changed(shard, leader uint64) {
	if shard < l.first || shard >= l.first+uint64(l.shards) {
		return // the metadata shard
	}
	l.mu.Lock()
	was := l.led[shard]
	now := leader == l.self
	l.led[shard] = now
	svc, tasks, log := l.video, l.tasks, l.log
	l.mu.Unlock()
	switch {
	case svc == nil || was == now:
	case now:
		supervise.Go(whereResume, func() { resumeShard(svc, tasks, shard, log) })
	default:
		svc.Reassess()
	}
}

// adopt is the account shards' task hook: each task a replica here applies.
func (l *leadership) adopt(t persistence.VideoTask) {
	l.mu.Lock()
	svc := l.video
	l.mu.Unlock()
	if svc != nil {
		svc.Adopt(t)
	}
}

// serve hands tasks to svc from now on, and resumes those of the shards led already.
func (l *leadership) serve(svc *video.Service, tasks *accounts.Tasks, log *slog.Logger) {
	l.mu.Lock()
	l.video, l.tasks, l.log = svc, tasks, log
	var led []uint64
	for s, ok := range l.led {
		if ok {
			led = append(led, s)
		}
	}
	l.mu.Unlock()
	for _, s := range led {
		supervise.Go(whereResume, func() { resumeShard(svc, tasks, s, log) })
	}
}

// whereResume names resumeShard's goroutines to supervise.
const whereResume = "node.resume-videos"

// resumeShard catches this node's replica up with what the shard committed before it led
// (a new leader may not have applied it all yet), then resumes the tasks that run here.
func resumeShard(svc *video.Service, tasks *accounts.Tasks, shard uint64, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*accounts.TotalWait)
	defer cancel()
	if err := tasks.Sync(ctx, shard); err != nil {
		log.Warn("video tasks of a shard led now not resumed: it did not answer", "shard", shard, "err", err)
		return
	}
	if err := svc.Resume(ctx); err != nil {
		log.Warn("video tasks of a shard led now not resumed", "shard", shard, "err", err)
	}
}

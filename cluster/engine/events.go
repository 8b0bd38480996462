package engine

import (
	"sync"

	"github.com/lni/dragonboat/v4/raftio"

	"github.com/modelgate/modelgate/internal/supervise"
)

// eventListener turns dragonboat's leader updates into OnLeaderChange calls. dragonboat
// calls LeaderUpdated from its one event goroutine, which must not block on our callbacks
// (they may propose, and a proposal may wait on that very goroutine); so updates are queued
// and delivered, in order, by a goroutine of ours holding no lock.
type eventListener struct {
	mu    sync.Mutex
	queue []leaderChange
	last  map[uint64]uint64 // last leader queued per shard; absent means none known
	subs  []func(shard, leader uint64)
	// watches: per shard, a channel closed at its next leader change (watch)
	watches map[uint64]chan struct{}
	wake    chan struct{}
	done    chan struct{}
	exited  <-chan struct{}

	// The change being delivered, kept here (not on deliver's stack) so that deliver started
	// again after a panic in a callback (supervise.Loop) hands it to the callbacks after that
	// one. Only deliver's goroutine touches it.
	current *delivery
}

type leaderChange struct{ shard, leader uint64 }

// delivery is a change on its way to the callbacks subscribed when it was taken.
type delivery struct {
	change leaderChange
	subs   []func(shard, leader uint64)
	next   int // the next callback to call
}

// whereEvents names the delivering goroutine to supervise (its panics, its fault point).
const whereEvents = "engine.leader-events"

func newEventListener() *eventListener {
	l := &eventListener{
		last:    map[uint64]uint64{},
		watches: map[uint64]chan struct{}{},
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	l.exited = supervise.Loop(whereEvents, l.done, l.deliver)
	return l
}

// LeaderUpdated implements raftio.IRaftEventListener. A repeat of the leader already
// reported (a new term, same leader) is not a change.
func (l *eventListener) LeaderUpdated(info raftio.LeaderInfo) {
	l.mu.Lock()
	if l.last[info.ShardID] == info.LeaderID {
		l.mu.Unlock()
		return
	}
	l.last[info.ShardID] = info.LeaderID
	l.queue = append(l.queue, leaderChange{info.ShardID, info.LeaderID})
	if ch, ok := l.watches[info.ShardID]; ok {
		close(ch)
		delete(l.watches, info.ShardID)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// watch is a channel closed at shard's next leader change (as this node sees it).
func (l *eventListener) watch(shard uint64) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch, ok := l.watches[shard]
	if !ok {
		ch = make(chan struct{})
		l.watches[shard] = ch
	}
	return ch
}

func (l *eventListener) subscribe(f func(shard, leader uint64)) {
	l.mu.Lock()
	l.subs = append(l.subs, f)
	l.mu.Unlock()
}

// deliver calls the callbacks with each change queued, in order, until stop. A callback that
// panics (logged, counted) misses that change; the others still get it.
func (l *eventListener) deliver() {
	for {
		l.deliverQueued()
		select {
		case <-l.wake:
		case <-l.done:
			return
		}
	}
}

// deliverQueued delivers the change under way, then each queued one.
func (l *eventListener) deliverQueued() {
	for {
		if l.current == nil {
			if l.current = l.take(); l.current == nil {
				return
			}
		}
		d := l.current
		supervise.Fault(whereEvents)
		for d.next < len(d.subs) {
			f := d.subs[d.next]
			d.next++ // before the call: a callback that panics is not called again
			f(d.change.shard, d.change.leader)
		}
		l.current = nil
	}
}

// take is the next queued change with its callbacks, or nil.
func (l *eventListener) take() *delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.queue) == 0 {
		return nil
	}
	c := l.queue[0]
	l.queue = l.queue[1:]
	return &delivery{change: c, subs: l.subs[:len(l.subs):len(l.subs)]}
}

// stop ends delivery, waiting for a callback in progress.
func (l *eventListener) stop() {
	close(l.done)
	<-l.exited
}

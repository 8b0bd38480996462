package engine

import (
	"sync"

	"github.com/lni/dragonboat/v4/raftio"
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
	exited  chan struct{}
}

type leaderChange struct{ shard, leader uint64 }

func newEventListener() *eventListener {
	l := &eventListener{
		last:    map[uint64]uint64{},
		watches: map[uint64]chan struct{}{},
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		exited:  make(chan struct{}),
	}
	go l.deliver()
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

func (l *eventListener) deliver() {
	defer close(l.exited)
	for {
		select {
		case <-l.wake:
		case <-l.done:
			return
		}
		for {
			l.mu.Lock()
			if len(l.queue) == 0 {
				l.mu.Unlock()
				break
			}
			c := l.queue[0]
			l.queue = l.queue[1:]
			subs := l.subs[:len(l.subs):len(l.subs)]
			l.mu.Unlock()
			for _, f := range subs {
				f(c.shard, c.leader)
			}
		}
	}
}

// stop ends delivery, waiting for a callback in progress.
func (l *eventListener) stop() {
	close(l.done)
	<-l.exited
}

package engine

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/lni/dragonboat/v4/raftio"

	"github.com/modelgate/modelgate/internal/supervise"
)

// A leader-change callback that panics misses that change, and only it: the callbacks after
// it still get it, and every later change reaches every callback, in order (the delivering
// goroutine is started again by supervise.Loop).
func TestALeaderCallbackThatPanicsDoesNotStopTheOthers(t *testing.T) {
	l := newEventListener()
	defer l.stop()
	var mu sync.Mutex
	var got []string
	record := func(name string) func(shard, leader uint64) {
		return func(shard, leader uint64) {
			mu.Lock()
			got = append(got, name+":"+string(rune('0'+shard))+"/"+string(rune('0'+leader)))
			mu.Unlock()
		}
	}
	panicked := false
	l.subscribe(record("a"))
	l.subscribe(func(shard, leader uint64) {
		if !panicked {
			panicked = true
			panic("a callback fails")
		}
		record("b")(shard, leader)
	})
	l.subscribe(record("c"))
	before := supervise.CountAt(whereEvents)
	l.LeaderUpdated(raftio.LeaderInfo{ShardID: 1, LeaderID: 2})
	l.LeaderUpdated(raftio.LeaderInfo{ShardID: 3, LeaderID: 1})
	want := []string{"a:1/2", "c:1/2", "a:3/1", "b:3/1", "c:3/1"}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		done := len(got) >= len(want)
		snapshot := append([]string(nil), got...)
		mu.Unlock()
		if done {
			if !reflect.DeepEqual(snapshot, want) {
				t.Fatalf("delivered %q, want %q", snapshot, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivered %q after 5 s, want %q", snapshot, want)
		}
		time.Sleep(time.Millisecond)
	}
	if n := supervise.CountAt(whereEvents); n != before+1 {
		t.Fatalf("%s panics %d, want %d", whereEvents, n, before+1)
	}
}

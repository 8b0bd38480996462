package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lni/dragonboat/v4/raftio"
)

// A try waiting on a shard whose leader changes ends at once with errLeaderChanged, which
// retry treats as transient (the next try goes to the new leader); a change on another
// shard, or none, leaves it to its own end.
func TestATryEndsWhenItsShardsLeaderChanges(t *testing.T) {
	n := &Node{events: newEventListener()}
	defer n.events.stop()
	n.events.LeaderUpdated(raftio.LeaderInfo{ShardID: 7, LeaderID: 1})
	n.events.LeaderUpdated(raftio.LeaderInfo{ShardID: 8, LeaderID: 1})
	cases := []struct {
		name    string
		change  *raftio.LeaderInfo
		want    error
		transit bool
	}{
		{"this shard's leader changes", &raftio.LeaderInfo{ShardID: 7, LeaderID: 2}, errLeaderChanged, true},
		{"the same leader again (a new term)", &raftio.LeaderInfo{ShardID: 7, LeaderID: 2}, context.DeadlineExceeded, false},
		{"another shard's leader changes", &raftio.LeaderInfo{ShardID: 8, LeaderID: 3}, context.DeadlineExceeded, false},
		{"no change", nil, context.DeadlineExceeded, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			waiting := make(chan struct{})
			go func() {
				<-waiting
				if tc.change != nil {
					n.events.LeaderUpdated(*tc.change)
				}
			}()
			err := n.untilLeaderChange(ctx, 7, func(ctx context.Context) error {
				close(waiting)
				<-ctx.Done()
				return ctx.Err()
			})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if got := errors.Is(err, errLeaderChanged) && transient(err); got != tc.transit {
				t.Errorf("retried at once = %v, want %v", got, tc.transit)
			}
		})
	}
}

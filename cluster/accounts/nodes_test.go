package accounts

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/modelgate/modelgate/persistence"
)

func TestPublishedAddressesAndAVideosHoldersAreTheShardsAndTravelInItsSnapshot(t *testing.T) {
	const shard = 3
	src, store := newReplica(t, shard)
	done := videoTask("acct-a", "AAAAAAAAAAAAAAAAAAAAAAAA")
	log := [][]byte{
		batch(t, Command{ID: "n1", Node: &NodeAddr{ID: 2, Addr: "127.0.0.1:4002"}}, Command{ID: "n2", Node: &NodeAddr{ID: 1, Addr: "127.0.0.1:4001"}},
			taskCmd("c", TaskCreate, done)),
		batch(t, Command{ID: "n3", Node: &NodeAddr{ID: 2, Addr: "127.0.0.1:5002"}}, // restarted on another port
			Command{ID: "n4", Node: &NodeAddr{ID: 0, Addr: "x"}}, Command{ID: "n5", Node: &NodeAddr{ID: 4}}),
	}
	done.Rev, done.Status, done.Progress, done.AssetID, done.AssetPath, done.AssetHolders = 1, persistence.TaskCompleted, 100, "ASSET", "/assets/vid/ASSET.mp4", []uint64{2, 1}
	log = append(log, batch(t, taskCmd("p", TaskPut, done)))
	got := applyTasks(t, src, entries(1, log...))
	want := []TaskResult{{}, {}, {Rev: 1}, {}, {Fail: TaskInvalid}, {Fail: TaskInvalid}, {Rev: 2}}
	if !slices.Equal(got, want) {
		t.Errorf("results %+v, want %+v", got, want)
	}
	dst, other := newReplica(t, shard)
	if err := dst.RecoverFromSnapshot(bytes.NewReader(snapshot(t, src))); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*persistence.Store{store, other} {
		peers, err := Peers(s, shard)
		if want := []NodeAddr{{ID: 1, Addr: "127.0.0.1:4001"}, {ID: 2, Addr: "127.0.0.1:5002"}}; err != nil || !slices.Equal(peers, want) {
			t.Errorf("peers %+v (%v), want %+v", peers, err, want)
		}
		for _, tc := range []struct {
			id, want string
		}{{"ASSET", "3 [2 1] true"}, {"OTHER", "0 [] false"}} {
			sh, holders, ok, err := AssetHolders(s, 2, 4, tc.id)
			if got := fmt.Sprint(sh, " ", holders, " ", ok); err != nil || got != tc.want {
				t.Errorf("holders of %s: %s (%v), want %s", tc.id, got, err, tc.want)
			}
		}
	}
}

package membership

import (
	"reflect"
	"testing"
)

func TestPlanLeadersSpreadsLeadershipOverEachShardsVoters(t *testing.T) {
	three := []uint64{1, 2, 3}
	cases := []struct {
		name   string
		shards []Led
		want   []Move
	}{
		{"already even", []Led{{Shard: 2, Leader: 1, Voters: three}, {Shard: 3, Leader: 2, Voters: three}, {Shard: 4, Leader: 3, Voters: three}}, nil},
		{"one node leads all four", []Led{{Shard: 2, Leader: 1, Voters: three}, {Shard: 3, Leader: 1, Voters: three}, {Shard: 4, Leader: 1, Voters: three}, {Shard: 5, Leader: 1, Voters: three}},
			[]Move{{2, 1, 2}, {3, 1, 3}}},
		{"a leader off its voters or unknown is left alone", []Led{{Shard: 2, Leader: 1, Voters: three}, {Shard: 4, Leader: 0, Voters: three}, {Shard: 5, Leader: 4, Voters: three}}, nil},
		{"only to a voter of the shard", []Led{{Shard: 2, Leader: 1, Voters: []uint64{1, 2}}, {Shard: 3, Leader: 1, Voters: []uint64{1, 2}}, {Shard: 4, Leader: 1, Voters: []uint64{1, 2}}, {Shard: 5, Leader: 3, Voters: []uint64{3, 4}}},
			[]Move{{2, 1, 2}}},
	}
	for _, c := range cases {
		if got := PlanLeaders(c.shards); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPlanReplicasSpreadsTheVotersOverTheNodes(t *testing.T) {
	three := []uint64{1, 2, 3}
	cases := []struct {
		name   string
		shards []Led
		nodes  []uint64
		want   []Move
	}{
		{"already even", []Led{{Shard: 2, Voters: three}, {Shard: 3, Voters: three}}, three, nil},
		{"a fourth node joins", []Led{{Shard: 2, Voters: three}, {Shard: 3, Voters: three}, {Shard: 4, Voters: three}, {Shard: 5, Voters: three}},
			[]uint64{1, 2, 3, 4}, []Move{{2, 1, 4}, {3, 2, 4}, {4, 3, 4}}},
		{"three more nodes join", []Led{{Shard: 2, Voters: three}, {Shard: 3, Voters: three}},
			[]uint64{1, 2, 3, 4, 5, 6}, []Move{{2, 1, 4}, {2, 2, 5}, {2, 3, 6}}},
		{"a voter not among the nodes stays and is not counted", []Led{{Shard: 2, Voters: []uint64{1, 9, 2}}, {Shard: 3, Voters: []uint64{1, 2, 9}}},
			[]uint64{1, 2, 3, 4}, []Move{{2, 1, 3}, {2, 2, 4}}},
		{"a removed node's shards gain a voter each", []Led{{Shard: 2, Voters: []uint64{1, 2}}, {Shard: 3, Voters: []uint64{2, 3}}, {Shard: 4, Voters: three}},
			[]uint64{1, 2, 3, 4}, []Move{{2, 0, 4}, {3, 0, 4}}},
		{"no more voters than nodes", []Led{{Shard: 2, Voters: []uint64{1}}}, []uint64{1, 2}, []Move{{2, 0, 2}}},
		{"never back onto a node removed from the shard", []Led{{Shard: 2, Voters: []uint64{2, 3}, Removed: []uint64{1, 4}}, {Shard: 3, Voters: []uint64{1, 2, 3}}},
			[]uint64{1, 2, 3}, nil},
		{"a new node fills a shard others were removed from", []Led{{Shard: 2, Voters: []uint64{2, 3}, Removed: []uint64{1, 4}}, {Shard: 3, Voters: []uint64{1, 2, 3}}},
			[]uint64{1, 2, 3, 5}, []Move{{2, 0, 5}}},
	}
	for _, c := range cases {
		if got := PlanReplicas(c.shards, c.nodes, 3); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

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
		{"already even", []Led{{2, 1, three}, {3, 2, three}, {4, 3, three}}, nil},
		{"one node leads all four", []Led{{2, 1, three}, {3, 1, three}, {4, 1, three}, {5, 1, three}},
			[]Move{{2, 1, 2}, {3, 1, 3}}},
		{"a leader off its voters or unknown is left alone", []Led{{2, 1, three}, {4, 0, three}, {5, 4, three}}, nil},
		{"only to a voter of the shard", []Led{{2, 1, []uint64{1, 2}}, {3, 1, []uint64{1, 2}}, {4, 1, []uint64{1, 2}}, {5, 3, []uint64{3, 4}}},
			[]Move{{2, 1, 2}}},
	}
	for _, c := range cases {
		if got := PlanLeaders(c.shards); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

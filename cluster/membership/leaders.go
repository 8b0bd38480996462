package membership

import (
	"maps"
	"slices"
)

// Led is one shard as a rebalance sees it: its leader (0: none known), its voters, and the
// nodes removed from it, which may never join it again.
type Led struct {
	Shard   uint64
	Leader  uint64
	Voters  []uint64
	Removed []uint64
}

// Move is one leadership transfer: Shard from From to To.
type Move struct {
	Shard uint64 `json:"shard"`
	From  uint64 `json:"from"`
	To    uint64 `json:"to"`
}

// PlanLeaders is the transfers that spread the shards' leaderships evenly over the nodes
// that vote in them: until no node leads two more shards than a voter of one of its shards
// does, a shard of the node leading the most goes to its voter leading the fewest (ties:
// lowest shard, then lowest node id). A shard without a known leader is left alone. The
// same input always gives the same plan.
func PlanLeaders(shards []Led) []Move {
	count := map[uint64]int{}
	leader := map[uint64]uint64{}
	voters := map[uint64][]uint64{}
	for _, s := range shards {
		for _, v := range s.Voters {
			count[v] += 0
		}
		if s.Leader != 0 && slices.Contains(s.Voters, s.Leader) {
			count[s.Leader]++
			leader[s.Shard] = s.Leader
			voters[s.Shard] = slices.Sorted(slices.Values(s.Voters))
		}
	}
	ids := slices.Sorted(maps.Keys(leader))
	var moves []Move
	for range len(shards) * len(count) { // each move lowers the spread; this bounds a bug
		best := Move{}
		gap := 1
		for _, shard := range ids {
			from := leader[shard]
			for _, to := range voters[shard] {
				if d := count[from] - count[to]; d > gap {
					best, gap = Move{Shard: shard, From: from, To: to}, d
				}
			}
		}
		if best.Shard == 0 {
			break
		}
		count[best.From]--
		count[best.To]++
		leader[best.Shard] = best.To
		moves = append(moves, best)
	}
	return moves
}

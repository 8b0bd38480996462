package membership

import "slices"

// PlanReplicas is the voter changes that give each account shard replicas voters (as many
// as there are nodes, if fewer) spread evenly over nodes. First each shard short of voters
// (a node removed) gains one on the node voting in the fewest shards that is not a voter of
// it (a Move with From 0), until none is short; then, until no node votes in two more
// shards than another, one shard of the node voting in the most moves to the node voting in
// the fewest that is not a voter of it already (ties: lowest id; shards lowest first). A
// voter that is not in nodes is left where it is and not counted. The same input always
// gives the same plan. The shards' leaders play no part. A node removed from a shard is
// never planned back onto it (Raft never takes a removed member back), so a shard may stay
// short when every node left has been in it: a node that joins (a new id) fills it.
func PlanReplicas(shards []Led, nodes []uint64, replicas int) []Move {
	nodes = slices.Sorted(slices.Values(nodes))
	count := map[uint64]int{}
	voters := map[uint64][]uint64{}
	removed := map[uint64][]uint64{}
	for _, n := range nodes {
		count[n] = 0
	}
	for _, s := range shards {
		voters[s.Shard] = slices.Clone(s.Voters)
		removed[s.Shard] = s.Removed
		for _, v := range s.Voters {
			if _, ok := count[v]; ok {
				count[v]++
			}
		}
	}
	ids := make([]uint64, 0, len(shards))
	for _, s := range shards {
		ids = append(ids, s.Shard)
	}
	slices.Sort(ids)
	var moves []Move
	replicas = min(replicas, len(nodes))
	for _, s := range ids {
		for len(voters[s]) < replicas {
			to := uint64(0)
			for _, n := range nodes {
				if takes(n, voters[s], removed[s]) && (to == 0 || count[n] < count[to]) {
					to = n
				}
			}
			if to == 0 {
				break // every node is a voter of it already, or was removed from it
			}
			count[to]++
			voters[s] = append(voters[s], to)
			moves = append(moves, Move{Shard: s, To: to})
		}
	}
	for range len(shards) * len(nodes) { // each move lowers the spread; this bounds a bug
		best := Move{}
		gap := 1
		for _, from := range nodes {
			for _, to := range nodes {
				d := count[from] - count[to]
				if d <= gap {
					continue
				}
				for _, s := range ids {
					if slices.Contains(voters[s], from) && takes(to, voters[s], removed[s]) {
						best, gap = Move{Shard: s, From: from, To: to}, d
						break
					}
				}
			}
		}
		if best.Shard == 0 {
			break
		}
		count[best.From]--
		count[best.To]++
		vs := voters[best.Shard]
		vs[slices.Index(vs, best.From)] = best.To
		moves = append(moves, best)
	}
	return moves
}

// takes reports whether node may become a voter of a shard with voters and removed.
func takes(node uint64, voters, removed []uint64) bool {
	return !slices.Contains(voters, node) && !slices.Contains(removed, node)
}

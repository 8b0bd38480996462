package api

import (
	"slices"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// The order an auto model tries its candidates in: eligible first, healthy before
// cooling, the preferred families in their order, then the policy; ties keep the file's order.
func TestAutoOrder(t *testing.T) {
	cd := func(id, owner, why string, healthy bool, cost int64, ttft time.Duration) candidate {
		return candidate{model: &catalog.Model{ID: id, OwnedBy: owner}, why: why, healthy: healthy, cost: cost, ttft: ttft}
	}
	cands := []candidate{
		cd("a", "acme", "", true, 30, 300*time.Millisecond),
		cd("b", "beta", "", true, 10, 200*time.Millisecond),
		cd("c", "acme", "", false, 5, 0),
		cd("d", "beta", "it does not take tools", true, 1, 0),
		cd("e", "gamma", "", true, 20, 0),
		cd("f", "beta", "", true, 10, 100*time.Millisecond),
	}
	cases := []struct {
		name   string
		policy string
		prefer []string
		want   string
	}{
		{"ordered", catalog.AutoOrdered, nil, "abefcd"},
		{"cheapest", catalog.AutoCheapest, nil, "bfeacd"},
		{"fastest, unmeasured first", catalog.AutoFastest, nil, "efbacd"},
		{"cheapest, beta preferred", catalog.AutoCheapest, []string{"beta"}, "bfeacd"},
		{"ordered, gamma then acme preferred", catalog.AutoOrdered, []string{"gamma", "acme"}, "eabfcd"},
		{"fastest, acme preferred", catalog.AutoFastest, []string{"acme"}, "aefbcd"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := slices.Clone(cands)
			order(got, &catalog.Auto{Policy: tc.policy, Prefer: tc.prefer})
			ids := ""
			for _, c := range got {
				ids += c.model.ID
			}
			if ids != tc.want {
				t.Fatalf("order %s, want %s", ids, tc.want)
			}
		})
	}
}

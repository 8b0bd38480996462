package harness

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/bench/clusterbench"
)

func TestTheClusterScenarioIsSelectedByNameOrAllAndSendsNoHTTP(t *testing.T) {
	cases := []struct {
		names     []string
		cluster   bool
		httpNames []string
	}{
		{nil, true, ScenarioNames()},
		{[]string{"all"}, true, ScenarioNames()},
		{[]string{"cluster"}, true, nil},
		{[]string{"chat-plain", "cluster"}, true, []string{"chat-plain"}},
		{[]string{"chat-plain"}, false, []string{"chat-plain"}},
	}
	for _, c := range cases {
		got, err := SelectScenarios(c.names)
		if err != nil {
			t.Fatalf("%v: %v", c.names, err)
		}
		var names []string
		for _, s := range got {
			names = append(names, s.Name)
		}
		if !slices.Equal(names, c.httpNames) || WantsCluster(c.names) != c.cluster {
			t.Errorf("%v: HTTP scenarios %v, cluster %v; want %v, %v", c.names, names, WantsCluster(c.names), c.httpNames, c.cluster)
		}
	}
	if _, err := ScenarioByName(ClusterScenario); err == nil || !strings.Contains(err.Error(), "no HTTP request") {
		t.Errorf("ScenarioByName(cluster) = %v, want an error saying it sends no HTTP request", err)
	}
	if _, err := SelectScenarios([]string{"clustr"}); err == nil || !strings.Contains(err.Error(), ", cluster)") {
		t.Errorf("an unknown scenario's error %v does not list the cluster scenario", err)
	}
}

func TestClusterFlags(t *testing.T) {
	cases := []struct {
		args []string
		want clusterbench.Config
		err  string
	}{
		{nil, clusterbench.Config{Nodes: 3, Shards: 16, Accounts: 1024, InFlight: []int{1, 64, 1024}, Rates: []int{250, 1000}, Plain: true, Kills: 5, KillInFlight: 64}, ""},
		{[]string{"--cluster-in-flight", "8, 16", "--cluster-shards", "8", "--cluster-kills", "0", "--cluster-rates", "none", "--cluster-plain=false"},
			clusterbench.Config{Nodes: 3, Shards: 8, Accounts: 1024, InFlight: []int{8, 16}, Rates: []int{-1}, Kills: -1, KillInFlight: 64}, ""},
		{[]string{"--cluster-rates", "500"},
			clusterbench.Config{Nodes: 3, Shards: 16, Accounts: 1024, InFlight: []int{1, 64, 1024}, Rates: []int{500}, Plain: true, Kills: 5, KillInFlight: 64}, ""},
		{[]string{"--cluster-rates", "-5"}, clusterbench.Config{}, `--cluster-rates: "-5" is not a positive count`},
		{[]string{"--cluster-in-flight", "8,x"}, clusterbench.Config{}, `--cluster-in-flight: "x" is not a positive count`},
		{[]string{"--cluster-in-flight", "0"}, clusterbench.Config{}, `--cluster-in-flight: "0" is not a positive count`},
		{[]string{"--cluster-shards", "0"}, clusterbench.Config{}, "--cluster-shards must be at least 1"},
		{[]string{"--cluster-kills", "-1"}, clusterbench.Config{}, "--cluster-kills must not be negative"},
	}
	for _, c := range cases {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var f ClusterFlags
		f.Register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := f.Check()
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%v: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		got := f.Config()
		if err != nil || got.Nodes != c.want.Nodes || got.Shards != c.want.Shards || got.Accounts != c.want.Accounts ||
			!slices.Equal(got.InFlight, c.want.InFlight) || !slices.Equal(got.Rates, c.want.Rates) || got.Kills != c.want.Kills || got.Plain != c.want.Plain || got.KillInFlight != c.want.KillInFlight {
			t.Errorf("%v: %+v, %v; want %+v", c.args, got, err, c.want)
		}
	}
}

package main

import (
	"testing"

	"github.com/modelgate/modelgate/persistence"
)

// serve's full-disk guard is the operator's to size: flags, else the environment, in MiB;
// 0 keeps the store's defaults and -1 turns a guard off.
func TestServeConfigSizesTheDiskGuard(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want persistence.Options
	}{
		{name: "defaults", want: persistence.Options{}},
		{name: "flags", args: []string{"--min-free-mib", "256", "--ballast-mib", "32"},
			want: persistence.Options{MinFreeBytes: 256 << 20, BallastBytes: 32 << 20}},
		{name: "environment", env: map[string]string{"MODELGATE_MIN_FREE_MIB": "128", "MODELGATE_BALLAST_MIB": "-1"},
			want: persistence.Options{MinFreeBytes: 128 << 20, BallastBytes: -1}},
		{name: "a flag wins over the environment", env: map[string]string{"MODELGATE_MIN_FREE_MIB": "128"}, args: []string{"--min-free-mib", "-1"},
			want: persistence.Options{MinFreeBytes: -1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("MODELGATE_MIN_FREE_MIB", c.env["MODELGATE_MIN_FREE_MIB"])
			t.Setenv("MODELGATE_BALLAST_MIB", c.env["MODELGATE_BALLAST_MIB"])
			cfg, err := serveConfig(append([]string{"--config", "c.yaml"}, c.args...))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Store.MinFreeBytes != c.want.MinFreeBytes || cfg.Store.BallastBytes != c.want.BallastBytes || cfg.CatalogPath != "c.yaml" {
				t.Fatalf("store options %+v, catalog %q; want %+v", cfg.Store, cfg.CatalogPath, c.want)
			}
		})
	}
	if _, err := serveConfig([]string{"--min-free-mib", "lots", "--config", "c.yaml"}); err == nil {
		t.Fatal("a size that is no number was accepted")
	}
}

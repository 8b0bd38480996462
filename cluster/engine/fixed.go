package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrSettingsChanged is New's error for a data directory made with other engine settings
// that the engine fixes for its life (ExecShards, LogDBShards).
var ErrSettingsChanged = errors.New("engine settings changed")

// fixedSettings are the settings the engine records in its data directory on first start
// and refuses to start with others (its own check then fails with a panic, so the node
// checks first, against its own record of them).
type fixedSettings struct {
	ExecShards  uint64 `json:"exec_shards"`
	LogDBShards uint64 `json:"logdb_shards"`
}

// legacyFixed are the settings of data directories made before the node kept its record:
// the engine's defaults then.
var legacyFixed = fixedSettings{ExecShards: 16, LogDBShards: 4}

func fixedPath(cfg Config) string { return filepath.Join(cfg.raftDir(), "fixed-settings.json") }

// withFixed gives cfg the fixed settings its data directory was made with, where cfg leaves
// them unset; one set to another value is ErrSettingsChanged. known is false for a fresh
// directory (New records the settings once the engine has started).
func withFixed(cfg Config) (_ Config, known bool, _ error) {
	rec, known, err := readFixed(cfg)
	if err != nil || !known {
		return cfg, known, err
	}
	for _, f := range []struct {
		name string
		set  *uint64
		made uint64
	}{{"ExecShards", &cfg.ExecShards, rec.ExecShards}, {"LogDBShards", &cfg.LogDBShards, rec.LogDBShards}} {
		switch {
		case *f.set == 0:
			*f.set = f.made
		case *f.set != f.made:
			return cfg, true, fmt.Errorf("%w: %s was made with %s %d, not %d; start it with %d, or remove the node and join it again with an empty data directory",
				ErrSettingsChanged, cfg.raftDir(), f.name, f.made, *f.set, f.made)
		}
	}
	return cfg, true, nil
}

func readFixed(cfg Config) (fixedSettings, bool, error) {
	b, err := os.ReadFile(fixedPath(cfg))
	if errors.Is(err, os.ErrNotExist) {
		// No record: a fresh directory, or one made before the record was kept.
		if entries, err := os.ReadDir(filepath.Join(cfg.raftDir(), "nodehost")); err == nil && len(entries) > 0 {
			return legacyFixed, true, nil
		}
		return fixedSettings{}, false, nil
	}
	if err != nil {
		return fixedSettings{}, false, fmt.Errorf("engine settings record: %w", err)
	}
	var rec fixedSettings
	if err := json.Unmarshal(b, &rec); err != nil || rec.ExecShards == 0 || rec.LogDBShards == 0 {
		return fixedSettings{}, false, fmt.Errorf("engine settings record %s is damaged (%s); it should read {\"exec_shards\":N,\"logdb_shards\":M} with the values the node was made with",
			fixedPath(cfg), b)
	}
	return rec, true, nil
}

func writeFixed(cfg Config) error {
	b, _ := json.Marshal(fixedSettings{ExecShards: cfg.ExecShards, LogDBShards: cfg.LogDBShards})
	tmp := fixedPath(cfg) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("engine settings record: %w", err)
	}
	if err := os.Rename(tmp, fixedPath(cfg)); err != nil {
		return fmt.Errorf("engine settings record: %w", err)
	}
	return nil
}

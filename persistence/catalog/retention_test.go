package catalog

import "testing"

// server.log_retention_days: absent is 0 (keep forever); a negative or absurd one is named.
func TestLogRetentionDays(t *testing.T) {
	base := "models:\n  - id: m1\n    kind: chat\n    routes: [{id: r1, format: chat, base_url: 'http://x'}]\n"
	for _, c := range []struct {
		name, yaml, err string
		want            int
	}{
		{name: "absent: forever", yaml: base},
		{name: "90 days", yaml: "server: {log_retention_days: 90}\n" + base, want: 90},
		{name: "0 said", yaml: "server: {log_retention_days: 0}\n" + base},
		{name: "negative", yaml: "server: {log_retention_days: -1}\n" + base, err: "f.yaml: server.log_retention_days: must be 0 (keep forever) to 36500 days"},
		{name: "beyond a century", yaml: "server: {log_retention_days: 36501}\n" + base, err: "server.log_retention_days: must be 0"},
		{name: "not a number", yaml: "server: {log_retention_days: 1w}\n" + base, err: "log_retention_days"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if cat := parseCase(t, c.yaml, c.err); cat != nil && cat.Server.LogRetentionDays != c.want {
				t.Fatalf("log_retention_days = %d, want %d", cat.Server.LogRetentionDays, c.want)
			}
		})
	}
}

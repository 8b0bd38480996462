package engine

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/cluster/certs"
)

func TestANodeWithACertificateTheClusterCannotTrustIsRefusedAtStart(t *testing.T) {
	clusterDir, otherDir := t.TempDir(), t.TempDir()
	local := []string{"127.0.0.1", "localhost"}
	if _, err := certs.Generate(clusterDir, []certs.NodeSpec{{Name: "n1", Hosts: local}, {Name: "elsewhere", Hosts: []string{"10.9.9.9"}}}, certs.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := certs.Generate(otherDir, []certs.NodeSpec{{Name: "n2", Hosts: local}}, certs.Options{}); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(clusterDir, "ca.crt")
	in := func(dir, name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name      string
		cert, key string
		raftAddr  string
		want      string
	}{
		{"another CA", in(otherDir, "n2.crt"), in(otherDir, "n2.key"), "127.0.0.1:1",
			"node certificate " + in(otherDir, "n2.crt") + " is not signed by the cluster CA " + ca},
		{"another node's key", in(clusterDir, "n1.crt"), in(otherDir, "n2.key"), "127.0.0.1:1",
			"node key " + in(otherDir, "n2.key") + " does not fit node certificate " + in(clusterDir, "n1.crt") + ": tls: private key does not match public key"},
		{"not naming the raft host", in(clusterDir, "elsewhere.crt"), in(clusterDir, "elsewhere.key"), "127.0.0.1:1",
			"node certificate " + in(clusterDir, "elsewhere.crt") + " does not name 127.0.0.1, the host of RaftAddr 127.0.0.1:1: peers would refuse it"},
		{"missing key", in(clusterDir, "n1.crt"), in(clusterDir, "n9.key"), "127.0.0.1:1",
			"read node key " + in(clusterDir, "n9.key") + ": stat " + in(clusterDir, "n9.key") + ": no such file or directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dataDir := t.TempDir()
			_, err := New(Config{NodeID: 2, RaftAddr: tc.raftAddr, DataDir: dataDir, CAFile: ca, CertFile: tc.cert, KeyFile: tc.key})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant %s", err, tc.want)
			}
			if entries, _ := os.ReadDir(dataDir); len(entries) != 0 {
				t.Errorf("a refused node wrote %d entries in its data directory", len(entries))
			}
		})
	}
}

func TestAClientWithoutACertificateCannotTalkToARaftPort(t *testing.T) {
	c := newTestCluster(t, 1, 1)
	cfg := c.cfgs[1]
	caPEM, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	conn, err := tls.Dial("tcp", cfg.RaftAddr, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	if err != nil {
		// TLS 1.2 would fail here already; either way no session is made.
		if !strings.Contains(err.Error(), "certificate required") {
			t.Fatalf("dial: %v, want the server asking for a certificate", err)
		}
		return
	}
	defer conn.Close()
	// In TLS 1.3 the server checks the client's certificate after the client's side of the
	// handshake; its refusal arrives as an alert on the first read.
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	if err == nil || !strings.Contains(err.Error(), "tls: certificate required") {
		t.Fatalf("read = %v, want remote error: tls: certificate required", err)
	}
}

func TestConfigIsValidatedWithClearErrors(t *testing.T) {
	good := Config{NodeID: 1, RaftAddr: "127.0.0.1:7001", DataDir: "d", CAFile: "ca", CertFile: "c", KeyFile: "k"}
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"good", func(*Config) {}, ""},
		{"node id", func(c *Config) { c.NodeID = 0 }, "engine config: NodeID must be > 0"},
		{"addr", func(c *Config) { c.RaftAddr = "localhost" }, `engine config: RaftAddr "localhost" is not host:port`},
		{"port", func(c *Config) { c.RaftAddr = "localhost:x" }, `engine config: RaftAddr "localhost:x" has no valid port`},
		{"data dir", func(c *Config) { c.DataDir = "" }, "engine config: DataDir is required"},
		{"tls", func(c *Config) { c.CAFile, c.KeyFile = "", "" },
			"engine config: CAFile is required (node-to-node traffic is mutual TLS)\nengine config: KeyFile is required (node-to-node traffic is mutual TLS)"},
		{"plain TCP without certificates", func(c *Config) { c.PlainTCPForMeasurement, c.CAFile, c.CertFile, c.KeyFile = true, "", "", "" }, ""},
		{"plain TCP with a certificate", func(c *Config) { c.PlainTCPForMeasurement, c.CAFile, c.KeyFile = true, "", "" },
			"engine config: CertFile is set but PlainTCPForMeasurement turns TLS off"},
		{"ticks", func(c *Config) { c.ElectionRTT, c.HeartbeatRTT = 4, 2 }, "engine config: ElectionRTT (4) must be more than twice HeartbeatRTT (2)"},
		{"compaction", func(c *Config) { c.SnapshotEntries, c.CompactionOverhead = 10, 20 }, "engine config: CompactionOverhead (20) must not exceed SnapshotEntries (10)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			err := c.withDefaults().Validate()
			if got := errString(err); got != tc.want {
				t.Fatalf("err = %q, want %q", got, tc.want)
			}
		})
	}
	d := Config{}.withDefaults()
	if d.RTTMillisecond != 10 || d.ElectionRTT != 20 || d.HeartbeatRTT != 2 || d.SnapshotEntries != 10000 || d.CompactionOverhead != 5000 || d.LogDBShards != 1 || d.ExecShards != 4 {
		t.Errorf("defaults %+v", d)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// The engine fixes ExecShards and LogDBShards for a data directory's life: a node started
// with others is refused with ErrSettingsChanged naming the setting, and its directory
// still starts with the settings it was made with. A directory without the node's record
// (made before it was kept) has the engine's old defaults, 16 and 4.
func TestANodeStartedWithOtherFixedEngineSettingsIsRefusedAndItsDataKept(t *testing.T) {
	c := newTestCluster(t, 1, 2)
	c.leader(2, 10*time.Second)
	c.stop(1)
	made := c.cfgs[1] // testEngine: LogDBShards 1, ExecShards the default 4
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"ExecShards", func(cfg *Config) { cfg.ExecShards = 2 }, "made with ExecShards 4, not 2"},
		{"LogDBShards", func(cfg *Config) { cfg.LogDBShards = 2 }, "made with LogDBShards 1, not 2"},
		{"no record: the old defaults", func(cfg *Config) {
			if err := os.Remove(fixedPath(*cfg)); err != nil {
				t.Fatal(err)
			}
		}, "made with LogDBShards 4, not 1"},
	} {
		cfg := made
		tc.edit(&cfg)
		_, err := New(cfg)
		if !errors.Is(err, ErrSettingsChanged) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrSettingsChanged saying %q", tc.name, err, tc.want)
		}
	}
	if err := writeFixed(made.withDefaults()); err != nil {
		t.Fatal(err)
	}
	c.start(1)
	if got := c.leader(2, 10*time.Second); got != 1 {
		t.Fatalf("leader after restart = %d", got)
	}
}

package certs

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestGenerateWritesAChainThatVerifies(t *testing.T) {
	dir := t.TempDir()
	res, err := Generate(dir, []NodeSpec{
		{Name: "n1", Hosts: []string{"127.0.0.1", "localhost"}},
		{Name: "n2", Hosts: []string{"10.0.0.2", "n2.cluster.internal"}},
	}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if res.CAReused {
		t.Error("CAReused = true in an empty directory")
	}
	wantWritten := []string{"ca.key", "ca.crt", "n1.key", "n1.crt", "n2.key", "n2.crt"}
	for i := range wantWritten {
		wantWritten[i] = filepath.Join(dir, wantWritten[i])
	}
	if !slices.Equal(res.Written, wantWritten) {
		t.Errorf("Written = %v, want %v", res.Written, wantWritten)
	}
	ca, err := readCert(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if !ca.IsCA || ca.Subject.CommonName != "modelgate cluster CA" || !ca.NotAfter.Equal(now.Add(CAValidity)) {
		t.Errorf("CA: IsCA %v, CN %q, NotAfter %v", ca.IsCA, ca.Subject.CommonName, ca.NotAfter)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)

	tests := []struct {
		name   string
		ips    []string
		dns    []string
		verify string // a host the chain must verify for
	}{
		{"n1", []string{"127.0.0.1"}, []string{"localhost"}, "127.0.0.1"},
		{"n2", []string{"10.0.0.2"}, []string{"n2.cluster.internal"}, "n2.cluster.internal"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pair, err := tls.LoadX509KeyPair(filepath.Join(dir, tc.name+".crt"), filepath.Join(dir, tc.name+".key"))
			if err != nil {
				t.Fatal(err)
			}
			leaf, _ := x509.ParseCertificate(pair.Certificate[0])
			if leaf.Subject.CommonName != tc.name {
				t.Errorf("CN = %q, want %q", leaf.Subject.CommonName, tc.name)
			}
			var ips []string
			for _, ip := range leaf.IPAddresses {
				ips = append(ips, ip.String())
			}
			if !slices.Equal(ips, tc.ips) || !slices.Equal(leaf.DNSNames, tc.dns) {
				t.Errorf("SANs = %v %v, want %v %v", ips, leaf.DNSNames, tc.ips, tc.dns)
			}
			if !leaf.NotAfter.Equal(now.Add(NodeValidity)) || !leaf.NotBefore.Equal(now.Add(-backdate)) {
				t.Errorf("validity %v – %v", leaf.NotBefore, leaf.NotAfter)
			}
			for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
				if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: tc.verify, CurrentTime: now,
					KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
					t.Errorf("verify for usage %v: %v", usage, err)
				}
			}
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now.Add(NodeValidity + time.Hour)}); err == nil {
				t.Error("verified after its validity")
			}
		})
	}
}

func TestGenerateFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	if _, err := Generate(dir, []NodeSpec{{Name: "n1", Hosts: []string{"127.0.0.1"}}}, Options{Now: now}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{
		".": os.ModeDir | 0o700, "ca.crt": 0o644, "ca.key": 0o600, "n1.crt": 0o644, "n1.key": 0o600,
	} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode(), want)
		}
	}
}

func TestGenerateRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	n1 := []NodeSpec{{Name: "n1", Hosts: []string{"127.0.0.1"}}}
	if _, err := Generate(dir, n1, Options{Now: now}); err != nil {
		t.Fatal(err)
	}
	before := readAll(t, dir)

	_, err := Generate(dir, []NodeSpec{{Name: "n2", Hosts: []string{"127.0.0.2"}}, n1[0]}, Options{Now: now})
	want := filepath.Join(dir, "n1.crt") + " exists: refusing to overwrite it (move it away, or overwrite)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if after := readAll(t, dir); !mapsEqual(before, after) {
		t.Error("a refused Generate changed the directory")
	}

	// The CA alone left behind is not a pair: refused, nothing touched.
	os.Remove(filepath.Join(dir, "ca.key"))
	_, err = Generate(dir, []NodeSpec{{Name: "n3", Hosts: []string{"127.0.0.3"}}}, Options{Now: now})
	if err == nil || !strings.Contains(err.Error(), "come as a pair") {
		t.Fatalf("err = %v, want the pair refusal", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "n3.crt")); err == nil {
		t.Error("n3.crt written after a refusal")
	}

	// Overwrite replaces everything, with a new CA.
	res, err := Generate(dir, n1, Options{Now: now, Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.CAReused || len(res.Written) != 4 {
		t.Errorf("overwrite: %+v", res)
	}
	if string(readAll(t, dir)["ca.crt"]) == string(before["ca.crt"]) {
		t.Error("overwrite kept the old CA")
	}
}

func TestGenerateReusesTheDirectorysCA(t *testing.T) {
	dir := t.TempDir()
	if _, err := Generate(dir, []NodeSpec{{Name: "n1", Hosts: []string{"127.0.0.1"}}}, Options{Now: now}); err != nil {
		t.Fatal(err)
	}
	caBefore := readAll(t, dir)["ca.crt"]
	res, err := Generate(dir, []NodeSpec{{Name: "n4", Hosts: []string{"127.0.0.4"}}}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !res.CAReused || !slices.Equal(res.Written, []string{filepath.Join(dir, "n4.key"), filepath.Join(dir, "n4.crt")}) {
		t.Errorf("result %+v", res)
	}
	if string(readAll(t, dir)["ca.crt"]) != string(caBefore) {
		t.Error("ca.crt changed")
	}
	ca, _ := readCert(filepath.Join(dir, "ca.crt"))
	leaf, _ := readCert(filepath.Join(dir, "n4.crt"))
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("n4 does not chain to the reused CA: %v", err)
	}
	if !leaf.IPAddresses[0].Equal(net.ParseIP("127.0.0.4")) {
		t.Errorf("SAN %v", leaf.IPAddresses)
	}
}

func TestGenerateRefusesBadSpecs(t *testing.T) {
	tests := []struct {
		name  string
		nodes []NodeSpec
		want  string
	}{
		{"no nodes", nil, "name at least one node"},
		{"bad name", []NodeSpec{{Name: "../n1", Hosts: []string{"h"}}}, `node name "../n1": use letters, digits, '.', '_' and '-' (not "ca"), up to 63`},
		{"ca", []NodeSpec{{Name: "ca", Hosts: []string{"h"}}}, `node name "ca": use letters, digits, '.', '_' and '-' (not "ca"), up to 63`},
		{"no hosts", []NodeSpec{{Name: "n1"}}, "node n1: give at least one host name or IP peers reach it by"},
		{"empty host", []NodeSpec{{Name: "n1", Hosts: []string{""}}}, "node n1: an empty host name"},
		{"twice", []NodeSpec{{Name: "n1", Hosts: []string{"a"}}, {Name: "n1", Hosts: []string{"b"}}}, "node n1 is named twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := Generate(dir, tc.nodes, Options{Now: now})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("wrote %d files", len(entries))
			}
		})
	}
}

func readAll(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func mapsEqual(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if string(b[k]) != string(v) {
			return false
		}
	}
	return true
}

package engine

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// checkNodeCert refuses, before the engine starts, a node whose certificate peers would
// refuse: not from the cluster CA, a key of another certificate, expired, without the
// usages mutual TLS needs, or not naming the host peers dial (RaftAddr's). The engine's own
// failure would come later and far away, as handshake errors on the other nodes.
func checkNodeCert(c Config, now time.Time) error {
	caPEM, err := os.ReadFile(c.CAFile)
	if err != nil {
		return fmt.Errorf("read cluster CA %s: %w", c.CAFile, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return fmt.Errorf("cluster CA %s holds no PEM certificate", c.CAFile)
	}
	if _, err := os.Stat(c.CertFile); err != nil {
		return fmt.Errorf("read node certificate %s: %w", c.CertFile, err)
	}
	if _, err := os.Stat(c.KeyFile); err != nil {
		return fmt.Errorf("read node key %s: %w", c.KeyFile, err)
	}
	pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return fmt.Errorf("node key %s does not fit node certificate %s: %w", c.KeyFile, c.CertFile, err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return fmt.Errorf("node certificate %s: %w", c.CertFile, err)
	}
	inter := x509.NewCertPool()
	for _, der := range pair.Certificate[1:] {
		if ic, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(ic)
		}
	}
	// A chain is accepted when it allows any one listed usage, so each is asked for alone:
	// a node is a server to its peers and a client of them.
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{usage}})
		var unknown x509.UnknownAuthorityError
		var invalid x509.CertificateInvalidError
		switch {
		case err == nil:
		case errors.As(err, &unknown):
			return fmt.Errorf("node certificate %s is not signed by the cluster CA %s", c.CertFile, c.CAFile)
		case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
			return fmt.Errorf("node certificate %s is valid from %s to %s, not now", c.CertFile,
				leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339))
		case errors.As(err, &invalid) && invalid.Reason == x509.IncompatibleUsage:
			return fmt.Errorf("node certificate %s lacks the %s usage mutual TLS needs", c.CertFile, usageName(usage))
		default:
			return fmt.Errorf("node certificate %s is not valid for the cluster CA %s: %w", c.CertFile, c.CAFile, err)
		}
	}
	host, _, _ := net.SplitHostPort(c.RaftAddr)
	if err := leaf.VerifyHostname(host); err != nil {
		return fmt.Errorf("node certificate %s does not name %s, the host of RaftAddr %s: peers would refuse it", c.CertFile, host, c.RaftAddr)
	}
	return nil
}

func usageName(u x509.ExtKeyUsage) string {
	if u == x509.ExtKeyUsageServerAuth {
		return "server auth"
	}
	return "client auth"
}

// CheckCerts is New's check of cfg and its certificates, without starting anything: what
// `modelgate cluster init` and `join` run before writing a node's cluster file, and a
// cluster node before it touches its data directory.
func CheckCerts(cfg Config) error {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	return checkNodeCert(cfg, time.Now())
}

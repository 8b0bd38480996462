// Package certs makes the cluster's mutual-TLS material for a first setup: a CA and one
// certificate per node, as PEM files an operator copies to each node (docs/cluster.md).
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// Lifetimes: the CA outlives many node certificates, which are renewed by making new ones.
const (
	CAValidity   = 10 * 365 * 24 * time.Hour
	NodeValidity = 2 * 365 * 24 * time.Hour
	// backdate covers clocks a little behind the machine that made the certificate.
	backdate = time.Hour
)

// File names in the output directory: ca.crt and ca.key, and NAME.crt and NAME.key per node.
const (
	CACertFile = "ca.crt"
	CAKeyFile  = "ca.key"
)

// NodeCertFile and NodeKeyFile are the file names of node name's certificate and key.
func NodeCertFile(name string) string { return name + ".crt" }
func NodeKeyFile(name string) string  { return name + ".key" }

// NodeSpec is one node certificate to make: CN = Name, and a SAN per host (an IP or a DNS
// name) that peers dial it by.
type NodeSpec struct {
	Name  string
	Hosts []string
}

var nodeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// Validate says what is wrong with s.
func (s NodeSpec) Validate() error {
	if !nodeName.MatchString(s.Name) || s.Name == "ca" {
		return fmt.Errorf("node name %q: use letters, digits, '.', '_' and '-' (not \"ca\"), up to 63", s.Name)
	}
	if len(s.Hosts) == 0 {
		return fmt.Errorf("node %s: give at least one host name or IP peers reach it by", s.Name)
	}
	for _, h := range s.Hosts {
		if h == "" {
			return fmt.Errorf("node %s: an empty host name", s.Name)
		}
	}
	return nil
}

// CA is a cluster CA able to sign node certificates.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewCA makes a CA key (ECDSA P-256) and its self-signed certificate, valid from now.
func NewCA(now time.Time) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "modelgate cluster CA"},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, key: key}, nil
}

// LoadCA reads ca.crt and ca.key from dir, to sign more node certificates with it.
func LoadCA(dir string) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	cert, err := readCert(certPath)
	if err != nil {
		return nil, err
	}
	key, err := readKey(keyPath)
	if err != nil {
		return nil, err
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("%s is not a CA certificate", certPath)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("CA key %s does not fit CA certificate %s", keyPath, certPath)
	}
	return &CA{Cert: cert, key: key}, nil
}

// Issue makes a node key and certificate signed by ca: CN the node's name, SANs its hosts,
// usable as a TLS server and client (each node is both to its peers).
func (ca *CA) Issue(spec NodeSpec, now time.Time) (cert *x509.Certificate, key *ecdsa.PrivateKey, err error) {
	if err := spec.Validate(); err != nil {
		return nil, nil, err
	}
	key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: spec.Name},
		NotBefore:    now.Add(-backdate),
		NotAfter:     now.Add(NodeValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range spec.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	cert, err = x509.ParseCertificate(der)
	return cert, key, err
}

// serialNumber is a random 128-bit serial, as RFC 5280 asks (unique per CA).
func serialNumber() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
}

func certPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func keyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func readCert(path string) (*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func readKey(path string) (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("%s holds no PEM key", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New(path + " is not an ECDSA key")
	}
	return ec, nil
}

package certs

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// MutualTLS is the configuration of node-to-node HTTP (the internal listener): the server
// asks every client for a certificate the cluster CA signed, the client checks the
// server's; both present the node's own certificate.
func MutualTLS(caFile, certFile, keyFile string) (server, client *tls.Config, err error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("internal listener: %w", err)
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, nil, fmt.Errorf("internal listener: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, nil, fmt.Errorf("internal listener: no certificate in %s", caFile)
	}
	server = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, MinVersion: tls.VersionTLS13}
	client = &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS13}
	return server, client, nil
}

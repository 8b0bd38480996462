package main

import (
	"errors"
	"flag"
	"os"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// tlsFlags adds serve's --tls-cert and --tls-key (defaults MODELGATE_TLS_CERT and
// MODELGATE_TLS_KEY) to fs; the function it returns, called after fs.Parse, is the pair
// they name (zero when neither is set: the catalog's server.tls applies).
func tlsFlags(fs *flag.FlagSet) func() (catalog.TLSFiles, error) {
	cert := fs.String("tls-cert", os.Getenv("MODELGATE_TLS_CERT"), "PEM certificate chain: serve HTTPS (HTTP/2, TLS 1.2+) with it; wins over the catalog's server.tls")
	key := fs.String("tls-key", os.Getenv("MODELGATE_TLS_KEY"), "PEM private key of --tls-cert")
	return func() (catalog.TLSFiles, error) {
		if (*cert == "") != (*key == "") {
			return catalog.TLSFiles{}, errors.New("--tls-cert and --tls-key (MODELGATE_TLS_CERT, MODELGATE_TLS_KEY) go together: give both or neither")
		}
		return catalog.TLSFiles{CertFile: *cert, KeyFile: *key}, nil
	}
}

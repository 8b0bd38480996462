package node

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"syscall"
)

// sideListener is a listener a node opens beside the API's (metrics, the admin plane): what
// it serves is the operator's, so it never shares the API's address, and is reachable only
// where the operator puts it.
type sideListener struct {
	name       string // what it serves, for messages: "metrics", "admin API"
	setting    string // how the operator moves it: "server.metrics_addr or --metrics-addr"
	configured string // the node's configuration (flag or environment); "" = not set
	inCatalog  string // the catalog's setting; "" = not set
	def, off   string // the default address; the word that turns it off
}

// open opens the address: the node's configuration first, then the catalog's, then the
// default. An address the operator chose must open, or the node does not start. The default
// is best effort: when it is taken (a second gateway on the same host) the node serves
// without it and says so, rather than refusing traffic for it. Nil: off, or not served.
func (s sideListener) open(logger *slog.Logger) (net.Listener, error) {
	addr, chosen := s.configured, s.configured != ""
	if !chosen {
		addr, chosen = s.inCatalog, s.inCatalog != ""
	}
	if !chosen {
		addr = s.def
	}
	if addr == s.off {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	switch {
	case err == nil:
		return ln, nil
	case chosen:
		return nil, fmt.Errorf("%s address %s: %w (set %s to another host:port, or off)", s.name, addr, err, s.setting)
	case errors.Is(err, syscall.EADDRINUSE):
		logger.Warn(s.name+" not served: the default "+s.name+" address is in use; set "+s.setting, "addr", addr)
		return nil, nil
	}
	return nil, fmt.Errorf("%s address %s: %w", s.name, addr, err)
}

// closeListeners closes those opened (a start that failed after opening them).
func closeListeners(lns ...net.Listener) {
	for _, ln := range lns {
		if ln != nil {
			ln.Close()
		}
	}
}

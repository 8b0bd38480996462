package node

import (
	"log/slog"
	"net"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// warnNoPublicURL says, at start, when a listener other machines can reach has no
// server.public_url: links in answers (image and video URLs) then carry the listen address
// (or, behind a trusted proxy, the host it forwards), and mail links the node's address,
// which may not be where clients reach the gateway. A request's Host is never used instead:
// a client could point them anywhere.
func warnNoPublicURL(cat *catalog.Catalog, addr net.Addr, logger *slog.Logger) {
	tcp, ok := addr.(*net.TCPAddr)
	if cat.Server.PublicURL != "" || !ok || tcp.IP.IsLoopback() {
		return
	}
	logger.Warn("no server.public_url: links in answers (image and video URLs) use the listen address or the host a trusted proxy forwards, and mail links (without auth.base_url) this node's address; set server.public_url to the address clients reach (docs/running.md)",
		"addr", addr.String())
}

package api

import (
	"net/http"

	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/peer"
)

// publicBase is the gateway's address for links in an answer (image url, video
// metadata.url): peer.PublicBase with server.public_url.
func publicBase(r *http.Request, cat *catalog.Catalog) string {
	return peer.PublicBase(r, cat.Server.PublicURL)
}

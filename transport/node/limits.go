package node

import (
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/api"
	"github.com/modelgate/modelgate/transport/edge"
)

// startEdge builds the public listener's edge (transport/edge): the catalog's bounds on slow
// and greedy clients, its refusals in the API's envelopes and in the metrics.
func (n *Node) startEdge() *edge.Guard {
	g := edge.New(edge.Config{
		Server:  func() *catalog.Server { return &n.Catalog.Load().Server },
		Refuse:  api.Refuse,
		Refused: n.Metrics.EdgeRefusals(),
		Logger:  n.cfg.Logger,
	})
	n.Metrics.BodyBytes(g.Budget().Held, g.BodyCap)
	return g
}

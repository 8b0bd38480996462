package api_test

import (
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// envelope is an error answer read from any of the gateway's envelopes (nodetest.Envelope).
type envelope = nodetest.Envelope

func readEnvelope(t *testing.T, raw []byte) envelope {
	t.Helper()
	e, err := nodetest.ReadEnvelope(raw)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

package api

import (
	"bytes"
	"fmt"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

// The test build's panic: upstream messages answers that carry PanicMarker make their
// decoder panic (testdata/panics). Installed before any test runs, so no request races it;
// production code has no switch for it.

// PanicMarker in an upstream messages answer makes this test build's decoder panic.
const PanicMarker = "modelgate-test-panic"

func init() {
	upstreamFormats[codec.FormatMessages] = panicky{upstreamFormats[codec.FormatMessages]}
}

// panicky is an upstream format whose decoders panic on PanicMarker. The panic value carries
// the data, as a careless bug would: the log must still not show it.
type panicky struct{ ir.UpstreamFormat }

func trip(data []byte) {
	if bytes.Contains(data, []byte(PanicMarker)) {
		panic(fmt.Sprintf("injected test panic on %s", data))
	}
}

func (p panicky) DecodeResponse(body []byte) (*ir.Response, error) {
	trip(body)
	return p.UpstreamFormat.DecodeResponse(body)
}

func (p panicky) NewStreamDecoder() ir.StreamDecoder {
	return &panickyDecoder{p.UpstreamFormat.NewStreamDecoder()}
}

// RewriteModel and RelayWhole are the same-format relay's own reading of an answer, which
// decodes none of it.
func (p panicky) RewriteModel(data []byte, model string) []byte {
	trip(data)
	return p.UpstreamFormat.(ir.ModelRewriter).RewriteModel(data, model)
}

func (p panicky) RelayWhole(body []byte, model string) ([]byte, codec.Usage) {
	trip(body)
	return p.UpstreamFormat.(ir.WholeRelayer).RelayWhole(body, model)
}

// ContentDelta is the format's own, as before the injection: it decodes nothing.
func (p panicky) ContentDelta(name, data []byte) bool {
	return p.UpstreamFormat.(ir.DeltaSkipper).ContentDelta(name, data)
}

type panickyDecoder struct{ ir.StreamDecoder }

func (d *panickyDecoder) Decode(name, data []byte) ([]ir.Event, bool, error) {
	trip(data)
	return d.StreamDecoder.Decode(name, data)
}

func (d *panickyDecoder) End() ([]ir.Event, *ir.Frame, bool) {
	if e, ok := d.StreamDecoder.(ir.EndingDecoder); ok {
		return e.End()
	}
	return nil, nil, false
}

package ir

import "github.com/modelgate/modelgate/codec"

// Capabilities a format may have beyond ClientFormat and UpstreamFormat, asked for with a type
// assertion.

// EndingDecoder is a StreamDecoder of a format whose answer is complete before its end
// marker: providers close the connection right after chat's finish_reason without
// data: [DONE], or after messages' stop_reason without message_stop.
type EndingDecoder interface {
	// End is called once when the stream stopped (end of file, a read error, an event that
	// does not decode) before Decode reported done. finished says the answer had finished:
	// then events complete it (the EvFinish its end marker would have brought) and marker is
	// that end marker, which a same-format relay sends in its place (nil if there is none).
	// Otherwise the answer is incomplete and the stream broke.
	End() (events []Event, marker *Frame, finished bool)
}

// FinishingDecoder is a stream decoder whose answer may end on any later frame: one of a
// format without an end marker (Gemini) that has reported its finish reason. A relay holds
// the frames from then on until the call is recorded, as it holds an end marker.
type FinishingDecoder interface {
	Finishing() bool
}

// ModelRewriter is implemented by a format whose answers are relayed as they are when the
// route speaks the client's format: RewriteModel names the client's model in a whole answer
// or in one stream event's data, wherever the format puts it, keeping every other byte.
type ModelRewriter interface {
	RewriteModel(data []byte, model string) []byte
}

// WholeRelayer is implemented by a format whose whole answers a same-format relay passes on:
// RelayWhole names the client's model in the answer, keeping every other byte, and reads its
// usage, in one scan and without decoding the answer (only the usage member is decoded). An
// answer that is not a JSON object comes back as it is, with no usage.
type WholeRelayer interface {
	RelayWhole(body []byte, model string) ([]byte, codec.Usage)
}

// DeltaSkipper is implemented by a format whose stream has events that carry only a piece of
// content (a text, reasoning or tool-argument delta): ContentDelta reports a well-formed one,
// its kind read as the format's decoder reads it. Once its client has the first byte, a
// same-format relay needs nothing from such a frame but its bytes, so it passes it without
// decoding it (the decoder state it would change only shapes content events, which that relay
// does not use).
type DeltaSkipper interface {
	ContentDelta(name, data []byte) bool
}

// Frame is one SSE event as a format writes it (Name empty for formats without event lines).
type Frame struct {
	Name string
	Data []byte
}

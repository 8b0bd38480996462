package simulator

import (
	"bytes"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// AWS event-stream framing, how Bedrock streams (InvokeModelWithResponseStream and
// ConverseStream): binary messages, each a prelude (total and header lengths, CRC32), typed
// headers, a JSON payload and a CRC32 of the whole. aws-sdk-go-v2's encoder writes them, so
// the framing and checksums are the ones AWS SDKs decode. An event carries
// :event-type/:content-type/:message-type "event"; a mid-stream error is an exception
// message, :exception-type instead of :event-type, after which the stream ends.

const eventStreamContentType = "application/vnd.amazon.eventstream"

// encodeEventMessage writes ev with the JSON payload data as one event-stream message. An
// encoder keeps buffers between messages, so each stream has its own.
func encodeEventMessage(enc *eventstream.Encoder, buf *bytes.Buffer, ev sseEvent, data []byte) error {
	var h eventstream.Headers
	if ev.exception {
		h.Set(":exception-type", eventstream.StringValue(ev.name))
		h.Set(":content-type", eventstream.StringValue("application/json"))
		h.Set(":message-type", eventstream.StringValue("exception"))
	} else {
		h.Set(":event-type", eventstream.StringValue(ev.name))
		h.Set(":content-type", eventstream.StringValue("application/json"))
		h.Set(":message-type", eventstream.StringValue("event"))
	}
	return enc.Encode(buf, eventstream.Message{Headers: h, Payload: data})
}

// padAlphabet is what Bedrock pads event payloads with.
const padAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// padding is the "p" member Bedrock adds to every event payload so that message sizes do not
// reveal the lengths of the tokens inside: a prefix of the alphabet whose length varies. Here
// it varies with the event's position, so streams stay deterministic.
func padding(i int) string {
	return padAlphabet[:1+(i*7)%len(padAlphabet)]
}

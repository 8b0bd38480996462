// Package conversion holds the golden conversion tests: every case under
// testdata/conversion runs through every client format (chat, messages, responses, gemini) × every
// upstream format (chat, messages, gemini, responses, and converse, which no client speaks),
// plain and streamed, chained the way the gateway chains the codecs (transport/api generate.go
// and convert.go), and is compared with hand-checked transcripts.
//
// A case directory holds:
//
//   - client.<client>.json: the same request as each client format writes it (the gemini one
//     without model and stream mode: they are in its URL path, and the harness sets them).
//   - upstream.<upstream>.json: the request the gateway must send to a route of that format
//     (the plain variant; the streamed one differs only by the format's stream fields), and
//     upstream.<upstream>.from-<client>.json where a client format cannot say the same thing.
//   - answer.<upstream>.json and answer.<upstream>.sse: the route's answer, plain and streamed.
//   - expect.<client>.json and expect.<client>.sse: what the client must get back, and
//     expect.<client>.from-<upstream>.<ext> where an upstream format cannot say the same thing.
//   - loss.<client>-<upstream>.txt: the fields the translation reports as dropped (ir.Loss),
//     one per line; no file means nothing may be dropped.
//   - notes.md: why each override exists.
//
// answer.converse.* say what answer.messages.* say, in the Converse API's shapes; the stream is
// a ConverseStream as transport/upstream hands it to the codec: one SSE event per event-stream
// frame, named by its :event-type, its data the frame's payload (with the "p" padding Bedrock
// adds). The converse route's model is a Claude id, so Claude's additional fields are exercised.
//
// Ids, timestamps and created fields vary between runs and are compared as placeholders
// (msg_<1>, <call-1>, <time>); JSON is compared canonically and streams frame by frame.
// `go test ./codec/conversion -update` rewrites upstream.*, expect.* and loss.* from the
// codecs' current behaviour; every rewritten file must be reviewed against the providers' API
// references before it is kept. answer.* files are inputs and are never rewritten.
//
// Same-format pairs run through IR too: the gateway relays them verbatim unless the model
// needs inline reasoning split, but a codec must round-trip its own format either way.
package conversion

package upstream

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/modelgate/modelgate/codec/messages"
	"github.com/modelgate/modelgate/codec/sse"
)

// A Bedrock InvokeModel stream costs the messages stream's decoding plus the event-stream
// reading in front of it. These benchmarks state both per chunk, on a stream of text deltas
// (the bulk of every answer):
//
//	go test ./transport/upstream -run - -bench 'Stream' -benchmem
//
// BenchmarkBedrockEventStreamToSSE is the framing alone, BenchmarkMessagesSSEDecode the SSE
// reading and the messages decoder a direct Anthropic route pays, and
// BenchmarkBedrockStreamDecode the two together, which is what a Bedrock route pays.

const benchChunks = 256

func benchEvents() []string {
	evs := []string{`{"type":"message_start","message":{"id":"msg_bdrk_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`}
	for range benchChunks {
		evs = append(evs, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The quick brown fox jumps over the lazy dog. "}}`)
	}
	return append(evs, `{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2560}}`,
		`{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":25,"outputTokenCount":2560,"invocationLatency":4100,"firstByteLatency":300}}`)
}

func benchEventStream(b *testing.B) []byte {
	var msgs []eventstream.Message
	for _, e := range benchEvents() {
		msgs = append(msgs, chunkMsg(e))
	}
	return frames(b, msgs...)
}

func benchSSE() []byte {
	var s strings.Builder
	for _, e := range benchEvents() {
		typ := e[len(`{"type":"`):]
		typ = typ[:strings.IndexByte(typ, '"')]
		s.WriteString("event: " + typ + "\ndata: " + e + "\n\n")
	}
	return []byte(s.String())
}

func decodeMessagesSSE(b *testing.B, r io.Reader) {
	rd := sse.NewReader(r)
	dec := messages.Format.NewStreamDecoder()
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := dec.Decode(ev.Name, ev.Data); err != nil {
			b.Fatal(err)
		}
	}
}

func reportPerChunk(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(benchEvents())), "ns/chunk")
}

func BenchmarkBedrockEventStreamToSSE(b *testing.B) {
	in := benchEventStream(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := io.Copy(io.Discard, newEventStreamSSE(io.NopCloser(bytes.NewReader(in)), true)); err != nil {
			b.Fatal(err)
		}
	}
	reportPerChunk(b)
}

func BenchmarkMessagesSSEDecode(b *testing.B) {
	in := benchSSE()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		decodeMessagesSSE(b, bytes.NewReader(in))
	}
	reportPerChunk(b)
}

func BenchmarkBedrockStreamDecode(b *testing.B) {
	in := benchEventStream(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		decodeMessagesSSE(b, newEventStreamSSE(io.NopCloser(bytes.NewReader(in)), true))
	}
	reportPerChunk(b)
}

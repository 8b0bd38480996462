package bench

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/messages"
	"github.com/modelgate/modelgate/codec/sse"
)

// discard is a client that takes every frame.
type discard struct{}

func (discard) Write(string, []byte) error { return nil }

type frame struct{ name, data []byte }

// transcript reads a stream fixture into frames, so the benchmark measures conversion only.
func transcript(b *testing.B, path string) []frame {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	rd := sse.NewReader(f)
	var out []frame
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, frame{append([]byte(nil), ev.Name...), append([]byte(nil), ev.Data...)})
	}
}

// BenchmarkStreamConversion converts a whole upstream stream per op; chunk-ns is the cost per
// upstream chunk (decode into IR, encode for the client).
//
//	go test -run '^$' -bench StreamConversion -benchmem ./bench/
func BenchmarkStreamConversion(b *testing.B) {
	cases := []struct {
		name    string
		fixture string
		up      ir.UpstreamFormat
		client  ir.ClientFormat
	}{
		{"messages-to-chat/text", "../testdata/sim/messages_stream_text.txt", messages.Format, chat.Format},
		{"messages-to-chat/tools", "../testdata/sim/messages_stream_tools.txt", messages.Format, chat.Format},
		{"chat-to-messages/text", "../testdata/sim/chat_stream_text.txt", chat.Format, messages.Format},
		{"chat-to-messages/tools", "../testdata/sim/chat_stream_tools.txt", chat.Format, messages.Format},
	}
	for _, c := range cases {
		frames := transcript(b, c.fixture)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			req := &ir.Request{IncludeUsage: true}
			for i := 0; i < b.N; i++ {
				dec := c.up.NewStreamDecoder()
				enc := c.client.NewStreamEncoder(discard{}, req, "client-model")
				for _, f := range frames {
					evs, _, err := dec.Decode(f.name, f.data)
					if err != nil && !strings.Contains(c.name, "error") {
						b.Fatal(err)
					}
					for _, e := range evs {
						enc.Encode(e)
					}
				}
				enc.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(frames)), "chunk-ns")
		})
	}
}

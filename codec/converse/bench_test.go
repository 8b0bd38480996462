package converse

import (
	"testing"
)

// BenchmarkStreamDecode decodes a whole ConverseStream answer per op, text only and with
// reasoning and tool calls (testdata/converse), and reports the cost per upstream event
// (ns/event) and the heap allocations per event.
//
//	go test -run '^$' -bench StreamDecode -benchmem ./codec/converse/
func BenchmarkStreamDecode(b *testing.B) {
	for _, name := range []string{"stream_text.sse", "stream_thinking_tools.sse"} {
		fs := readFrames(b, readFixture(b, name))
		names, datas := make([][]byte, len(fs)), make([][]byte, len(fs))
		for i, f := range fs {
			names[i], datas[i] = []byte(f.name), []byte(f.data)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := Format.NewStreamDecoder()
				for i := range names {
					if _, _, err := d.Decode(names[i], datas[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			events := float64(b.N * len(names))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
		})
	}
}

// BenchmarkTextDelta is the steady state of a streamed answer: one text delta decoded again and
// again on a started stream. allocs/op is the heap allocations of one delta, which the byte-level
// reading keeps at 0 (its strings are carved from shared blocks).
func BenchmarkTextDelta(b *testing.B) {
	d := Format.NewStreamDecoder()
	name, data := []byte(evContentBlockDelta), []byte(`{"contentBlockIndex":0,"delta":{"text":" fox jumps over"},"p":"abcdefghijklmnopqrstuvwxyzABCDEFG"}`)
	if _, _, err := d.Decode([]byte(evMessageStart), []byte(`{"role":"assistant"}`)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := d.Decode(name, data); err != nil {
			b.Fatal(err)
		}
	}
}

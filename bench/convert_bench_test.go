package bench

import (
	"io"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/gemini"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/messages"
	"github.com/modelgate/modelgate/codec/responses"
	"github.com/modelgate/modelgate/codec/sse"
)

// processCPU is the CPU time the process has used (user and system, all threads): on a
// machine shared with other work, the cost of a chunk is its CPU time, not the wall time a
// descheduled benchmark also counts. The garbage collector's work is in it.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

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

// streamFormat is one wire format as the benchmark drives it: its name (the transcript's
// prefix) and its two roles.
type streamFormat struct {
	name     string
	upstream ir.UpstreamFormat
	client   ir.ClientFormat
}

var streamFormats = []streamFormat{
	{"chat", chat.Format, chat.Format},
	{"messages", messages.Format, messages.Format},
	{"responses", responses.Format, responses.Format},
	{"gemini", gemini.Format, gemini.Format},
}

// BenchmarkStreamConversion converts a whole upstream stream per op, for every upstream format
// and client format the gateway pairs, with a text and a tools transcript each
// (testdata/sim/<upstream>_stream_{text,tools}.txt). chunk-ns is the cost per upstream chunk
// (decode into IR, encode for the client) in wall time, cpu-ns/chunk in CPU time, and
// allocs/chunk the heap allocations per chunk.
//
//	go test -run '^$' -bench StreamConversion -benchtime 2000x ./bench/
func BenchmarkStreamConversion(b *testing.B) {
	for _, up := range streamFormats {
		for _, kind := range []string{"text", "tools"} {
			frames := transcript(b, "../testdata/sim/"+up.name+"_stream_"+kind+".txt")
			for _, client := range streamFormats {
				b.Run(up.name+"-to-"+client.name+"/"+kind, func(b *testing.B) {
					benchConversion(b, frames, up.upstream, client.client)
				})
			}
		}
	}
}

func benchConversion(b *testing.B, frames []frame, up ir.UpstreamFormat, client ir.ClientFormat) {
	req := &ir.Request{IncludeUsage: true}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dec := up.NewStreamDecoder()
		enc := client.NewStreamEncoder(discard{}, req, "client-model")
		for _, f := range frames {
			convert(b, dec, enc, f)
		}
		enc.Close()
	}
	b.StopTimer()
	cpu := processCPU() - cpu0
	runtime.ReadMemStats(&ms1)
	chunks := float64(b.N * len(frames))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/chunks, "chunk-ns")
	b.ReportMetric(float64(cpu.Nanoseconds())/chunks, "cpu-ns/chunk")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/chunks, "allocs/chunk")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/chunks, "B/chunk")
}

// convert decodes one upstream frame and encodes its events for the client.
func convert(b *testing.B, dec ir.StreamDecoder, enc ir.StreamEncoder, f frame) {
	evs, _, err := dec.Decode(f.name, f.data)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range evs {
		if err := enc.Encode(e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTextDelta is the steady state of a streamed answer: one upstream text delta
// decoded and encoded for the client, again and again on one stream (the transcript's last
// chunk that gives only text, after the chunks before it). allocs/op is the heap allocations
// of one text delta, which the hot path keeps at 0.
//
//	go test -run '^$' -bench TextDelta -benchmem ./bench/
func BenchmarkTextDelta(b *testing.B) {
	for _, up := range streamFormats {
		frames := transcript(b, "../testdata/sim/"+up.name+"_stream_text.txt")
		delta := lastTextDelta(b, frames, up.upstream)
		for _, client := range streamFormats {
			b.Run(up.name+"-to-"+client.name, func(b *testing.B) {
				dec := up.upstream.NewStreamDecoder()
				enc := client.client.NewStreamEncoder(discard{}, &ir.Request{IncludeUsage: true}, "client-model")
				for _, f := range frames[:delta+1] {
					convert(b, dec, enc, f)
				}
				b.ReportAllocs()
				cpu0 := processCPU()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					convert(b, dec, enc, frames[delta])
				}
				b.StopTimer()
				b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// lastTextDelta is the index of the last frame that decodes to text events only.
func lastTextDelta(b *testing.B, frames []frame, up ir.UpstreamFormat) int {
	dec := up.NewStreamDecoder()
	at := -1
	for i, f := range frames {
		evs, _, err := dec.Decode(f.name, f.data)
		if err != nil {
			b.Fatal(err)
		}
		text := len(evs) > 0
		for _, e := range evs {
			text = text && e.Kind == ir.EvText
		}
		if text {
			at = i
		}
	}
	if at < 0 {
		b.Fatal("no text delta in the transcript")
	}
	return at
}

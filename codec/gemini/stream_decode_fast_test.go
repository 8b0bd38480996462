package gemini

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// FuzzStreamDecoderFastMatchesSlow: the byte-level reading gives the events, the errors and
// the state (through the later chunks and the end) that encoding/json's reading gives, chunk
// by chunk (one a line).
func FuzzStreamDecoderFastMatchesSlow(f *testing.F) {
	for _, s := range []string{
		`{"candidates":[{"content":{"parts":[{"text":"Sim \u00e9","thought":true}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":10,"totalTokenCount":10},"modelVersion":"g","responseId":"r1"}` + "\n" +
			`{"candidates":[{"content":{"parts":[{"text":"Hi","thoughtSignature":"c2ln"},{"text":"","thought":true,"thoughtSignature":"dA"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":3,"thoughtsTokenCount":2,"cachedContentTokenCount":4}}` + "\n" +
			`{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":9,"totalTokenCount":13,"promptTokensDetails":[{"modality":"TEXT","tokenCount":4}]}}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}]},"index":0}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_weather","args":{"city":"sample"}}},{"functionCall":{"id":"c1","name":"clock","args":{ "tz" : "x y", "tags":[ ], "n":1.50 }},"thoughtSignature":"c2ln"},{"functionCall":{"name":"ping","args":{}}}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":4,"totalTokenCount":4}}` + "\n" +
			`{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":9,"totalTokenCount":13}}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":[1]},"text":"t","thought":true},{"functionCall":{}},{"functionCall":{"id":"","args":null}},{"functionCall":null,"text":"x"}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true}},{"functionCall":{"partialArgs":[{"jsonPath":"$.a","stringValue":"x"}]}},{"functionCall":{"name":"g","args":{"b":2}}}]}}]}` + "\n" +
			`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"h","args":"s","Args":{}}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"a","Text":"b"}]},"index":0},{"index":1}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"a","thought":1}]}}],"createTime":"2025"}`,
		`{"error":{"code":503,"message":"busy","status":"UNAVAILABLE"}}`,
		`{"promptFeedback":{"blockReason":"SAFETY"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, slow := &streamDecoder{}, &streamDecoder{}
		for _, chunk := range bytes.Split(data, []byte("\n")) {
			var got, want irtest.Decoding
			got.Events, got.Done, got.Err = fast.Decode(nil, chunk)
			switch trimmed := bytes.TrimSpace(chunk); {
			case slow.finished:
				want.Done = true
			case len(trimmed) == 0:
			case string(trimmed) == "[DONE]":
				if !slow.started {
					want.Events = append(want.Events, ir.Event{Kind: ir.EvStart})
				}
				want.Events, want.Done = slow.finish(want.Events, ""), true
			default:
				want.Events, want.Done, want.Err = slow.decodeSlow(trimmed)
			}
			blankMintedIDs(got.Events)
			blankMintedIDs(want.Events)
			if irtest.SameDecoding(t, chunk, got, want) {
				return
			}
		}
		g, _, gok := fast.End()
		w, _, wok := slow.End()
		blankMintedIDs(g)
		blankMintedIDs(w)
		if gok != wok || !reflect.DeepEqual(g, w) {
			t.Fatalf("end %+v %v, want %+v %v", g, gok, w, wok)
		}
	})
}

// blankMintedIDs blanks the call ids the decoder mints for calls without one (random).
func blankMintedIDs(evs []ir.Event) {
	for i := range evs {
		if evs[i].Kind == ir.EvToolStart && len(evs[i].ID) == len("call_")+24 && evs[i].ID[:5] == "call_" {
			evs[i].ID = ""
		}
	}
}

// TestSimulatorChunksReadFast: every chunk of the simulator's gemini streams of text, thoughts
// and whole calls is read byte by byte, not by the encoding/json fallback.
func TestSimulatorChunksReadFast(t *testing.T) {
	for _, name := range []string{"gemini_stream_text", "gemini_stream_tools", "gemini_stream_agent_tool", "gemini_stream_max_tokens"} {
		d := &streamDecoder{}
		for _, chunk := range irtest.Chunks(t, "../../testdata/sim/"+name+".txt") {
			if _, ok := d.decodeFast(chunk, nil); !ok {
				t.Errorf("%s: %s is not read by the fast path", name, chunk)
			}
		}
	}
}

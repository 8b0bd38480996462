package gemini

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// geminiChunk is a well-formed chunk with a text part and a whole call, with member replaced
// by with.
func geminiChunk(member, with string) string {
	return strings.Replace(`{"candidates":[{"content":{"parts":[{"text":"hi"},{"functionCall":{"id":"c1","name":"f","args":{"a":1}}}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":4,"totalTokenCount":4},"modelVersion":"g","responseId":"r1"}`, member, with, 1)
}

// TestStreamDecoderHostileChunks: chunks a provider should never send get the decoding they
// got before the chunk was read byte by byte: the same events and the same errors.
func TestStreamDecoderHostileChunks(t *testing.T) {
	irtest.DecodeHostile(t, func() ir.StreamDecoder { return Format.NewStreamDecoder() }, []irtest.HostileChunk{
		{Name: "cut inside a string", Chunk: `{"candidates":[{"content":{"parts":[{"text":"a`, Want: "error: gemini: a stream chunk is not a GenerateContentResponse: unexpected end of JSON input"},
		{Name: "cut inside args", Chunk: geminiChunk(`{"a":1}}}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":4,"totalTokenCount":4},"modelVersion":"g","responseId":"r1"}`, `{"a":[1,`), Want: "error: gemini: a stream chunk is not a GenerateContentResponse: unexpected end of JSON input"},
		{Name: "trailing data", Chunk: geminiChunk(`"r1"}`, `"r1"} x`), Want: "error: gemini: a stream chunk is not a GenerateContentResponse: invalid character 'x' after top-level value"},
		{Name: "text a number", Chunk: geminiChunk(`"text":"hi"`, `"text":5`), Want: "error: gemini: a stream chunk is not a GenerateContentResponse: json: cannot unmarshal number into Go struct field response.candidates.0.content.parts.0.text of type string"},
		{Name: "thought a string", Chunk: geminiChunk(`"text":"hi"`, `"text":"hi","thought":"yes"`), Want: "error: gemini: a stream chunk is not a GenerateContentResponse: json: cannot unmarshal string into Go struct field response.candidates.0.content.parts.0.thought of type bool"},
		{Name: "name a number", Chunk: geminiChunk(`"name":"f"`, `"name":1`), Want: "error: gemini: a stream chunk is not a GenerateContentResponse: json: cannot unmarshal number into Go struct field response.candidates.0.content.parts.1.functionCall.name of type string"},
		{Name: "args a string", Chunk: geminiChunk(`"args":{"a":1}`, `"args":"{\"a\":1}"`), Want: "start(id=\"r1\" model=\"g\" usage={Input:4 CacheRead:0 CacheWrite:0 Output:0 Reasoning:0}) text(text=\"hi\") tool_start(id=\"c1\" name=\"f\" index=0) tool_args(text=\"{}\" index=0)"},
		{Name: "args an array", Chunk: geminiChunk(`"args":{"a":1}`, `"args":[1,2]`), Want: "start(id=\"r1\" model=\"g\" usage={Input:4 CacheRead:0 CacheWrite:0 Output:0 Reasoning:0}) text(text=\"hi\") tool_start(id=\"c1\" name=\"f\" index=0) tool_args(text=\"{}\" index=0)"},
		{Name: "args spaced", Chunk: geminiChunk(`"args":{"a":1}`, "\"args\": { \"a\" : [ 1 , \"x y\" ] ,\n\"b\":{ } }"), Want: "start(id=\"r1\" model=\"g\" usage={Input:4 CacheRead:0 CacheWrite:0 Output:0 Reasoning:0}) text(text=\"hi\") tool_start(id=\"c1\" name=\"f\" index=0) tool_args(text=\"{\\\"a\\\":[1,\\\"x y\\\"],\\\"b\\\":{}}\" index=0)"},
		{Name: "index past int", Chunk: geminiChunk(`"index":0`, `"index":9223372036854775808`), Want: "error: gemini: a stream chunk is not a GenerateContentResponse: json: cannot unmarshal number 9223372036854775808 into Go struct field response.candidates.0.index of type int"},
		{Name: "index 1", Chunk: geminiChunk(`"index":0`, `"index":1`), Want: "start(id=\"r1\" model=\"g\" usage={Input:4 CacheRead:0 CacheWrite:0 Output:0 Reasoning:0})"},
		{Name: "token count a fraction", Chunk: geminiChunk(`"promptTokenCount":4`, `"promptTokenCount":4.5`), Want: "error: gemini: a stream chunk is not a GenerateContentResponse: json: cannot unmarshal number 4.5 into Go struct field response.usageMetadata.promptTokenCount of type int64"},
		{Name: "token count past int64", Chunk: geminiChunk(`"promptTokenCount":4`, `"promptTokenCount":1e400`), Want: "error: gemini: a stream chunk is not a GenerateContentResponse: json: cannot unmarshal number 1e400 into Go struct field response.usageMetadata.promptTokenCount of type int64"},
		{Name: "invalid UTF-8", Chunk: geminiChunk(`"text":"hi"`, "\"text\":\"a\xffb\""), Want: "start(id=\"r1\" model=\"g\" usage={Input:4 CacheRead:0 CacheWrite:0 Output:0 Reasoning:0}) text(text=\"a�b\") tool_start(id=\"c1\" name=\"f\" index=0) tool_args(text=\"{\\\"a\\\":1}\" index=0)"},
		{Name: "lone surrogate in args", Chunk: geminiChunk(`"args":{"a":1}`, `"args":{"a":"\ud800"}`), Want: "start(id=\"r1\" model=\"g\" usage={Input:4 CacheRead:0 CacheWrite:0 Output:0 Reasoning:0}) text(text=\"hi\") tool_start(id=\"c1\" name=\"f\" index=0) tool_args(text=\"{\\\"a\\\":\\\"\\\\ud800\\\"}\" index=0)"},
		{Name: "raw control character", Chunk: geminiChunk(`"text":"hi"`, "\"text\":\"a\nb\""), Want: "error: gemini: a stream chunk is not a GenerateContentResponse: invalid character '\\n' in string"},
		{Name: "unknown members", Chunk: geminiChunk(`"parts":[`, `"zz":[{"y":null}],"parts":[{"text":"a","extra":{"k":[true]}},`), Want: "start(id=\"r1\" model=\"g\" usage={Input:4 CacheRead:0 CacheWrite:0 Output:0 Reasoning:0}) text(text=\"a\") text(text=\"hi\") tool_start(id=\"c1\" name=\"f\" index=0) tool_args(text=\"{\\\"a\\\":1}\" index=0)"},
		{Name: "a key in other case", Chunk: geminiChunk(`"text":"hi"`, `"Text":"hi"`), Want: "start(id=\"r1\" model=\"g\" usage={Input:4 CacheRead:0 CacheWrite:0 Output:0 Reasoning:0}) text(text=\"hi\") tool_start(id=\"c1\" name=\"f\" index=0) tool_args(text=\"{\\\"a\\\":1}\" index=0)"},
		{Name: "a repeated key", Chunk: geminiChunk(`"text":"hi"`, `"text":"a","text":"b"`), Want: "start(id=\"r1\" model=\"g\" usage={Input:4 CacheRead:0 CacheWrite:0 Output:0 Reasoning:0}) text(text=\"b\") tool_start(id=\"c1\" name=\"f\" index=0) tool_args(text=\"{\\\"a\\\":1}\" index=0)"},
		{Name: "an empty functionCall", Chunk: geminiChunk(`{"id":"c1","name":"f","args":{"a":1}}`, `{}`), Want: "start(id=\"r1\" model=\"g\" usage={Input:4 CacheRead:0 CacheWrite:0 Output:0 Reasoning:0}) text(text=\"hi\")"},
		{Name: "a call streamed in pieces", Chunk: geminiChunk(`"args":{"a":1}`, `"willContinue":true`), Want: "start(id=\"r1\" model=\"g\" usage={Input:4 CacheRead:0 CacheWrite:0 Output:0 Reasoning:0}) text(text=\"hi\")"},
		{Name: "partialArgs on a bad path", Chunk: geminiChunk(`"args":{"a":1}`, `"partialArgs":[{"jsonPath":"a","stringValue":"x"}]`), Want: "error: gemini: partialArgs jsonPath \"a\": it does not start with \"$\""},
		{Name: "nesting past the limit", Chunk: geminiChunk(`"args":{"a":1}`, `"args":{"a":`+strings.Repeat("[", 10001)+strings.Repeat("]", 10001)+`}`), Want: "error: gemini: a stream chunk is not a GenerateContentResponse: exceeded max depth"},
		{Name: "not an object", Chunk: `"text"`, Want: "error: gemini: a stream chunk is not a GenerateContentResponse: json: cannot unmarshal string into Go value of type gemini.response"},
	})
}

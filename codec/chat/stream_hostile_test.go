package chat

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// chatChunk is a well-formed text chunk with member replaced by with.
func chatChunk(member, with string) string {
	return strings.Replace(`{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`, member, with, 1)
}

const chatFirst = `{"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`

// TestStreamDecoderHostileChunks: chunks a provider should never send get the decoding they
// got before the chunk was read byte by byte: the same events and the same errors.
func TestStreamDecoderHostileChunks(t *testing.T) {
	irtest.DecodeHostile(t, NewStreamDecoder, []irtest.HostileChunk{
		{Name: "cut inside a string", Chunk: `{"id":"c1","choices":[{"index":0,"delta":{"content":"a`, Want: "error: unexpected end of JSON input"},
		{Name: "cut after a member", Before: []string{chatFirst}, Chunk: `{"id":"c1","choices":[{"index":0,`, Want: "error: unexpected end of JSON input"},
		{Name: "trailing data", Before: []string{chatFirst}, Chunk: chatChunk(`]}`, `]} x`), Want: "error: invalid character 'x' after top-level value"},
		{Name: "content a number", Before: []string{chatFirst}, Chunk: chatChunk(`"content":"hi"`, `"content":5`), Want: "error: json: cannot unmarshal number into Go value of type string"},
		{Name: "content an object", Before: []string{chatFirst}, Chunk: chatChunk(`"content":"hi"`, `"content":{"text":"x"}`), Want: "error: json: cannot unmarshal object into Go value of type string"},
		{Name: "id a number", Chunk: chatChunk(`"id":"c1"`, `"id":7`), Want: "error: json: cannot unmarshal number into Go struct field streamChunk.id of type string"},
		{Name: "choices an object", Before: []string{chatFirst}, Chunk: chatChunk(`"choices":[`, `"choices":{"a":`), Want: "error: invalid character ']' after object key:value pair"},
		{Name: "index past int64", Before: []string{chatFirst}, Chunk: chatChunk(`"index":0`, `"index":99999999999999999999`), Want: "error: json: cannot unmarshal number 99999999999999999999 into Go struct field streamChunk.choices.0.index of type int"},
		{Name: "index a fraction", Before: []string{chatFirst}, Chunk: chatChunk(`"index":0`, `"index":0.5`), Want: "error: json: cannot unmarshal number 0.5 into Go struct field streamChunk.choices.0.index of type int"},
		{Name: "index 1", Before: []string{chatFirst}, Chunk: chatChunk(`"index":0`, `"index":1`), Want: ""},
		{Name: "tokens past int64", Before: []string{chatFirst}, Chunk: `{"id":"c1","choices":[],"usage":{"prompt_tokens":1e400,"completion_tokens":1}}`, Want: "error: json: cannot unmarshal number 1e400 into Go struct field streamChunk.usage.prompt_tokens of type int64"},
		{Name: "tokens negative", Before: []string{chatFirst}, Chunk: `{"id":"c1","choices":[],"usage":{"prompt_tokens":-5,"completion_tokens":1,"total_tokens":-4}}`, Want: "usage(usage={Input:0 CacheRead:0 CacheWrite:0 Output:1 Reasoning:0})"},
		{Name: "tool index past int", Before: []string{chatFirst}, Chunk: `{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":9223372036854775808,"id":"t","function":{"name":"f","arguments":""}}]}}]}`, Want: "error: json: cannot unmarshal number 9223372036854775808 into Go struct field streamChunk.choices.0.delta.tool_calls.0.index of type int"},
		{Name: "tool arguments a number", Before: []string{chatFirst}, Chunk: `{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t","function":{"name":"f","arguments":1}}]}}]}`, Want: "error: json: cannot unmarshal number into Go struct field streamChunk.choices.0.delta.tool_calls.0.function.arguments of type string"},
		{Name: "invalid UTF-8", Before: []string{chatFirst}, Chunk: chatChunk(`"content":"hi"`, "\"content\":\"a\xffb\xc3\""), Want: "text(text=\"a�b�\")"},
		{Name: "lone surrogate", Before: []string{chatFirst}, Chunk: chatChunk(`"content":"hi"`, `"content":"a\ud800b"`), Want: "text(text=\"a�b\")"},
		{Name: "raw control character", Before: []string{chatFirst}, Chunk: chatChunk(`"content":"hi"`, "\"content\":\"a\tb\""), Want: "error: invalid character '\\t' in string"},
		{Name: "unknown members", Before: []string{chatFirst}, Chunk: chatChunk(`"delta":{`, `"zz":{"y":[1,{"z":null}]},"delta":{"extra":true,`), Want: "text(text=\"hi\")"},
		{Name: "a key in other case", Before: []string{chatFirst}, Chunk: chatChunk(`"content":"hi"`, `"Content":"hi"`), Want: "text(text=\"hi\")"},
		{Name: "a repeated key", Before: []string{chatFirst}, Chunk: chatChunk(`"content":"hi"`, `"content":"a","content":"b"`), Want: "text(text=\"b\")"},
		{Name: "an escaped key", Before: []string{chatFirst}, Chunk: chatChunk(`"content":"hi"`, `"cont\u0065nt":"hi"`), Want: "text(text=\"hi\")"},
		{Name: "nesting past the limit", Before: []string{chatFirst}, Chunk: chatChunk(`"finish_reason":null`, `"x":`+strings.Repeat("[", 10001)+strings.Repeat("]", 10001)), Want: "error: exceeded max depth"},
		{Name: "not an object", Chunk: `[1,2]`, Want: "error: json: cannot unmarshal array into Go value of type chat.streamChunk"},
	})
}

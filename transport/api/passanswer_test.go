package api

import (
	"testing"

	"github.com/modelgate/modelgate/codec"
)

// A same-format whole answer gets the client's model in place of the upstream's, every other
// byte kept, and its usage read from the usage member alone.
func TestPassWholeNamesTheModelAndReadsUsage(t *testing.T) {
	cases := []struct {
		name, format, body, want string
		usage                    codec.Usage
	}{
		{"messages", codec.FormatMessages,
			`{"id":"msg_1", "model" : "up-1","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":5,"cache_read_input_tokens":2,"output_tokens":3}}`,
			`{"id":"msg_1", "model" : "pub","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":5,"cache_read_input_tokens":2,"output_tokens":3}}`,
			codec.Usage{Input: 5, CacheRead: 2, Output: 3}},
		{"responses", codec.FormatResponses,
			`{"id":"resp_1","model":"up-1","output":[],"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":2}}}`,
			`{"id":"resp_1","model":"pub","output":[],"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":2}}}`,
			codec.Usage{Input: 6, CacheRead: 4, Output: 5, Reasoning: 2}},
		{"gemini", codec.FormatGemini,
			`{"candidates":[],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":3,"thoughtsTokenCount":1},"modelVersion":"up-1"}`,
			`{"candidates":[],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":3,"thoughtsTokenCount":1},"modelVersion":"pub"}`,
			codec.Usage{Input: 9, Output: 3, Reasoning: 1}},
		{"escaped key, duplicate", codec.FormatMessages, `{"mod\u0065l":"up-1","x":1,"model":"up-2"}`, `{"mod\u0065l":"pub","x":1}`, codec.Usage{}},
		{"no model: byte for byte", codec.FormatMessages, `{"id":"msg_1", "usage":{"output_tokens":1}}`, `{"id":"msg_1", "usage":{"output_tokens":1}}`, codec.Usage{Output: 1}},
		{"not JSON: as it is", codec.FormatResponses, `{"model":"up-1",`, `{"model":"up-1",`, codec.Usage{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, u := passWhole(c.format, []byte(c.body), "pub")
			if string(got) != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			if u != c.usage {
				t.Errorf("usage %+v, want %+v", u, c.usage)
			}
		})
	}
}

// Every frame of a same-format stream that names the model gets the client's, where the
// format puts it; a frame without one passes byte for byte.
func TestStreamFramesNameTheClientsModel(t *testing.T) {
	cases := []struct {
		name, format, data, want string
	}{
		{"messages message_start", codec.FormatMessages,
			`{"type":"message_start","message":{"id":"msg_1","model":"up-1","usage":{"input_tokens":1}}}`,
			`{"type":"message_start","message":{"id":"msg_1","model":"pub","usage":{"input_tokens":1}}}`},
		{"messages delta: as it is", codec.FormatMessages,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"the model said"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"the model said"}}`},
		{"responses response.created", codec.FormatResponses,
			`{"type":"response.created","response":{"id":"resp_1", "model": "up-1","output":[]}}`,
			`{"type":"response.created","response":{"id":"resp_1", "model": "pub","output":[]}}`},
		{"responses text delta: as it is", codec.FormatResponses,
			`{"type":"response.output_text.delta","item_id":"msg_1","delta":"a\nb"}`,
			`{"type":"response.output_text.delta","item_id":"msg_1","delta":"a\nb"}`},
		{"gemini chunk", codec.FormatGemini,
			`{"candidates":[{"content":{"parts":[{"text":"x"}]}}],"modelVersion":"up-1","responseId":"r"}`,
			`{"candidates":[{"content":{"parts":[{"text":"x"}]}}],"modelVersion":"pub","responseId":"r"}`},
		{"gemini escaped key", codec.FormatGemini, `{"modelV\u0065rsion":"up-1"}`, `{"modelV\u0065rsion":"pub"}`},
		{"chat chunk", codec.FormatChat,
			`{"id":"c","object":"chat.completion.chunk","model":"up-1","choices":[]}`,
			`{"id":"c","object":"chat.completion.chunk","model":"pub","choices":[]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := nameModel(c.format, []byte(c.data), "pub"); string(got) != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// contentDelta picks the frames a same-format relay need not decode once its client has the
// first byte: a well-formed delta event, its kind read as the format's decoder reads it.
func TestContentDeltaIsReadAsTheDecoderReadsTheKind(t *testing.T) {
	cases := []struct {
		name, format, event, data string
		want                      bool
	}{
		{"messages text delta", codec.FormatMessages, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`, true},
		{"messages: the name counts first", codec.FormatMessages, "content_block_delta", `{"type":"message_stop"}`, true},
		{"messages: no name, the type", codec.FormatMessages, "", `{"type":"content_block_delta","index":0,"delta":{}}`, true},
		{"messages message_delta", codec.FormatMessages, "message_delta", `{"type":"message_delta","usage":{"output_tokens":1}}`, false},
		{"messages cut", codec.FormatMessages, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"te`, false},
		{"messages type not a string", codec.FormatMessages, "content_block_delta", `{"type":1}`, false},
		{"responses text delta", codec.FormatResponses, "response.output_text.delta", `{"type":"response.output_text.delta","delta":"x"}`, true},
		{"responses arguments delta", codec.FormatResponses, "response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","delta":"{"}`, true},
		{"responses: the type counts first", codec.FormatResponses, "response.output_text.delta", `{"type":"response.completed","response":{}}`, false},
		{"responses: the last type", codec.FormatResponses, "", `{"type":"response.completed","type":"response.output_text.delta"}`, true},
		{"responses: an escaped type is decoded", codec.FormatResponses, "", `{"type":"response.output_text.delt\u0061"}`, false},
		{"responses: empty type, the name", codec.FormatResponses, "response.output_text.delta", `{"type":"","delta":"x"}`, true},
		{"responses completed", codec.FormatResponses, "response.completed", `{"type":"response.completed","response":{}}`, false},
		{"gemini: always decoded", codec.FormatGemini, "", `{"candidates":[]}`, false},
		{"chat: not this relay's", codec.FormatChat, "", `{"choices":[]}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := contentDelta(c.format, []byte(c.event), []byte(c.data)); got != c.want {
				t.Errorf("contentDelta = %v, want %v", got, c.want)
			}
		})
	}
}

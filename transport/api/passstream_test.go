package api_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// passStreamCatalog adds a gemini model on the Fixed upstream to nodetest's FixedCatalog.
const passStreamCatalog = nodetest.FixedCatalog + `  - id: fx-gem
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.000001", completion: "0.000002"}
    routes:
      - {id: fg, format: gemini, base_url: "{{FIXED}}/r/fg/v1beta", upstream_model: gemini-2.5-flash, credential_env: NODETEST_SIM_KEY}
`

// TestSameFormatStreamsNameTheClientsModel: a same-format stream reaches the client byte for
// byte but for the model the upstream named, which is the client's in every frame that names
// one (messages message_start, responses events that carry the response, every gemini chunk),
// the spacing kept; the frames after the first byte that carry only a delta are not decoded
// and are relayed as they are; the call is billed from the usage the stream reported.
func TestSameFormatStreamsNameTheClientsModel(t *testing.T) {
	up := nodetest.StartFixed(t)
	env := nodetest.Start(t, strings.ReplaceAll(passStreamCatalog, "{{FIXED}}", up.URL), nodetest.Options{})
	const text = `"text_delta","text":"a \"model\": \\n"`
	cases := []struct {
		name, route, path, body, model string
		stream                         string // the upstream's; the client's has model in place of UP
		input, output                  int64
	}{
		{"messages", "fm", "/v1/messages", `{"model":"fx-msg","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "fx-msg",
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\" : \"UP\",\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n" +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\", \"index\":0,\"delta\":{\"type\":" + text + "}}\n\n" +
				"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":7}}\n\n" +
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", 12, 7},
		{"responses", "fr", "/v1/responses", `{"model":"fx-resp","stream":true,"input":"hi"}`, "fx-resp",
			"event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"in_progress\",\"model\":\"UP\",\"output\":[]}}\n\n" +
				"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"sequence_number\":1,\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}}\n\n" +
				"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":2,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"Hello\"}\n\n" +
				"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":3,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\" model\\n\"}\n\n" +
				"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"sequence_number\":4,\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"completed\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"Hello model\\n\",\"annotations\":[]}]}}\n\n" +
				"event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":5,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"completed\",\"model\":\"UP\",\"output\":[],\"usage\":{\"input_tokens\":20,\"output_tokens\":9,\"total_tokens\":29}}}\n\n", 20, 9},
		{"gemini", "fg", "/v1beta/models/fx-gem:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, "fx-gem",
			"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hello\"}],\"role\":\"model\"},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":5,\"totalTokenCount\":5},\"modelVersion\": \"UP\",\"responseId\":\"r1\"}\n\n" +
				"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\" there\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":5,\"candidatesTokenCount\":4,\"totalTokenCount\":9},\"modelVersion\": \"UP\",\"responseId\":\"r1\"}\n\n", 5, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up.SetStream(c.route, []byte(strings.ReplaceAll(c.stream, "UP", "upstream-model-2025")))
			resp := env.Post(c.path, env.Key, c.body, "anthropic-version", "2023-06-01")
			got := nodetest.Read(t, resp)
			want := []byte(strings.ReplaceAll(c.stream, "UP", c.model))
			if resp.StatusCode != 200 || !bytes.Equal(got, want) {
				t.Fatalf("%d\n got: %s\nwant: %s", resp.StatusCode, got, want)
			}
			if e := lastEntry(t, env); e.Status != 200 || e.InputTokens != c.input || e.OutputTokens != c.output {
				t.Fatalf("log %+v", e.LogEntry)
			}
		})
	}
}

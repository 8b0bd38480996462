package simulator

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// update rewrites the golden transcripts: go test ./simulator -run Golden -update
var update = flag.Bool("update", false, "rewrite testdata/sim golden transcripts")

// goldenDir holds transcripts shared with the gateway's conversion tests.
var goldenDir = filepath.Join("..", "testdata", "sim")

// golden is one recorded exchange: <name>.request.json holds what was sent, <name>.txt (a
// stream) or <name>.json (a body) what came back, normalized by NormalizeTranscript.
type golden struct {
	name    string
	path    string
	headers map[string]string // besides the credential
	body    string
}

var goldens = []golden{
	{"chat_stream_text", "/v1/chat/completions", nil, `{"model":"gpt-sim","stream":true,"stream_options":{"include_usage":true},
		"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Say hello cached 2 reply with 5 words"}]}`},
	{"chat_stream_tools", "/v1/chat/completions", nil, `{"model":"gpt-sim","stream":true,"stream_options":{"include_usage":true},
		"tools":` + toolsJSON + `,"messages":[{"role":"user","content":"Check everything in parallel"}]}`},
	{"messages_text", "/v1/messages", map[string]string{"anthropic-version": "2023-06-01"}, `{"model":"claude-sim","max_tokens":2048,
		"thinking":{"type":"enabled","budget_tokens":1024},"system":"Be brief.",
		"messages":[{"role":"user","content":"Say hello cached 2 reply with 5 words"}]}`},
	{"messages_stream_text", "/v1/messages", map[string]string{"anthropic-version": "2023-06-01"}, `{"model":"claude-sim","max_tokens":2048,
		"stream":true,"thinking":{"type":"enabled","budget_tokens":1024},"system":"Be brief.",
		"messages":[{"role":"user","content":"Say hello cached 2 reply with 5 words"}]}`},
	{"messages_stream_tools", "/v1/messages", map[string]string{"anthropic-version": "2023-06-01"}, `{"model":"claude-sim","max_tokens":1024,
		"stream":true,"tools":` + messagesToolsJSON + `,"messages":[{"role":"user","content":"Check everything in parallel"}]}`},
	{"messages_stream_max_tokens", "/v1/messages", map[string]string{"anthropic-version": "2023-06-01"}, `{"model":"claude-sim","max_tokens":3,
		"stream":true,"messages":[{"role":"user","content":"Tell me a story"}]}`},
	{"messages_stream_midstream_error", "/v1/messages", map[string]string{"anthropic-version": "2023-06-01"}, `{"model":"claude-sim",
		"max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Trigger a midstream error"}]}`},
	{"gemini_text", "/v1beta/models/gemini-sim:generateContent", nil, `{"systemInstruction":{"parts":[{"text":"Be brief."}]},
		"contents":[{"role":"user","parts":[{"text":"Say hello cached 2 reply with 5 words"}]}],
		"generationConfig":{"thinkingConfig":{"includeThoughts":true}}}`},
	{"gemini_stream_text", "/v1beta/models/gemini-sim:streamGenerateContent?alt=sse", nil, `{"systemInstruction":{"parts":[{"text":"Be brief."}]},
		"contents":[{"role":"user","parts":[{"text":"Say hello cached 2 reply with 5 words"}]}],
		"generationConfig":{"thinkingConfig":{"includeThoughts":true}}}`},
	{"gemini_stream_tools", "/v1beta/models/gemini-sim:streamGenerateContent?alt=sse", nil, `{"tools":` + geminiToolsJSON + `,
		"contents":[{"role":"user","parts":[{"text":"Check everything in parallel"}]}]}`},
	{"gemini_stream_max_tokens", "/v1beta/models/gemini-sim:streamGenerateContent?alt=sse", nil, `{"generationConfig":{"maxOutputTokens":3},
		"contents":[{"role":"user","parts":[{"text":"Tell me a story"}]}]}`},
	{"gemini_stream_midstream_error", "/v1beta/models/gemini-sim:streamGenerateContent?alt=sse", nil,
		`{"contents":[{"role":"user","parts":[{"text":"Trigger a midstream error"}]}]}`},
	{"responses_text", "/v1/responses", nil, `{"model":"gpt-sim","instructions":"Be brief.","input":"Say hello cached 2 reply with 5 words",
		"reasoning":{"effort":"low","summary":"auto"},"include":["reasoning.encrypted_content"],"store":false}`},
	{"responses_stream_text", "/v1/responses", nil, `{"model":"gpt-sim","stream":true,"instructions":"Be brief.",
		"input":"Say hello cached 2 reply with 5 words","reasoning":{"effort":"low","summary":"auto"},
		"include":["reasoning.encrypted_content"],"store":false}`},
	{"responses_stream_tools", "/v1/responses", nil, `{"model":"gpt-sim","stream":true,"tools":` + responsesToolsJSON + `,
		"input":[{"role":"user","content":[{"type":"input_text","text":"Check everything in parallel"}]}]}`},
	{"responses_stream_incomplete", "/v1/responses", nil, `{"model":"gpt-sim","stream":true,"max_output_tokens":16,
		"input":"Tell me a long story reply with 40 words"}`},
	{"responses_stream_midstream_error", "/v1/responses", nil, `{"model":"gpt-sim","stream":true,"input":"Trigger a midstream error"}`},
	{"images_b64_json", "/v1/images/generations", nil, `{"model":"gpt-image-1","prompt":"A red fox in the snow",
		"n":2,"size":"256x128","quality":"low","response_format":"b64_json"}`},
	{"gemini_image", "/v1beta/models/gemini-2.5-flash-image:generateContent", nil, `{"contents":[{"role":"user","parts":[{"text":"Draw a red fox in the snow"}]}],
		"generationConfig":{"responseModalities":["TEXT","IMAGE"],"imageConfig":{"aspectRatio":"16:9"}}}`},
	{"videos_create", "/v1/videos", nil, `{"model":"sora-2","prompt":"A calico cat playing a piano on stage","seconds":"8","size":"1280x720"}`},
	{"bedrock_invoke_text", "/model/anthropic.claude-sim-v1:0/invoke", nil, `{"anthropic_version":"bedrock-2023-05-31","max_tokens":2048,
		"thinking":{"type":"enabled","budget_tokens":1024},"system":"Be brief.",
		"messages":[{"role":"user","content":"Say hello cached 2 reply with 5 words"}]}`},
	{"bedrock_invoke_stream_tools", "/model/anthropic.claude-sim-v1:0/invoke-with-response-stream", nil, `{"anthropic_version":"bedrock-2023-05-31",
		"max_tokens":1024,"tools":` + messagesToolsJSON + `,"messages":[{"role":"user","content":"Check everything in parallel"}]}`},
	{"bedrock_converse_text", "/model/anthropic.claude-sim-v1:0/converse", nil, `{"system":[{"text":"Be brief."}],
		"messages":[{"role":"user","content":[{"text":"Say hello cached 2 reply with 5 words"}]}],
		"inferenceConfig":{"maxTokens":2048},"additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":1024}}}`},
	{"bedrock_converse_stream_text", "/model/anthropic.claude-sim-v1:0/converse-stream", nil, `{"system":[{"text":"Be brief."}],
		"messages":[{"role":"user","content":[{"text":"Say hello cached 2 reply with 5 words"}]}],
		"inferenceConfig":{"maxTokens":2048},"additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":1024}}}`},
	{"bedrock_converse_stream_tools", "/model/anthropic.claude-sim-v1:0/converse-stream", nil, `{"toolConfig":` + converseToolsJSON + `,
		"messages":[{"role":"user","content":[{"text":"Check everything in parallel"}]}]}`},
	{"bedrock_converse_stream_max_tokens", "/model/anthropic.claude-sim-v1:0/converse-stream", nil, `{"inferenceConfig":{"maxTokens":3},
		"messages":[{"role":"user","content":[{"text":"Tell me a story"}]}]}`},
	{"bedrock_converse_stream_midstream_error", "/model/anthropic.claude-sim-v1:0/converse-stream", nil,
		`{"messages":[{"role":"user","content":[{"text":"Trigger a midstream error"}]}]}`},
	{"vertex_gemini_text", "/v1/projects/modelgate-sim/locations/us-central1/publishers/google/models/gemini-sim:generateContent", nil,
		`{"contents":[{"role":"user","parts":[{"text":"Say hello cached 2 reply with 5 words"}]}]}`},
	{"vertex_claude_stream_tools", "/v1/projects/modelgate-sim/locations/us-central1/publishers/anthropic/models/claude-sim@20250101:streamRawPredict", nil,
		`{"anthropic_version":"vertex-2023-10-16","stream":true,"max_tokens":1024,"tools":` + messagesToolsJSON + `,
		"messages":[{"role":"user","content":"Check everything in parallel"}]}`},
	{"azure_chat_text", "/openai/deployments/gpt-sim/chat/completions?api-version=2024-10-21", nil,
		`{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Say hello cached 2 reply with 5 words"}]}`},
	{"azure_chat_stream_text", "/openai/deployments/gpt-sim/chat/completions?api-version=2024-10-21", nil, `{"stream":true,
		"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Say hello cached 2 reply with 5 words"}]}`},
	{"azure_chat_stream_tools", "/openai/v1/chat/completions", nil, `{"model":"gpt-sim","stream":true,"tools":` + toolsJSON + `,
		"messages":[{"role":"user","content":"Check everything in parallel"}]}`},
	{"azure_chat_stream_filtered", "/openai/deployments/gpt-sim/chat/completions?api-version=2024-10-21", nil, `{"stream":true,
		"messages":[{"role":"user","content":"Say something the content filter catches"}]}`},
}

// Credentials that vary per run are recorded in the fixtures as these placeholders and made
// when the request is sent.
const (
	sigV4Placeholder       = "AWS4-HMAC-SHA256 Credential=" + AWSAccessKeyID + "/<date>/us-east-1/bedrock/aws4_request, SignedHeaders=…, Signature=<signed when sent>"
	googleTokenPlaceholder = "Bearer <access token of the simulator's Google token endpoint>"
)

// credentials per path prefix, so requests in the fixtures say how each format authenticates.
func goldenHeaders(g golden) map[string]string {
	h := map[string]string{"Authorization": "Bearer sk-sim"}
	switch {
	case strings.HasPrefix(g.path, "/v1/messages"):
		h = map[string]string{"x-api-key": "sk-ant-sim"}
	case strings.HasPrefix(g.path, "/v1beta/"):
		h = map[string]string{"x-goog-api-key": "AIza-sim"}
	case strings.HasPrefix(g.path, "/model/"):
		h = map[string]string{"Authorization": sigV4Placeholder}
	case strings.HasPrefix(g.path, "/v1/projects/"):
		h = map[string]string{"Authorization": googleTokenPlaceholder}
	case strings.HasPrefix(g.path, "/openai/"):
		h = map[string]string{"api-key": "azure-sim"}
	}
	for k, v := range g.headers {
		h[k] = v
	}
	return h
}

// goldenRequest builds the request of g with headers, placeholders made into credentials.
func goldenRequest(t *testing.T, s *Server, base string, g golden, headers map[string]string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+g.path, strings.NewReader(g.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		switch v {
		case sigV4Placeholder:
			return signedRequest(t, base+g.path, g.body, simCreds, time.Now())
		case googleTokenPlaceholder:
			v = "Bearer " + googleToken(t, s, base+"/oauth2/token")
		}
		req.Header.Set(k, v)
	}
	return req
}

// eventStreamTranscript writes an AWS event stream as the gateway's transport turns it into
// SSE, so it reads like the other transcripts and conversion tests can feed it to a codec:
// "event: <:event-type>" (an exception's :exception-type) and "data: <payload>" per message,
// an InvokeModel chunk being the Anthropic event its bytes hold. The framing itself is
// asserted by the Bedrock tests.
func eventStreamTranscript(t *testing.T, data []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, f := range decodeFrames(t, data) {
		name, payload := f.eventType, f.payload
		if f.messageType == "exception" {
			name = f.exceptionType
		}
		if name == "chunk" {
			var chunk struct {
				Bytes []byte `json:"bytes"` // base64 in JSON
			}
			if err := json.Unmarshal([]byte(payload), &chunk); err != nil {
				t.Fatalf("chunk %s: %v", payload, err)
			}
			payload, name = string(chunk.Bytes), str(decode(t, chunk.Bytes), "type")
		}
		fmt.Fprintf(&out, "event: %s\ndata: %s\n\n", name, payload)
	}
	return out.Bytes()
}

func TestGoldenTranscripts(t *testing.T) {
	s, base := startSim(t)
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			headers := goldenHeaders(g)
			resp, data := do(t, goldenRequest(t, s, base, g, headers))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, data)
			}
			ext := ".txt"
			if resp.Header.Get("Content-Type") == eventStreamContentType {
				data = eventStreamTranscript(t, data)
			}
			if resp.Header.Get("Content-Type") == "application/json" {
				ext = ".json"
				var buf bytes.Buffer
				_ = json.Indent(&buf, bytes.TrimSpace(data), "", "  ")
				data = append(buf.Bytes(), '\n')
			}
			got := NormalizeTranscript(data)

			// The body keeps its key order: tool argument order follows the schema's.
			var compact, request bytes.Buffer
			if err := json.Compact(&compact, []byte(g.body)); err != nil {
				t.Fatal(err)
			}
			raw, _ := marshalJSON(obj{{"method", "POST"}, {"path", g.path}, {"headers", headers},
				{"body", json.RawMessage(compact.Bytes())}})
			_ = json.Indent(&request, raw, "", "  ")
			request.WriteByte('\n')

			files := map[string][]byte{g.name + ext: got, g.name + ".request.json": request.Bytes()}
			for name, want := range files {
				file := filepath.Join(goldenDir, name)
				if *update {
					if err := os.WriteFile(file, want, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				onDisk, err := os.ReadFile(file)
				if err != nil {
					t.Fatalf("%v (run go test ./simulator -run Golden -update)", err)
				}
				if !bytes.Equal(onDisk, want) {
					t.Errorf("%s differs from the simulator's output (run with -update if the change is intended):\n got: %q\nwant: %q",
						name, want, onDisk)
				}
			}
		})
	}
}

func TestNormalizeTranscript(t *testing.T) {
	in := `{"id":"msg_0123456789abcdef01234567","x":"toolu_aaaaaaaaaaaaaaaaaaaaaaaa","again":"msg_0123456789abcdef01234567",` +
		`"responseId": "ffffffffffffffffffffffff","created_at":1712345678,"created": 5}`
	want := `{"id":"msg_000000000000000000000001","x":"toolu_000000000000000000000002","again":"msg_000000000000000000000001",` +
		`"responseId": "000000000000000000000003","created_at":1700000000,"created": 1700000000}`
	got := NormalizeTranscript([]byte(in))
	if string(got) != want {
		t.Errorf("NormalizeTranscript =\n%s\nwant\n%s", got, want)
	}
	if again := NormalizeTranscript(got); string(again) != want {
		t.Errorf("not idempotent: %s", again)
	}
}

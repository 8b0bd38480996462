package simulator

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
}

// credentials per path prefix, so requests in the fixtures say how each format authenticates.
func goldenHeaders(g golden) map[string]string {
	h := map[string]string{"Authorization": "Bearer sk-sim"}
	switch {
	case strings.HasPrefix(g.path, "/v1/messages"):
		h = map[string]string{"x-api-key": "sk-ant-sim"}
	case strings.HasPrefix(g.path, "/v1beta/"):
		h = map[string]string{"x-goog-api-key": "AIza-sim"}
	}
	for k, v := range g.headers {
		h[k] = v
	}
	return h
}

func TestGoldenTranscripts(t *testing.T) {
	_, base := startSim(t)
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			headers := goldenHeaders(g)
			resp, data := callHeaders(t, http.MethodPost, base+g.path, g.body, headers)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, data)
			}
			ext := ".txt"
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

package upstream

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/modelgate/modelgate/persistence/catalog"
)

func bedrockRoute(format string) *catalog.Route {
	return &catalog.Route{ID: "b", Provider: catalog.ProviderBedrock, Format: format, BaseURL: "https://bedrock-runtime.us-east-1.amazonaws.com",
		UpstreamModel: "anthropic.claude-3-5-sonnet-20240620-v1:0", AWS: &catalog.AWS{Region: "us-east-1"}}
}

func vertexRoute(format, model string) *catalog.Route {
	return &catalog.Route{ID: "v", Provider: catalog.ProviderVertex, Format: format, BaseURL: "https://us-east5-aiplatform.googleapis.com",
		UpstreamModel: model, Vertex: &catalog.Vertex{Project: "my-proj", Location: "us-east5"}}
}

func azureRoute(format, version string) *catalog.Route {
	return &catalog.Route{ID: "a", Provider: catalog.ProviderAzure, Format: format, BaseURL: "https://res.openai.azure.com",
		UpstreamModel: "gpt-4o", Azure: &catalog.Azure{Deployment: "gpt4o-prod", APIVersion: version}, Query: map[string]string{}}
}

func TestTargetPutsEachCallWhereItsProviderServesIt(t *testing.T) {
	direct := &catalog.Route{Format: catalog.FormatChat, BaseURL: "https://openrouter.ai/api/v1", Query: map[string]string{"trace": "1"}}
	cases := []struct {
		name string
		req  Request
		want string
	}{
		{"direct keeps the format's path, adds the route's query", Request{Route: direct, Path: "/chat/completions"}, "https://openrouter.ai/api/v1/chat/completions?trace=1"},
		{"bedrock invoke", Request{Route: bedrockRoute(catalog.FormatMessages), Path: "/messages"}, "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1:0/invoke"},
		{"bedrock invoke stream", Request{Route: bedrockRoute(catalog.FormatMessages), Path: "/messages", Stream: true}, "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1:0/invoke-with-response-stream"},
		{"bedrock converse keeps the converse path", Request{Route: bedrockRoute(catalog.FormatConverse), Path: "/model/meta.llama3-70b-instruct-v1:0/converse-stream", Stream: true}, "https://bedrock-runtime.us-east-1.amazonaws.com/model/meta.llama3-70b-instruct-v1:0/converse-stream"},
		{"vertex claude", Request{Route: vertexRoute(catalog.FormatMessages, "claude-sonnet-4-5@20250929"), Path: "/messages"}, "https://us-east5-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"},
		{"vertex claude stream", Request{Route: vertexRoute(catalog.FormatMessages, "claude-sonnet-4-5@20250929"), Path: "/messages", Stream: true}, "https://us-east5-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"},
		{"vertex gemini stream keeps alt=sse", Request{Route: vertexRoute(catalog.FormatGemini, "gemini-2.5-pro"), Path: "/models/gemini-2.5-pro:streamGenerateContent?alt=sse", Stream: true}, "https://us-east5-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-east5/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"},
		{"azure chat on its deployment", Request{Route: azureRoute(catalog.FormatChat, "2024-10-21"), Path: "/chat/completions"}, "https://res.openai.azure.com/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21"},
		{"azure embeddings", Request{Route: azureRoute(catalog.FormatChat, "2024-10-21"), Path: "/embeddings"}, "https://res.openai.azure.com/openai/deployments/gpt4o-prod/embeddings?api-version=2024-10-21"},
		{"azure responses per resource", Request{Route: azureRoute(catalog.FormatResponses, "2025-03-01-preview"), Path: "/responses"}, "https://res.openai.azure.com/openai/responses?api-version=2025-03-01-preview"},
		{"azure v1", Request{Route: azureRoute(catalog.FormatChat, "v1"), Path: "/chat/completions"}, "https://res.openai.azure.com/openai/v1/chat/completions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := target(c.req); got != c.want {
				t.Errorf("target = %s\nwant     %s", got, c.want)
			}
		})
	}
}

func TestCloudBodyMovesModelAndVersion(t *testing.T) {
	body := []byte(`{"model":"m","max_tokens":5,"stream":true,"messages":[]}`)
	cases := []struct {
		name       string
		rt         *catalog.Route
		beta       string
		want       string
		wantHeader string // anthropic-version left on the request
	}{
		{"bedrock: no model, no stream, its version, betas in the body", bedrockRoute(catalog.FormatMessages), "a-1, b-2",
			`{"max_tokens":5,"messages":[],"anthropic_version":"bedrock-2023-05-31","anthropic_beta":["a-1","b-2"]}`, ""},
		{"vertex: no model, the stream flag stays", vertexRoute(catalog.FormatMessages, "claude"), "",
			`{"max_tokens":5,"stream":true,"messages":[],"anthropic_version":"vertex-2023-10-16"}`, ""},
		{"vertex gemini: as it is", vertexRoute(catalog.FormatGemini, "g"), "", string(body), "2023-06-01"},
		{"bedrock converse: as it is", bedrockRoute(catalog.FormatConverse), "", string(body), "2023-06-01"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{"Anthropic-Version": {"2023-06-01"}}
			if c.beta != "" {
				h.Set("anthropic-beta", c.beta)
			}
			got, err := cloudBody(c.rt, body, h)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("body = %s\nwant   %s", got, c.want)
			}
			if v := h.Get("anthropic-version"); v != c.wantHeader {
				t.Errorf("anthropic-version header = %q, want %q", v, c.wantHeader)
			}
		})
	}
}

// frames encodes event-stream messages as Bedrock sends them.
func frames(t testing.TB, msgs ...eventstream.Message) []byte {
	var b bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, m := range msgs {
		if err := enc.Encode(&b, m); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func eventMsg(kind string, payload string) eventstream.Message {
	var h eventstream.Headers
	h.Set(":event-type", eventstream.StringValue(kind))
	h.Set(":content-type", eventstream.StringValue("application/json"))
	h.Set(":message-type", eventstream.StringValue("event"))
	return eventstream.Message{Headers: h, Payload: []byte(payload)}
}

func chunkMsg(event string) eventstream.Message {
	return eventMsg("chunk", `{"bytes":"`+base64.StdEncoding.EncodeToString([]byte(event))+`","p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123"}`)
}

func exceptionMsg(kind, message string) eventstream.Message {
	var h eventstream.Headers
	h.Set(":exception-type", eventstream.StringValue(kind))
	h.Set(":content-type", eventstream.StringValue("application/json"))
	h.Set(":message-type", eventstream.StringValue("exception"))
	return eventstream.Message{Headers: h, Payload: []byte(`{"message":"` + message + `"}`)}
}

func TestEventStreamBecomesTheFormatsSSE(t *testing.T) {
	cases := []struct {
		name    string
		chunked bool
		in      []eventstream.Message
		want    string
		wantErr error
	}{
		{"invoke: each chunk is Anthropic's event", true, []eventstream.Message{
			chunkMsg(`{"type":"message_start","message":{"id":"m1"}}`),
			chunkMsg("{\"type\":\"content_block_delta\",\n \"delta\":{\"text\":\"Hi\"}}"),
			chunkMsg(`{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":3}}`),
		}, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"Hi\"}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\",\"amazon-bedrock-invocationMetrics\":{\"inputTokenCount\":3}}\n\n", io.EOF},
		{"invoke: an exception is Anthropic's error event", true, []eventstream.Message{
			chunkMsg(`{"type":"message_start","message":{"id":"m1"}}`),
			exceptionMsg("throttlingException", "Too many tokens"),
		}, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\"}}\n\n" +
			"event: error\ndata: {\"error\":{\"message\":\"Too many tokens\",\"type\":\"rate_limit_error\"},\"type\":\"error\"}\n\n", io.EOF},
		{"converse: event type and payload", false, []eventstream.Message{
			eventMsg("messageStart", `{"p":"abc","role":"assistant"}`),
			eventMsg("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hi"},"p":"ab"}`),
			exceptionMsg("modelStreamErrorException", "boom"),
		}, "event: messageStart\ndata: {\"p\":\"abc\",\"role\":\"assistant\"}\n\n" +
			"event: contentBlockDelta\ndata: {\"contentBlockIndex\":0,\"delta\":{\"text\":\"Hi\"},\"p\":\"ab\"}\n\n" +
			"event: modelStreamErrorException\ndata: {\"message\":\"boom\"}\n\n", io.EOF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newEventStreamSSE(io.NopCloser(bytes.NewReader(frames(t, c.in...))), c.chunked)
			got, err := io.ReadAll(s)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("SSE =\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestEventStreamCutMidFrameIsABreak(t *testing.T) {
	b := frames(t, chunkMsg(`{"type":"message_start","message":{}}`), chunkMsg(`{"type":"ping"}`))
	s := newEventStreamSSE(io.NopCloser(bytes.NewReader(b[:len(b)-7])), true)
	got, err := io.ReadAll(s)
	if err != io.ErrUnexpectedEOF {
		t.Errorf("err = %v, want io.ErrUnexpectedEOF", err)
	}
	if want := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n"; string(got) != want {
		t.Errorf("read %q, want %q", got, want)
	}
}

func TestEventStreamRefusesACorruptFrame(t *testing.T) {
	b := frames(t, chunkMsg(`{"type":"message_start","message":{}}`))
	b[len(b)-10] ^= 0xff // the payload no longer matches its CRC
	_, err := io.ReadAll(newEventStreamSSE(io.NopCloser(bytes.NewReader(b)), true))
	if err == nil {
		t.Fatal("a frame whose CRC does not match was read")
	}
}

func TestCloudErrors(t *testing.T) {
	cases := []struct {
		name     string
		rt       *catalog.Route
		status   int
		errType  string
		body     string
		wantKind Kind
		wantBody string
	}{
		{"bedrock throttle", bedrockRoute(catalog.FormatMessages), 429, "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/", `{"message":"Too many requests, please wait before trying again."}`,
			RateLimited, `{"error":{"message":"Too many requests, please wait before trying again.","type":"rate_limit_error"},"type":"error"}`},
		{"bedrock quota exceeded is a rate limit though a 400", bedrockRoute(catalog.FormatMessages), 400, "ServiceQuotaExceededException", `{"message":"Too many tokens per day"}`,
			RateLimited, `{"error":{"message":"Too many tokens per day","type":"invalid_request_error"},"type":"error"}`},
		{"bedrock model error fails over", bedrockRoute(catalog.FormatMessages), 424, "ModelErrorException", `{"message":"The model returned an error"}`,
			ServerError, `{"error":{"message":"The model returned an error","type":"api_error"},"type":"error"}`},
		{"bedrock validation goes to the client", bedrockRoute(catalog.FormatMessages), 400, "ValidationException", `{"message":"messages: field required"}`,
			ClientError, `{"error":{"message":"messages: field required","type":"invalid_request_error"},"type":"error"}`},
		{"bedrock model not ready", bedrockRoute(catalog.FormatConverse), 429, "ModelNotReadyException", `{"message":"not ready"}`,
			RateLimited, `{"message":"not ready"}`},
		{"bedrock bad signature fails over", bedrockRoute(catalog.FormatConverse), 403, "InvalidSignatureException", `{"message":"The request signature we calculated does not match"}`,
			ServerError, `{"message":"The request signature we calculated does not match"}`},
		{"vertex's own envelope becomes Anthropic's", vertexRoute(catalog.FormatMessages, "c"), 400, "", `{"error":{"code":400,"message":"Invalid JSON payload","status":"INVALID_ARGUMENT"}}`,
			ClientError, `{"error":{"message":"Invalid JSON payload","type":"invalid_request_error"},"type":"error"}`},
		{"vertex claude's own error stays", vertexRoute(catalog.FormatMessages, "c"), 400, "", `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens"}}`,
			ClientError, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens"}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{"Content-Type": {"application/json"}}
			if c.errType != "" {
				h.Set("X-Amzn-Errortype", c.errType)
			}
			e := statusError(&http.Response{StatusCode: c.status, Header: h}, []byte(c.body), testNow)
			cloudError(c.rt, e)
			if e.Kind != c.wantKind {
				t.Errorf("kind = %v, want %v", e.Kind, c.wantKind)
			}
			if string(e.Body) != c.wantBody {
				t.Errorf("body = %s\nwant   %s", e.Body, c.wantBody)
			}
		})
	}
}

// FuzzEventStreamSSE feeds the Bedrock frame reader hostile bytes: it must end with an
// error or io.EOF, never panic, and never give more SSE text than its input could hold.
func FuzzEventStreamSSE(f *testing.F) {
	f.Add(frames(f, chunkMsg(`{"type":"message_start","message":{}}`), exceptionMsg("throttlingException", "x")), true)
	f.Add(frames(f, eventMsg("messageStart", `{"role":"assistant"}`)), false)
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0, 5, 0xba, 0x7f, 0x2d, 0, 0, 0, 0}, false)
	f.Fuzz(func(t *testing.T, in []byte, chunked bool) {
		out, _ := io.ReadAll(newEventStreamSSE(io.NopCloser(bytes.NewReader(in)), chunked))
		if len(out) > 4*len(in)+1024 {
			t.Fatalf("%d bytes of SSE from %d of frames", len(out), len(in))
		}
	})
}

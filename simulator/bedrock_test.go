package simulator

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// An InvokeModel answer is the Messages answer of the same model, Bedrock's ids and name aside.
func TestBedrockInvokeAnswersAsMessages(t *testing.T) {
	s, base := startSim(t)
	rest := `"max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":1024},"system":"Be brief.",` +
		`"messages":[{"role":"user","content":"Say hello cached 2 reply with 5 words"}]}`
	_, direct := callHeaders(t, http.MethodPost, base+"/v1/messages", `{"model":"claude-sim",`+rest, messagesHeaders)
	body := `{"anthropic_version":"bedrock-2023-05-31",` + rest
	resp, data := bedrockCall(t, base+"/r/b/model/us.anthropic.claude-sim-v1:0/invoke", body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	if id := str(decode(t, data), "id"); !strings.HasPrefix(id, "msg_bdrk_") {
		t.Errorf("id %q, want msg_bdrk_…", id)
	}
	assertJSON(t, without(t, data, "id"), string(without(t, direct, "id")))
	for header, want := range map[string]string{"X-Amzn-Bedrock-Input-Token-Count": "8", "X-Amzn-Bedrock-Output-Token-Count": "13",
		"X-Amzn-Bedrock-Cache-Read-Input-Token-Count": "2", "X-Amzn-Bedrock-Invocation-Latency": "0",
		"Content-Type": "application/json"} {
		if got := resp.Header.Get(header); got != want {
			t.Errorf("%s: %q, want %q", header, got, want)
		}
	}
	if resp.Header.Get("X-Amzn-Requestid") == "" {
		t.Error("no X-Amzn-RequestId")
	}
	// The control API shows what the gateway sent, for tests in other processes.
	_, view := call(t, http.MethodGet, base+"/_sim/routes/b", "", "-")
	last := path(decode(t, view), "last_request")
	if str(last, "uri") != "/r/b/model/us.anthropic.claude-sim-v1:0/invoke" || str(last, "body", "anthropic_version") != "bedrock-2023-05-31" ||
		path(last, "body", "model") != nil || !strings.HasPrefix(str(last, "headers", "X-Amz-Date"), "20") ||
		str(last, "headers", "Authorization") != "(masked)" {
		t.Errorf("last_request = %s", marshal(t, last))
	}
	if got := s.LastRequestURI("b"); got != "/r/b/model/us.anthropic.claude-sim-v1:0/invoke" {
		t.Errorf("LastRequestURI = %q", got)
	}
}

func TestBedrockModelName(t *testing.T) {
	for id, want := range map[string]string{
		"anthropic.claude-3-5-sonnet-20240620-v1:0":                                                          "claude-3-5-sonnet-20240620",
		"us.anthropic.claude-sonnet-4-5-20250929-v1:0":                                                       "claude-sonnet-4-5-20250929",
		"global.anthropic.claude-opus-4-1-20250805-v1:0":                                                     "claude-opus-4-1-20250805",
		"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-haiku-20240307-v1:0": "claude-3-haiku-20240307",
		"amazon.titan-text-express-v1":                                                                       "titan-text-express-v1",
		"claude-sim":                                                                                         "claude-sim",
	} {
		if got := bedrockModelName(id); got != want {
			t.Errorf("bedrockModelName(%q) = %q, want %q", id, got, want)
		}
	}
}

// An InvokeModel body that is not Anthropic's body as Bedrock takes it is a ValidationException
// in Bedrock's words; the model's own refusal is relayed in one.
func TestBedrockInvokeValidation(t *testing.T) {
	_, base := startSim(t)
	malformed := func(what string) string {
		return "Malformed input request: " + what + ", please reformat your input and try again."
	}
	tests := []struct{ name, body, message string }{
		{"model in the body", `{"anthropic_version":"bedrock-2023-05-31","model":"claude","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
			malformed("#: extraneous key [model] is not permitted")},
		{"stream in the body", `{"anthropic_version":"bedrock-2023-05-31","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
			malformed("#: extraneous key [stream] is not permitted")},
		{"no anthropic_version", `{"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
			malformed("#: required key [anthropic_version] not found")},
		{"Anthropic's version", `{"anthropic_version":"2023-06-01","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
			malformed(`#/anthropic_version: "2023-06-01" is not a valid enum value`)},
		{"not an object", `[1]`, malformed("#: expected type: JSONObject")},
		{"no max_tokens", `{"anthropic_version":"bedrock-2023-05-31","messages":[{"role":"user","content":"hi"}]}`,
			"max_tokens: Field required"},
		{"system turn without the beta", `{"anthropic_version":"bedrock-2023-05-31","max_tokens":5,` +
			`"messages":[{"role":"user","content":"hi"},{"role":"system","content":"env"}]}`,
			"messages.1.role: Input should be 'user' or 'assistant'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, op := range []string{"invoke", "invoke-with-response-stream"} {
				resp, data := bedrockCall(t, base+"/model/anthropic.claude-sim-v1:0/"+op, tc.body)
				if resp.StatusCode != http.StatusBadRequest ||
					resp.Header.Get("X-Amzn-Errortype") != "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/" {
					t.Fatalf("%s: status %d %q: %s", op, resp.StatusCode, resp.Header.Get("X-Amzn-Errortype"), data)
				}
				assertJSON(t, data, `{"message":`+string(marshal(t, tc.message))+`}`)
			}
		})
	}
	// anthropic_beta admits what the beta admits.
	resp, data := bedrockCall(t, base+"/model/anthropic.claude-sim-v1:0/invoke", `{"anthropic_version":"bedrock-2023-05-31",`+
		`"anthropic_beta":["`+systemTurnsBeta+`"],"max_tokens":5,"messages":[{"role":"user","content":"hi"},{"role":"system","content":"env"}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with the beta: %d %s", resp.StatusCode, data)
	}
}

// The stream is event-stream framing aws-sdk-go-v2 decodes (CRCs checked), one "chunk" event
// per Anthropic event, each payload {"bytes": base64 of the event, "p": padding}; the events
// are the Messages stream's, message_stop with Bedrock's invocation metrics.
func TestBedrockInvokeStream(t *testing.T) {
	_, base := startSim(t)
	rest := `"max_tokens":1024,"messages":[{"role":"user","content":"reply with 3 words"}]}`
	_, direct := callHeaders(t, http.MethodPost, base+"/v1/messages", `{"model":"claude-sim","stream":true,`+rest, messagesHeaders)
	resp, data := bedrockCall(t, base+"/model/anthropic.claude-sim-v1:0/invoke-with-response-stream",
		`{"anthropic_version":"bedrock-2023-05-31",`+rest)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/vnd.amazon.eventstream" {
		t.Fatalf("status %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
	want := parseEvents(t, string(NormalizeTranscript(direct)), "\n\n")
	frames := decodeFrames(t, data)
	// The decoder does check the checksums: one flipped payload byte fails it.
	corrupt := append([]byte(nil), data...)
	corrupt[30] ^= 1
	if _, err := readFrames(bytes.NewReader(corrupt)); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("a corrupted message decoded: %v", err)
	}
	if len(frames) != len(want) {
		t.Fatalf("%d frames, want one per Messages event (%d)", len(frames), len(want))
	}
	for i, f := range frames {
		if f.messageType != "event" || f.eventType != "chunk" || f.contentType != "application/json" {
			t.Fatalf("frame %d headers %+v", i, f)
		}
		var payload struct {
			Bytes string `json:"bytes"`
			P     string `json:"p"`
		}
		if err := json.Unmarshal([]byte(f.payload), &payload); err != nil || payload.P == "" || !strings.HasPrefix(padAlphabet, payload.P) {
			t.Fatalf("frame %d payload %s (%v)", i, f.payload, err)
		}
		event, err := base64.StdEncoding.DecodeString(payload.Bytes)
		if err != nil {
			t.Fatalf("frame %d bytes: %v", i, err)
		}
		got := NormalizeTranscript(event)
		got = []byte(strings.ReplaceAll(string(got), "_bdrk_", "_")) // msg_bdrk_… is msg_… renumbered alike
		if want[i].name == "message_stop" {
			assertJSON(t, got, `{"type":"message_stop","amazon-bedrock-invocationMetrics":`+
				`{"inputTokenCount":4,"outputTokenCount":3,"invocationLatency":0,"firstByteLatency":0}}`)
			continue
		}
		assertJSON(t, got, want[i].data)
	}
}

// A stream that fails after HTTP 200 ends with an exception message.
func TestBedrockStreamsFailWithAnException(t *testing.T) {
	_, base := startSim(t)
	for _, tc := range []struct{ op, body string }{
		{"invoke-with-response-stream", `{"anthropic_version":"bedrock-2023-05-31","max_tokens":100,"messages":[{"role":"user","content":"midstream error"}]}`},
		{"converse-stream", `{"messages":[{"role":"user","content":[{"text":"midstream error"}]}]}`},
	} {
		t.Run(tc.op, func(t *testing.T) {
			resp, data := bedrockCall(t, base+"/model/anthropic.claude-sim-v1:0/"+tc.op, tc.body)
			frames := decodeFrames(t, data)
			if resp.StatusCode != http.StatusOK || len(frames) < 3 {
				t.Fatalf("status %d, %d frames", resp.StatusCode, len(frames))
			}
			last := frames[len(frames)-1]
			if last.messageType != "exception" || last.exceptionType != "modelStreamErrorException" || last.eventType != "" {
				t.Errorf("last frame %+v, want a modelStreamErrorException", last)
			}
			assertJSON(t, []byte(last.payload), `{"message":"The model encountered an error while streaming (simulated): Overloaded",`+
				`"originalStatusCode":529,"originalMessage":"Overloaded"}`)
			for _, f := range frames[:len(frames)-1] {
				if f.messageType != "event" {
					t.Errorf("frame before the end %+v", f)
				}
			}
		})
	}
}

// Injected failures are Bedrock exceptions, before the stream as for a whole answer.
func TestBedrockInjectedFailures(t *testing.T) {
	s, base := startSim(t)
	tests := []struct {
		behavior  Behavior
		status    int
		exception string
		message   string
	}{
		{Behavior{FailStatus: 429, RetryAfter: 2}, 429, "ThrottlingException", "Too many requests, please wait before trying again."},
		{Behavior{FailStatus: 503}, 503, "ServiceUnavailableException", "Bedrock is unable to process your request."},
		{Behavior{FailStatus: 529}, 529, "ServiceUnavailableException", "Bedrock is unable to process your request."},
		{Behavior{FailStatus: 500}, 500, "InternalServerException", "The system encountered an unexpected error during processing. Try your request again."},
		{Behavior{FailStatus: 408}, 408, "ModelTimeoutException", "Model has timed out in processing the request. Try your request again."},
		{Behavior{FailStatus: 424}, 424, "ModelErrorException", "The model encountered an error processing the request. Try your request again."},
		{Behavior{FailStatus: 403}, 403, "AccessDeniedException", "You don't have access to the model with the specified model ID."},
		{Behavior{FailStatus: 404}, 404, "ResourceNotFoundException", "The provided model identifier is invalid."},
		{Behavior{FailStatus: 400}, 400, "ValidationException", "The request was rejected (simulated Bad Request)."},
		{Behavior{FailKind: FailRetryHint, RetryAfter: 3}, 429, "ThrottlingException", "Too many requests, please wait before trying again."},
		{Behavior{FailKind: FailQuota}, 400, "ServiceQuotaExceededException", "Your request exceeded the service quota for your account (simulated). " +
			"You can view your service quotas at https://docs.aws.amazon.com/servicequotas/latest/userguide/gs-request-quota.html."},
	}
	for _, tc := range tests {
		for _, op := range []string{"invoke", "invoke-with-response-stream", "converse", "converse-stream"} {
			t.Run(fmt.Sprintf("%d%s/%s", tc.status, tc.behavior.FailKind, op), func(t *testing.T) {
				s.SetBehavior("down", tc.behavior)
				body := invokeBody
				if strings.HasPrefix(op, "converse") {
					body = `{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`
				}
				resp, data := bedrockCall(t, base+"/r/down/model/anthropic.claude-sim-v1:0/"+op, body)
				if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" {
					t.Fatalf("status %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), data)
				}
				if got, want := resp.Header.Get("X-Amzn-Errortype"), tc.exception+":http://internal.amazon.com/coral/com.amazon.bedrock/"; got != want {
					t.Errorf("X-Amzn-Errortype %q, want %q", got, want)
				}
				if got, want := resp.Header.Get("Retry-After"), map[bool]string{true: "2"}[tc.behavior.RetryAfter == 2]; got != want {
					t.Errorf("Retry-After %q, want %q", got, want)
				}
				assertJSON(t, data, `{"message":`+string(marshal(t, tc.message))+`}`)
			})
		}
	}
}

// Behaviour shapes event streams as it shapes SSE: DropAfterChunks cuts the connection after
// that many messages, leaving a decoder mid-stream.
func TestBedrockStreamsDrop(t *testing.T) {
	s, base := startSim(t)
	s.SetBehavior("flaky", Behavior{DropAfterChunks: 3})
	for _, tc := range []struct{ op, body string }{
		{"invoke-with-response-stream", invokeBody},
		{"converse-stream", `{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`},
	} {
		t.Run(tc.op, func(t *testing.T) {
			resp, err := http.DefaultClient.Do(signedRequest(t, base+"/r/flaky/model/anthropic.claude-sim-v1:0/"+tc.op, tc.body, simCreds, time.Now()))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			frames, err := readFrames(resp.Body)
			if len(frames) != 3 || err == nil {
				t.Errorf("%d frames then %v, want 3 and a read error", len(frames), err)
			}
		})
	}
}

// Concurrent streams each frame their own messages: a shared encoder would interleave them.
func TestBedrockConcurrentStreams(t *testing.T) {
	_, base := startSim(t)
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		op, body := "converse-stream", `{"messages":[{"role":"user","content":[{"text":"reply with 40 words"}]}]}`
		if i%2 == 0 {
			op, body = "invoke-with-response-stream", strings.Replace(invokeBody, "3 words", "40 words", 1)
		}
		req := signedRequest(t, base+"/model/anthropic.claude-sim-v1:0/"+op, body, simCreds, time.Now())
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			frames, err := readFrames(resp.Body)
			if err == nil && len(frames) < 40 {
				err = fmt.Errorf("%s: %d frames", op, len(frames))
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

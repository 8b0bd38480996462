package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Amazon Bedrock's runtime API:
//
//	POST /model/{modelId}/invoke                        InvokeModel: Anthropic's Messages body
//	POST /model/{modelId}/invoke-with-response-stream   and answers, the stream in event-stream chunks
//	POST /model/{modelId}/converse, /converse-stream    Converse (converse.go, converse_stream.go)
//
// Requests are signed with SigV4 (sigv4.go); errors are an exception name in the
// X-Amzn-Errortype header and {"message"} in the body; streams are AWS event streams
// (eventstream.go). An InvokeModel body is Anthropic's without "model" (the URL names it) and
// "stream" (the operation says it), with anthropic_version "bedrock-2023-05-31" and, for beta
// features, an anthropic_beta list; its answer is Anthropic's, ids marked msg_bdrk_/toolu_bdrk_,
// the model named as Anthropic names it.

// bedrockAnthropicVersion is the anthropic_version an InvokeModel body must carry.
const bedrockAnthropicVersion = "bedrock-2023-05-31"

// registerBedrock mounts the Bedrock runtime endpoints, for the default route and /r/{route}.
// A model id keeps its ':' (url.PathEscape leaves it) or arrives escaped; the mux unescapes it
// either way, and an inference-profile ARN's '/' must arrive as %2F.
func (s *Server) registerBedrock() {
	d := s.bedrockDialect()
	for op, serve := range map[string]func(*exchange){
		"invoke":                      func(ex *exchange) { s.bedrockInvoke(ex, false) },
		"invoke-with-response-stream": func(ex *exchange) { s.bedrockInvoke(ex, true) },
		"converse":                    func(ex *exchange) { s.bedrockConverse(ex, false) },
		"converse-stream":             func(ex *exchange) { s.bedrockConverse(ex, true) },
	} {
		s.handleRoutes(http.MethodPost, "/model/{model}/"+op, s.endpoint(d, serve))
	}
}

// bedrockDialect: SigV4 against this server's keys, and Bedrock's exceptions.
func (s *Server) bedrockDialect() dialect {
	return dialect{authenticate: s.verifySigV4, failure: bedrockFailure, refusal: bedrockRefusal,
		writeError: writeBedrockError, requestIDHeader: "X-Amzn-Requestid"}
}

// bedrockFailure is the exception Bedrock answers a status with (the status is kept).
func bedrockFailure(status int) apiError {
	e := apiError{Status: status, Type: "InternalServerException",
		Message: "The system encountered an unexpected error during processing. Try your request again."}
	switch {
	case status == http.StatusUnauthorized:
		e.Type, e.Message = "UnrecognizedClientException", "The security token included in the request is invalid."
	case status == http.StatusForbidden:
		e.Type, e.Message = "AccessDeniedException", "You don't have access to the model with the specified model ID."
	case status == http.StatusNotFound:
		e.Type, e.Message = "ResourceNotFoundException", "The provided model identifier is invalid."
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		e.Type, e.Message = "ModelTimeoutException", "Model has timed out in processing the request. Try your request again."
	case status == http.StatusFailedDependency:
		e.Type, e.Message = "ModelErrorException", "The model encountered an error processing the request. Try your request again."
	case status == http.StatusTooManyRequests:
		e.Type, e.Message = "ThrottlingException", "Too many requests, please wait before trying again."
	case status == http.StatusServiceUnavailable || status == 529:
		e.Type, e.Message = "ServiceUnavailableException", "Bedrock is unable to process your request."
	case status < 500:
		e.Type, e.Message = "ValidationException", "The request was rejected (simulated "+http.StatusText(status)+")."
	}
	return e
}

// bedrockRefusal is Bedrock's wording of a refusal kind. Bedrock gives no retry hint anywhere,
// so retry_hint is a plain ThrottlingException; a quota is ServiceQuotaExceededException.
func bedrockRefusal(_ http.ResponseWriter, kind FailKind, _ time.Duration) apiError {
	if kind == FailQuota {
		return apiError{Status: http.StatusBadRequest, Type: "ServiceQuotaExceededException",
			Message: "Your request exceeded the service quota for your account (simulated). You can view your service quotas " +
				"at https://docs.aws.amazon.com/servicequotas/latest/userguide/gs-request-quota.html."}
	}
	return bedrockFailure(http.StatusTooManyRequests)
}

// awsAuthExceptions are raised by AWS's front door rather than by Bedrock, and say so in the
// namespace of their X-Amzn-Errortype.
var awsAuthExceptions = map[string]bool{"MissingAuthenticationTokenException": true, "IncompleteSignatureException": true,
	"InvalidSignatureException": true, "UnrecognizedClientException": true, "ExpiredTokenException": true}

// writeBedrockError writes an exception: its name in X-Amzn-Errortype, {"message"} as the body.
func writeBedrockError(w http.ResponseWriter, e apiError) {
	namespace := "com.amazon.bedrock"
	if awsAuthExceptions[e.Type] {
		namespace = "com.amazon.coral.service"
	}
	w.Header().Set("X-Amzn-Errortype", e.Type+":http://internal.amazon.com/coral/"+namespace+"/")
	writeJSON(w, e.Status, obj{{"message", e.Message}})
}

// bedrockInvalid is the ValidationException for a request Bedrock or its model refuses.
func bedrockInvalid(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "ValidationException", Message: fmt.Sprintf(format, args...)}
}

// bedrockModelVersionRe is the version suffix of a Bedrock model id ("-v1:0").
var bedrockModelVersionRe = regexp.MustCompile(`-v\d+:\d+$`)

// bedrockModelName is the model a Bedrock model id names, as the model's maker names it:
// "us.anthropic.claude-sonnet-4-5-20250929-v1:0" and an inference-profile ARN ending in it are
// "claude-sonnet-4-5-20250929", which is what InvokeModel's answer says in "model". The
// answer's words name it too, so the same model answers alike on Bedrock and directly.
func bedrockModelName(id string) string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	if i := strings.LastIndexByte(id, '.'); i >= 0 {
		id = id[i+1:]
	}
	return bedrockModelVersionRe.ReplaceAllString(id, "")
}

// platformMembers splits a cloud platform's Anthropic body into its top-level members.
func platformMembers(body []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	return m, json.Unmarshal(body, &m) == nil && m != nil
}

// checkInvokeBody is what Bedrock says of an InvokeModel body that is not Anthropic's body as
// Bedrock takes it, or "". It also returns the anthropic_beta flags.
func checkInvokeBody(body []byte) (string, []string) {
	m, ok := platformMembers(body)
	if !ok {
		return "#: expected type: JSONObject", nil
	}
	for _, key := range []string{"model", "stream"} {
		if _, ok := m[key]; ok {
			return "#: extraneous key [" + key + "] is not permitted", nil
		}
	}
	raw, ok := m["anthropic_version"]
	if !ok {
		return "#: required key [anthropic_version] not found", nil
	}
	var version string
	if json.Unmarshal(raw, &version) != nil || version != bedrockAnthropicVersion {
		return "#/anthropic_version: " + string(raw) + " is not a valid enum value", nil
	}
	var betas []string
	if raw, ok := m["anthropic_beta"]; ok && json.Unmarshal(raw, &betas) != nil {
		return "#/anthropic_beta: expected type: JSONArray of strings", nil
	}
	return "", betas
}

// bedrockInvoke answers InvokeModel (stream false) and InvokeModelWithResponseStream.
func (s *Server) bedrockInvoke(ex *exchange, stream bool) {
	problem, betas := checkInvokeBody(ex.body)
	if problem != "" {
		writeBedrockError(ex.w, *bedrockInvalid("Malformed input request: %s, please reformat your input and try again.", problem))
		return
	}
	model := bedrockModelName(ex.r.PathValue("model"))
	q, _, apiErr := decodeMessages(ex.body, model, false, slices.Contains(betas, systemTurnsBeta))
	if apiErr != nil {
		writeBedrockError(ex.w, *bedrockInvalid("%s", apiErr.Message)) // the model's own 400, relayed
		return
	}
	reply := s.messagesReplyFor("bdrk_", model, decide(q))
	if stream {
		ex.w.Header().Set("X-Amzn-Bedrock-Content-Type", "application/json")
		playStream(ex, framingEventStream, invokeStreamEvents(reply, ex.behavior))
		return
	}
	a := reply.answer
	h := ex.w.Header()
	h.Set("X-Amzn-Bedrock-Input-Token-Count", strconv.Itoa(a.uncachedTokens()))
	h.Set("X-Amzn-Bedrock-Output-Token-Count", strconv.Itoa(a.outputTokens))
	h.Set("X-Amzn-Bedrock-Invocation-Latency", strconv.FormatInt(ex.behavior.FirstByteDelay.Milliseconds(), 10))
	if a.cachedTokens > 0 {
		h.Set("X-Amzn-Bedrock-Cache-Read-Input-Token-Count", strconv.Itoa(a.cachedTokens))
		h.Set("X-Amzn-Bedrock-Cache-Write-Input-Token-Count", "0")
	}
	writeJSON(ex.w, http.StatusOK, reply.body())
}

// streamLatency is how long the simulated model takes to send event n (0-based) of a stream:
// the first-byte delay plus the pacing before it. Bedrock reports latencies; the simulator
// reports the ones its behaviour plans, so they are exact and repeatable.
func streamLatency(b Behavior, n int) time.Duration {
	return b.FirstByteDelay + time.Duration(n)*b.chunkInterval()
}

package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Google Vertex AI's publisher-model endpoints:
//
//	POST /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent
//	     …:streamGenerateContent[?alt=sse], …:countTokens          Gemini, answered as gemini.go answers
//	POST /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{m}:rawPredict
//	     …:streamRawPredict                                       Claude: Anthropic's body and answers
//
// (also under /v1beta1). Auth is an OAuth access token of the simulator's Google token endpoint
// (google_token.go); the platform's errors (auth, injected failures, a malformed Claude body)
// are Google's, while the Claude model's own refusals of a request keep Anthropic's shape, as
// Vertex relays them. A Claude body is Anthropic's without "model" (the URL names it), with
// anthropic_version "vertex-2023-10-16"; "stream": true asks for the stream, as on Anthropic's
// API. Its answer is Anthropic's, ids marked msg_vrtx_/toolu_vrtx_, and "claude-x@20250101"
// named "claude-x-20250101".

// vertexAnthropicVersion is the anthropic_version a Claude body must carry.
const vertexAnthropicVersion = "vertex-2023-10-16"

// registerVertex mounts the Vertex endpoints, for the default route and /r/{route}. The model
// and method share one path segment, as on the Gemini API.
func (s *Server) registerVertex() {
	d := s.vertexDialect()
	for _, version := range []string{"/v1", "/v1beta1"} {
		models := version + "/projects/{project}/locations/{location}/publishers/"
		s.handleRoutes(http.MethodPost, models+"google/models/{action}", s.endpoint(d, s.gemini))
		s.handleRoutes(http.MethodPost, models+"anthropic/models/{action}", s.endpoint(d, s.vertexClaude))
		s.handleRoutes(http.MethodPost, models+"{publisher}/models/{action}", s.endpoint(d, vertexUnknownModel))
	}
}

// vertexDialect: a Google access token, Google's errors with Vertex's wording.
func (s *Server) vertexDialect() dialect {
	return dialect{authenticate: s.googleBearer, failure: vertexFailure, refusal: geminiRefusal, writeError: writeGeminiError}
}

// vertexFailure is Google's error for a status, with Vertex's 429.
func vertexFailure(status int) apiError {
	e := geminiFailure(status)
	if status == http.StatusTooManyRequests {
		e.Message = "Resource exhausted (simulated). Please try again later. Please refer to " +
			"https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details."
	}
	return e
}

// vertexUnknownModel is Vertex's 404 for a publisher the simulator does not serve.
func vertexUnknownModel(ex *exchange) {
	model, _, _ := strings.Cut(ex.r.PathValue("action"), ":")
	writeGeminiError(ex.w, apiError{Status: http.StatusNotFound, Type: "NOT_FOUND", Message: fmt.Sprintf(
		"Publisher Model `projects/%s/locations/%s/publishers/%s/models/%s` not found.",
		ex.r.PathValue("project"), ex.r.PathValue("location"), ex.r.PathValue("publisher"), model)})
}

// checkRawPredictBody is what Vertex says of a Claude body that is not Anthropic's body as
// Vertex takes it, or "".
func checkRawPredictBody(body []byte) string {
	m, ok := platformMembers(body)
	if !ok {
		return "Invalid JSON payload received. The request body must be a JSON object."
	}
	if _, ok := m["model"]; ok {
		return "Invalid JSON payload received. Unknown name \"model\": the model is named by the URL " +
			"(publishers/anthropic/models/{model}:rawPredict), not the request body."
	}
	var version string
	if json.Unmarshal(m["anthropic_version"], &version) != nil || version != vertexAnthropicVersion {
		return "anthropic_version: Input should be '" + vertexAnthropicVersion + "'"
	}
	return ""
}

// vertexClaude answers rawPredict and streamRawPredict.
func (s *Server) vertexClaude(ex *exchange) {
	action := ex.r.PathValue("action")
	model, method, _ := strings.Cut(action, ":")
	if method != "rawPredict" && method != "streamRawPredict" {
		writeGeminiError(ex.w, apiError{Status: http.StatusNotFound, Type: "NOT_FOUND",
			Message: fmt.Sprintf("Method %q is not found for publishers/anthropic/models/%s.", method, model)})
		return
	}
	if problem := checkRawPredictBody(ex.body); problem != "" {
		writeGeminiError(ex.w, *invalidGemini("%s", problem))
		return
	}
	name := strings.ReplaceAll(model, "@", "-")
	q, req, apiErr := decodeMessages(ex.body, name, false, systemTurnsAllowed(ex.r))
	if apiErr != nil {
		writeMessagesError(ex.w, *apiErr)
		return
	}
	reply := s.messagesReplyFor("vrtx_", name, decide(q))
	if req.Stream {
		playStream(ex, framingSSE, messagesEvents(reply))
		return
	}
	writeJSON(ex.w, http.StatusOK, reply.body())
}

package simulator

import (
	"net/http"
	"strings"
)

// registerOpenAI mounts the OpenAI-compatible endpoints, for the default route and /r/{route}.
func (s *Server) registerOpenAI() {
	s.handleRoutes(http.MethodPost, "/v1/chat/completions", s.endpoint(openAI, s.chatCompletions))
	s.handleRoutes(http.MethodPost, "/v1/responses", s.endpoint(openAI, s.responses))
	s.handleRoutes(http.MethodPost, "/v1/embeddings", s.endpoint(openAI, s.embeddings))
	s.handleRoutes(http.MethodGet, "/v1/models", s.endpoint(openAI, s.models))
	s.handleRoutes(http.MethodPost, "/v1/images/generations", s.endpoint(openAI, s.images))
	s.handleRoutes(http.MethodPost, "/v1/videos", s.endpoint(openAI, s.createVideo))
	s.handleRoutes(http.MethodGet, "/v1/videos/{video}", s.endpoint(openAI, s.getVideo))
	s.handleRoutes(http.MethodGet, "/v1/videos/{video}/content", s.endpoint(openAI, s.videoContent))
}

// openAI is the dialect of every OpenAI endpoint: Bearer auth and the ErrorResponse body.
var openAI = dialect{
	authorized: bearerAuthorized,
	unauthorized: apiError{
		Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key",
		Message: "You didn't provide an API key. You need to provide your API key in an " +
			"Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
	},
	failure:    openAIFailure,
	refusal:    openAIRefusal,
	writeError: writeOpenAIError,
}

// bearerAuthorized accepts any non-empty Bearer token: the simulator checks that the gateway
// sends the route's credential, not which one.
func bearerAuthorized(r *http.Request) bool {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(token) != ""
}

// apiError is a format-neutral error; each dialect renders it in its own body shape.
type apiError struct {
	Status  int
	Type    string
	Code    string // "" is sent as null
	Param   string // "" is sent as null
	Message string
	// RetryAfter is the injected failure's Retry-After in seconds (0: none), for formats
	// that also say it in the body (Gemini's RetryInfo).
	RetryAfter int
	// RetryDelay, when set, is Gemini's RetryInfo delay as written ("34.4s"), instead of
	// RetryAfter seconds.
	RetryDelay string
	// QuotaID, when set, adds a Gemini QuotaFailure naming the exhausted quota.
	QuotaID string
	// Reason, when set, adds a Google ErrorInfo with this reason ("ACCESS_TOKEN_EXPIRED"),
	// as Vertex AI's auth refusals carry.
	Reason string
}

// openAIFailure is the error OpenAI sends for a status, so gateways see the type and code they
// will meet in production (and can map them to other formats).
func openAIFailure(status int) apiError {
	e := apiError{Status: status, Type: "server_error",
		Message: "The server had an error while processing your request (simulated)."}
	switch {
	case status == http.StatusTooManyRequests:
		e.Type, e.Code = "rate_limit_error", "rate_limit_exceeded"
		e.Message = "Rate limit reached for requests (simulated). Please try again later."
	case status == http.StatusServiceUnavailable:
		e.Type = "service_unavailable_error"
		e.Message = "The service is temporarily unavailable (simulated). Please try again later."
	case status == 529:
		e.Type = "overloaded_error"
		e.Message = "The server is overloaded (simulated). Please try again later."
	case status == http.StatusUnauthorized:
		e.Type, e.Code = "invalid_request_error", "invalid_api_key"
		e.Message = "Incorrect API key provided (simulated)."
	case status == http.StatusForbidden:
		e.Type = "permission_error"
		e.Message = "You are not allowed to use this model (simulated)."
	case status == http.StatusNotFound:
		e.Type, e.Code = "invalid_request_error", "model_not_found"
		e.Message = "The model does not exist or you do not have access to it (simulated)."
	case status < 500:
		e.Type = "invalid_request_error"
		e.Message = "The request was rejected (simulated " + http.StatusText(status) + ")."
	}
	return e
}

// writeOpenAIError writes the spec's ErrorResponse: message and type always, param and code
// as null when absent.
func writeOpenAIError(w http.ResponseWriter, e apiError) {
	type body struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	b := body{Message: e.Message, Type: e.Type}
	if e.Param != "" {
		b.Param = &e.Param
	}
	if e.Code != "" {
		b.Code = &e.Code
	}
	writeJSON(w, e.Status, struct {
		Error body `json:"error"`
	}{b})
}

// badRequest is the 400 OpenAI sends for an invalid request field.
func badRequest(param, msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Message: msg}
}

// models answers GET /v1/models with the one model the simulator claims to serve; it answers
// any model name on the other endpoints.
func (s *Server) models(ex *exchange) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	writeJSON(ex.w, http.StatusOK, struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", []model{{ID: "sim-model", Object: "model", Created: 1700000000, OwnedBy: "simulator"}}})
}

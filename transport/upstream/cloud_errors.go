package upstream

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// Bedrock names its errors in the X-Amzn-Errortype header ("ThrottlingException:http://…")
// and in-stream exception frames ("throttlingException"), with a body of {"message"} only.
// The statuses are AWS's; the kinds it adds to the status rules are errors of the model's
// side that another route may well not have.
var bedrockExceptions = map[string]int{
	"validationexception":           http.StatusBadRequest,
	"accessdeniedexception":         http.StatusForbidden,
	"invalidsignatureexception":     http.StatusForbidden,
	"resourcenotfoundexception":     http.StatusNotFound,
	"modeltimeoutexception":         http.StatusRequestTimeout,
	"modelerrorexception":           http.StatusFailedDependency,
	"modelstreamerrorexception":     http.StatusFailedDependency,
	"servicequotaexceededexception": http.StatusTooManyRequests,
	"throttlingexception":           http.StatusTooManyRequests,
	"modelnotreadyexception":        http.StatusTooManyRequests,
	"internalserverexception":       http.StatusInternalServerError,
	"serviceunavailableexception":   http.StatusServiceUnavailable,
}

// bedrockExceptionStatus is the HTTP status of a Bedrock exception type (500 when unknown).
func bedrockExceptionStatus(kind string) int {
	if s, ok := bedrockExceptions[strings.ToLower(kind)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// bedrockErrorType is the exception type an X-Amzn-Errortype header names.
func bedrockErrorType(h http.Header) string {
	t, _, _ := strings.Cut(h.Get("X-Amzn-Errortype"), ":")
	return t
}

// anthropicErrorType is Anthropic's error type for a status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable, 529:
		return "overloaded_error"
	}
	return "api_error"
}

// cloudError adjusts a cloud's failed answer: a Bedrock model's own failure (424) fails
// over like a 5xx, and a messages route's error body is rewritten in Anthropic's shape, so
// that a messages client reading it as it is, and the messages decoder, find the message.
func cloudError(rt *catalog.Route, e *Error) {
	switch rt.Provider {
	case catalog.ProviderBedrock:
		switch strings.ToLower(bedrockErrorType(e.Header)) {
		case "throttlingexception", "servicequotaexceededexception":
			if e.Kind != RateLimited {
				e.Kind, e.Message = RateLimited, readErrorBody(e.Body).message
			}
		case "modelerrorexception", "modeltimeoutexception", "modelnotreadyexception":
			if e.Kind == ClientError {
				e.Kind = ServerError
			}
		}
		if rt.Format == catalog.FormatMessages {
			var b struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(e.Body, &b)
			e.Body = anthropicError(e.Status, b.Message)
			e.Header = e.Header.Clone()
			e.Header.Set("Content-Type", "application/json")
		}
	case catalog.ProviderVertex:
		var g struct {
			Type  string `json:"type"`
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(e.Body, &g)
		if rt.Format == catalog.FormatMessages && g.Type != "error" { // Google's envelope, from Vertex before the model
			e.Body = anthropicError(e.Status, g.Error.Message)
			e.Header = e.Header.Clone()
			e.Header.Set("Content-Type", "application/json")
		}
	}
}

func anthropicError(status int, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": anthropicErrorType(status), "message": msg}})
	return b
}

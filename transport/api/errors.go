package api

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/modelgate/modelgate/codec/chat"
)

// apiError is an error as the client sees it; render writes it in the client's format.
type apiError struct {
	Status     int
	Type       string
	Code       string
	Param      string
	Message    string
	RetryAfter int // seconds; sets Retry-After when > 0
}

func (e *apiError) Error() string { return e.Message }

func errInvalid(param, msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_request", Param: param, Message: msg}
}

func errUnauthorized(msg string) *apiError {
	return &apiError{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_api_key", Message: msg}
}

// render writes the error in the chat-completions shape, the shape of every endpoint served
// so far; the request id travels in the body as well as the header so it survives logs.
func render(w http.ResponseWriter, requestID string, e *apiError) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	w.WriteHeader(e.Status)
	body := chat.ErrorBody(e.Message, e.Type, e.Code, e.Param)
	// Splice the request id into the error object: {"error":{...,"request_id":"…"}}.
	if len(body) > 2 && requestID != "" {
		id, _ := json.Marshal(requestID)
		body = append(body[:len(body)-2], append(append([]byte(`,"request_id":`), id...), '}', '}')...)
	}
	w.Write(body)
}

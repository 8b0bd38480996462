package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/gemini"
	"github.com/modelgate/modelgate/codec/ir"
)

// apiError is an error as the client sees it; render writes it in the client's format.
type apiError struct {
	Status     int
	Type       string
	Code       string
	Param      string
	Message    string
	RetryAfter int            // seconds; sets Retry-After when > 0
	Extra      map[string]any // more members of the error object (retry_after_seconds, resets_at, …)
	Header     http.Header    // more response headers (a key budget's reset time)
}

func (e *apiError) Error() string { return e.Message }

func errInvalid(param, msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_request", Param: param, Message: msg}
}

func errUnauthorized(msg string) *apiError {
	return &apiError{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_api_key", Message: msg}
}

// writeError writes the error in the client's format (the chat shape unless the endpoint
// speaks another). The request id travels in the body as well as the header so it survives
// logs. A known key's answer goes through the ledger (render, fail), which adds its rate
// headers whatever refused it.
func writeError(w http.ResponseWriter, x *exchange, e *apiError) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	for k, v := range e.Header {
		h[k] = v
	}
	w.WriteHeader(e.Status)
	if x.envelope == ir.ClientFormat(gemini.Format) {
		w.Write(googleErrorBody(e, x.id)) // Google's envelope has its own place for all of it
		return
	}
	var body []byte
	depth := 2 // {"error":{…,"request_id":"…"}}
	if x.envelope == nil {
		body = chat.ErrorBody(e.Message, e.Type, e.Code, e.Param)
	} else {
		body = x.envelope.EncodeError(&ir.Error{Status: e.Status, Kind: kindOf(e.Status), Code: e.Code, Param: e.Param, Message: e.Message})
		if bytes.HasPrefix(body, []byte(`{"type":"error"`)) {
			depth = 1 // the messages envelope keeps it at the top, as its vendor does
		}
	}
	body = splice(body, 2, extraFields(e.Extra)) // limit details go in the error object
	body = spliceRequestID(body, depth, x.id)
	w.Write(body)
}

// splice inserts ,members before the last depth closing braces of a JSON object.
func splice(body []byte, depth int, members []byte) []byte {
	if len(members) == 0 || len(body) <= depth {
		return body
	}
	cut := len(body) - depth
	out := append([]byte{}, body[:cut]...)
	out = append(out, ',')
	out = append(out, members...)
	return append(out, body[cut:]...)
}

// spliceRequestID adds "request_id" before the last depth closing braces of a JSON object.
func spliceRequestID(body []byte, depth int, id string) []byte {
	if id == "" {
		return body
	}
	q, _ := json.Marshal(id)
	return splice(body, depth, append([]byte(`"request_id":`), q...))
}

// kindOf is the neutral error class of a status, for formats other than chat.
func kindOf(status int) ir.ErrorKind { return ir.KindForStatus(status) }

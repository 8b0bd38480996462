package gemini

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/modelgate/modelgate/codec/ir"
)

// apiError is Gemini's error envelope's body: {"error":{"code","message","status","details"}}.
type apiError struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Status  string            `json:"status"`
	Details []json.RawMessage `json:"details"`
}

// statusKinds maps the google.rpc status names Gemini uses to neutral error kinds.
var statusKinds = map[string]ir.ErrorKind{
	"INVALID_ARGUMENT":    ir.ErrInvalidRequest,
	"OUT_OF_RANGE":        ir.ErrInvalidRequest,
	"FAILED_PRECONDITION": ir.ErrBilling, // free tier unavailable in the region, billing not set up
	"UNAUTHENTICATED":     ir.ErrAuthentication,
	"PERMISSION_DENIED":   ir.ErrPermission,
	"NOT_FOUND":           ir.ErrNotFound,
	"RESOURCE_EXHAUSTED":  ir.ErrRateLimit,
	"INTERNAL":            ir.ErrServer,
	"UNKNOWN":             ir.ErrServer,
	"DATA_LOSS":           ir.ErrServer,
	"UNAVAILABLE":         ir.ErrOverloaded,
	"DEADLINE_EXCEEDED":   ir.ErrTimeout,
}

// statusCodes is the HTTP status of a status name, for errors that arrive in a stream.
var statusCodes = map[string]int{
	"INVALID_ARGUMENT": 400, "OUT_OF_RANGE": 400, "FAILED_PRECONDITION": 400,
	"UNAUTHENTICATED": 401, "PERMISSION_DENIED": 403, "NOT_FOUND": 404, "ABORTED": 409,
	"ALREADY_EXISTS": 409, "RESOURCE_EXHAUSTED": 429, "CANCELLED": 499, "INTERNAL": 500,
	"UNKNOWN": 500, "DATA_LOSS": 500, "UNIMPLEMENTED": 501, "UNAVAILABLE": 503,
	"DEADLINE_EXCEEDED": 504,
}

// toIR converts the envelope; status is the HTTP status (0 inside a 200 answer or stream,
// where the envelope's code stands in).
func (e *apiError) toIR(status int) *ir.Error {
	if status == 0 {
		status = e.Code
	}
	if status == 0 {
		status = statusCodes[e.Status]
	}
	if status == 0 {
		status = http.StatusInternalServerError
	}
	kind, ok := statusKinds[e.Status]
	if !ok {
		kind = kindForStatus(status)
	}
	if kind == ir.ErrInvalidRequest && e.reason() == "API_KEY_INVALID" {
		kind = ir.ErrAuthentication // Gemini answers a bad key with 400 INVALID_ARGUMENT
	}
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &ir.Error{Status: status, Kind: kind, Code: e.Status, Message: msg}
}

// reason is the ErrorInfo reason in details, if any.
func (e *apiError) reason() string {
	for _, d := range e.Details {
		var info struct {
			Reason any `json:"reason"`
		}
		if json.Unmarshal(d, &info) == nil {
			if s, ok := info.Reason.(string); ok && s != "" {
				return s
			}
		}
	}
	return ""
}

func kindForStatus(status int) ir.ErrorKind { return ir.KindForStatus(status) }

const maxErrorText = 1024

// DecodeError reads a non-2xx answer: Gemini's envelope (also inside the JSON array the
// non-SSE stream endpoint writes), or any other body, whose text becomes the message.
func (format) DecodeError(status int, body []byte) *ir.Error {
	trimmed := bytes.TrimSpace(body)
	if e := envelope(trimmed); e != nil {
		return e.toIR(status)
	}
	if status == 0 {
		status = http.StatusBadGateway
	}
	msg := strings.ToValidUTF8(string(trimmed), "\uFFFD")
	if len(msg) > maxErrorText {
		cut := maxErrorText
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &ir.Error{Status: status, Kind: kindForStatus(status), Message: msg}
}

// envelope is the error of Google's envelope {"error":{…}}, alone or as the first element
// of the JSON array the non-SSE stream endpoint writes; nil when body is neither.
func envelope(body []byte) *apiError {
	var env struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil {
		return env.Error
	}
	var arr []struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(body, &arr) == nil && len(arr) > 0 {
		return arr[0].Error
	}
	return nil
}

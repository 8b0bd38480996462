package chat

import (
	"encoding/json"
	"net/http"

	"github.com/modelgate/modelgate/codec/ir"
)

// Format is the chat-completions format as clients and routes speak it.
var Format format

type format struct{}

var (
	_ ir.ClientFormat   = format{}
	_ ir.UpstreamFormat = format{}
	_ ir.ModelRewriter  = format{}
)

func (format) DecodeRequest(body []byte) (*ir.Request, error) { return DecodeIR(body) }
func (format) EncodeResponse(r *ir.Response, model string) []byte {
	return EncodeAnswer(r, model)
}
func (format) NewStreamEncoder(out ir.Frames, req *ir.Request, model string) ir.StreamEncoder {
	return NewStreamEncoder(out, req, model)
}
func (format) EncodeError(e *ir.Error) []byte { return EncodeError(e) }
func (format) EncodeRequest(r *ir.Request, upstreamModel string, loss *ir.Loss) ([]byte, error) {
	return EncodeIR(r, upstreamModel, loss)
}
func (format) RewriteModel(data []byte, client string) []byte {
	return RewriteModel(data, client)
}
func (format) Path(string, bool) string                         { return "/chat/completions" }
func (format) DecodeResponse(body []byte) (*ir.Response, error) { return DecodeAnswer(body) }
func (format) NewStreamDecoder() ir.StreamDecoder               { return NewStreamDecoder() }
func (format) DecodeError(status int, body []byte) *ir.Error {
	var env struct {
		Error *wireError `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil {
		return errorFromWire(status, env.Error)
	}
	return &ir.Error{Status: status, Kind: kindForStatus(status), Message: upstreamMessage(status, body)}
}

// errorTypes are the chat format's type names for each neutral kind.
var errorTypes = map[ir.ErrorKind]string{
	ir.ErrInvalidRequest: "invalid_request_error", ir.ErrAuthentication: "authentication_error",
	ir.ErrPermission: "permission_error", ir.ErrNotFound: "invalid_request_error",
	ir.ErrTooLarge: "invalid_request_error", ir.ErrRateLimit: "rate_limit_error",
	ir.ErrBilling: "insufficient_quota", ir.ErrServer: "server_error",
	ir.ErrOverloaded: "overloaded_error", ir.ErrTimeout: "timeout_error",
}

// EncodeError renders a neutral error in the chat envelope.
func EncodeError(e *ir.Error) []byte {
	typ := errorTypes[e.Kind]
	if typ == "" {
		typ = "server_error"
	}
	return ErrorBody(e.Message, typ, e.Code, e.Param)
}

func errorFromWire(status int, w *wireError) *ir.Error {
	e := &ir.Error{Status: status, Message: w.Message}
	var code string
	if json.Unmarshal(w.Code, &code) == nil {
		e.Code = code
	}
	if w.Param != nil {
		e.Param = *w.Param
	}
	switch {
	case w.Type == "rate_limit_error" || code == "rate_limit_exceeded":
		e.Kind = ir.ErrRateLimit
	case w.Type == "insufficient_quota" || code == "insufficient_quota":
		e.Kind = ir.ErrBilling
	case w.Type == "authentication_error" || code == "invalid_api_key":
		e.Kind = ir.ErrAuthentication
	case w.Type == "permission_error":
		e.Kind = ir.ErrPermission
	case code == "model_not_found":
		e.Kind = ir.ErrNotFound
	case w.Type == "invalid_request_error":
		e.Kind = ir.ErrInvalidRequest
	case w.Type == "service_unavailable_error" || w.Type == "overloaded_error":
		e.Kind = ir.ErrOverloaded
	default:
		e.Kind = kindForStatus(status)
	}
	return e
}

func kindForStatus(status int) ir.ErrorKind { return ir.KindForStatus(status) }

func upstreamMessage(status int, body []byte) string {
	msg := http.StatusText(status)
	if len(body) > 0 && len(body) < 512 {
		msg = "upstream answered " + http.StatusText(status) + ": " + string(body)
	}
	return msg
}

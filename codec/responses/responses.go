// Package responses translates the Responses format (POST /v1/responses): client requests,
// answers, streams and errors to and from IR, and the same for routes that speak it.
//
// Conventions beyond docs/conversion.md that this package fixes:
//   - Custom (free-form) tools are IR tools with Custom set and a one-string-parameter schema
//     `{"input": string}`; their calls carry `{"input":"<text>"}` as arguments, so a format
//     without custom tools declares them as ordinary functions and the call converts back.
//   - Hosted tools (web_search, file_search, mcp, …), the raw definitions of custom tools and a
//     hosted tool_choice stay in Request.Extra["tools"] / Extra["tool_choice"]; only a responses
//     route re-emits them.
//   - Reasoning items travel as PartReasoning{Text: summary, Encrypted, ID, SignatureFormat
//     "responses"}; in streams the item id rides on EvReasoning.ID and the encrypted content on
//     EvSignature{Format: "responses", Text: encrypted_content, ID: item id}.
package responses

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

// Format is the Responses format, for clients and for routes.
var Format = format{}

type format struct{}

var (
	_ ir.ClientFormat   = Format
	_ ir.UpstreamFormat = Format
	_ ir.ModelRewriter  = Format
	_ ir.DeltaSkipper   = format{}
)

// RewriteModel names the client's model in a whole answer (the top-level model) or a stream
// event that carries the response object (response.model), whatever the value and spacing,
// every other byte kept; other events have no model and come back as they are.
func (format) RewriteModel(data []byte, client string) []byte {
	m, _ := json.Marshal(client)
	out, _ := jsonscan.Replace(data, m, modelPaths...)
	return out
}

var modelPaths = [][]string{{"model"}, {"response", "model"}}

// SignatureFormat marks reasoning state (encrypted_content, item ids) issued by a responses
// upstream.
const SignatureFormat = codec.FormatResponses

// Path is the same for streamed and whole answers.
func (format) Path(string, bool) string { return "/responses" }

// Test seams: ids and the clock.
var (
	newID = codec.RandomID
	now   = time.Now
)

// responseID gives an upstream id the resp_ shape, minting one when there is none.
func responseID(id string) string {
	switch {
	case id == "":
		return newID("resp_")
	case strings.HasPrefix(id, "resp_"):
		return id
	default:
		return "resp_" + id
	}
}

// EncodeError renders the OpenAI error envelope.
func (format) EncodeError(e *ir.Error) []byte {
	typ, code := wireErrorType(e)
	type inner struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	in := inner{Message: e.Message, Type: typ}
	if e.Param != "" {
		in.Param = &e.Param
	}
	if code != "" {
		in.Code = &code
	}
	b, _ := json.Marshal(struct {
		Error inner `json:"error"`
	}{in})
	return b
}

// wireErrorType is the OpenAI `type` for a neutral kind, and the code (the error's own, or
// the one OpenAI uses for that kind).
func wireErrorType(e *ir.Error) (typ, code string) {
	code = e.Code
	switch e.Kind {
	case ir.ErrAuthentication:
		typ = "authentication_error"
	case ir.ErrPermission:
		typ = "permission_error"
	case ir.ErrNotFound, ir.ErrInvalidRequest, ir.ErrTooLarge:
		typ = "invalid_request_error"
	case ir.ErrRateLimit:
		typ = "rate_limit_error"
		if code == "" {
			code = "rate_limit_exceeded"
		}
	case ir.ErrBilling:
		typ = "insufficient_quota"
		if code == "" {
			code = "insufficient_quota"
		}
	case ir.ErrOverloaded:
		typ = "service_unavailable_error"
	case ir.ErrTimeout:
		typ = "timeout_error"
	default:
		typ = "server_error"
	}
	return typ, code
}

// DecodeError reads an upstream's error body; the status is kept and decides the kind when
// the body says nothing more precise.
func (format) DecodeError(status int, body []byte) *ir.Error {
	var env struct {
		Error *struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Param   json.RawMessage `json:"param"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	e := &ir.Error{Status: status}
	if json.Unmarshal(body, &env) == nil && env.Error != nil {
		e.Message = env.Error.Message
		e.Code = check.ScalarText(env.Error.Code)
		e.Param = check.ScalarText(env.Error.Param)
		e.Kind = classify(status, env.Error.Type, e.Code)
	} else {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 512 {
			e.Message = e.Message[:512]
		}
		e.Kind = classify(status, "", "")
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("upstream error %d %s", status, http.StatusText(status))
	}
	return e
}

// classify maps an OpenAI error's code, type and status onto a neutral kind, most specific
// first.
func classify(status int, typ, code string) ir.ErrorKind {
	switch code {
	case "rate_limit_exceeded":
		return ir.ErrRateLimit
	case "insufficient_quota", "billing_hard_limit_reached":
		return ir.ErrBilling
	case "invalid_api_key", "invalid_authentication":
		return ir.ErrAuthentication
	case "model_not_found", "not_found":
		return ir.ErrNotFound
	case "server_error":
		return ir.ErrServer
	case "overloaded", "server_overloaded", "server_is_overloaded", "slow_down":
		return ir.ErrOverloaded
	case "context_length_exceeded", "invalid_prompt":
		return ir.ErrInvalidRequest
	}
	switch typ {
	case "invalid_request_error":
		return ir.ErrInvalidRequest
	case "rate_limit_error", "requests", "tokens":
		return ir.ErrRateLimit
	case "insufficient_quota", "billing_error":
		return ir.ErrBilling
	case "authentication_error":
		return ir.ErrAuthentication
	case "permission_error":
		return ir.ErrPermission
	case "not_found_error":
		return ir.ErrNotFound
	case "server_error", "api_error":
		if status == http.StatusServiceUnavailable {
			return ir.ErrOverloaded
		}
		return ir.ErrServer
	case "service_unavailable_error", "overloaded_error":
		return ir.ErrOverloaded
	case "timeout_error":
		return ir.ErrTimeout
	}
	return ir.KindForStatus(status)
}

// statusFor is the HTTP status that goes with a kind when the source gave none.
func statusFor(k ir.ErrorKind) int {
	if k == ir.ErrBilling {
		return http.StatusTooManyRequests // OpenAI answers insufficient_quota with 429
	}
	return ir.StatusOfKind(k)
}

// failedError is the error of a response whose status is failed (`response.error`).
func failedError(r *readResponse) *ir.Error {
	if r == nil || r.Error == nil {
		return responseError("", "server_error", "the upstream failed to generate a response", "")
	}
	return responseError(r.Error.Type, r.Error.Code, r.Error.Message, "")
}

// responseError is the error of a failed response (`response.error`, the `error` event), in
// neutral terms so each client format names it in its own vocabulary.
func responseError(typ, code, message, param string) *ir.Error {
	k := classify(0, typ, code) // unknown codes: the model or the service failed (api_error)
	if strings.Contains(code, "image") || code == "bio_policy" || code == "data_residency_mismatch" {
		k = ir.ErrInvalidRequest // the request's content was refused
	}
	return &ir.Error{Status: statusFor(k), Kind: k, Code: code, Param: param, Message: message}
}

// responseErrorCode is the code of a failed response for a neutral error: a ResponseErrorCode
// of the spec's enum, or one of the two codes OpenAI sends beyond it that Codex acts on (it
// stops retrying): context_length_exceeded and insufficient_quota.
func responseErrorCode(e *ir.Error) string {
	switch e.Code {
	case "context_length_exceeded", "insufficient_quota":
		return e.Code
	case "server_error", "rate_limit_exceeded", "invalid_prompt", "vector_store_timeout",
		"invalid_image", "invalid_image_format", "invalid_base64_image", "invalid_image_url",
		"image_too_large", "image_too_small", "image_parse_error",
		"image_content_policy_violation", "invalid_image_mode", "image_file_too_large",
		"unsupported_image_media_type", "empty_image_file", "failed_to_download_image",
		"image_file_not_found", "data_residency_mismatch", "bio_policy":
		return e.Code
	}
	switch e.Kind {
	case ir.ErrRateLimit:
		return "rate_limit_exceeded"
	case ir.ErrBilling:
		return "insufficient_quota"
	case ir.ErrInvalidRequest:
		return "invalid_prompt"
	}
	return "server_error"
}

// deltaKinds are the stream events that carry only a piece of content.
var deltaKinds = []string{"response.output_text.delta", "response.refusal.delta",
	"response.reasoning_summary_text.delta", "response.reasoning_text.delta",
	"response.function_call_arguments.delta", "response.custom_tool_call_input.delta"}

// ContentDelta implements ir.DeltaSkipper; the decoder takes an event's kind from its data's
// type before its SSE name.
func (format) ContentDelta(name, data []byte) bool {
	return codec.IsDeltaEvent(name, data, false, deltaKinds)
}

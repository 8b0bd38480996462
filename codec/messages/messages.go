// Package messages translates the Claude-style messages format.
//
// It is both a client format (requests in, answers, streams and errors out) and an upstream
// format (requests out, answers, streams and errors in), always through codec/ir. The
// conventions it follows are docs/conversion.md's; the wire shapes are Anthropic's Messages API.
//
// What IR cannot hold travels in Request.Extra under names that cannot be top-level fields
// of a real request, and that read well in the X-Modelgate-Dropped header when another format
// drops them:
//   - "tools[].<type>": server tools (web_search_20250305, bash_20250124, …) as a JSON array
//     of the raw tool objects; re-emitted after the function tools for messages routes.
//   - "tools[].<field>": a per-tool field IR has no place for (cache_control, defer_loading,
//     input_examples, …) as a JSON object tool name → raw value; merged back into the tool.
//   - "messages[].content[].<type>": a server-tool content block (server_tool_use,
//     web_search_tool_result, …) that was dropped from the history; only a marker, so every
//     encoder, this one included, reports it as lost.
package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

// Format is the messages format as clients and routes speak it.
var Format format

type format struct{}

var (
	_ ir.ClientFormat   = format{}
	_ ir.UpstreamFormat = format{}
	_ ir.ModelRewriter  = format{}
	_ ir.DeltaSkipper   = format{}
)

// Path is the route-relative endpoint; the model travels in the body, the stream mode too.
func (format) Path(string, bool) string { return "/messages" }

// SignatureFormat is the value of ir.Reasoning.SignatureFormat (and ir.Event.Format) for
// signatures and redacted data this format issued.
const SignatureFormat = "messages"

// Extra key prefixes of the pseudo-fields described in the package comment.
const (
	extraTools  = "tools[]."
	extraBlocks = "messages[].content[]."
)

// errorTypes are the messages format's type names for each neutral kind.
var errorTypes = map[ir.ErrorKind]string{
	ir.ErrInvalidRequest: "invalid_request_error",
	ir.ErrAuthentication: "authentication_error",
	ir.ErrPermission:     "permission_error",
	ir.ErrNotFound:       "not_found_error",
	ir.ErrTooLarge:       "request_too_large",
	ir.ErrRateLimit:      "rate_limit_error",
	ir.ErrBilling:        "billing_error",
	ir.ErrServer:         "api_error",
	ir.ErrOverloaded:     "overloaded_error",
	ir.ErrTimeout:        "timeout_error",
}

// kindOfType is the reverse of errorTypes.
var kindOfType = func() map[string]ir.ErrorKind {
	m := make(map[string]ir.ErrorKind, len(errorTypes))
	for k, v := range errorTypes {
		m[v] = k
	}
	return m
}()

type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Code    string `json:"code,omitempty"`
}

type wireErrorEnvelope struct {
	Type  string    `json:"type"`
	Error wireError `json:"error"`
}

// EncodeError renders {"type":"error","error":{"type","message","code"?}}.
func (format) EncodeError(e *ir.Error) []byte { return errorBody(e) }

func errorBody(e *ir.Error) []byte {
	typ := errorTypes[e.Kind]
	if typ == "" {
		typ = "api_error"
	}
	return marshal(wireErrorEnvelope{Type: "error", Error: wireError{Type: typ, Message: e.Message, Code: e.Code}})
}

// DecodeError reads a non-2xx answer: the messages envelope when there is one, else the
// status decides the kind and the body (when short) becomes the message.
func (format) DecodeError(status int, body []byte) *ir.Error {
	var env struct {
		Error *struct {
			Type    string          `json:"type"`
			Message string          `json:"message"`
			Code    json.RawMessage `json:"code"`
			Details struct {
				ErrorCode string `json:"error_code"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil && (env.Error.Type != "" || env.Error.Message != "") {
		e := &ir.Error{Status: status, Message: env.Error.Message}
		var code string
		if json.Unmarshal(env.Error.Code, &code) == nil {
			e.Code = code
		}
		if e.Code == "" {
			e.Code = env.Error.Details.ErrorCode
		}
		kind, ok := kindOfType[env.Error.Type]
		if !ok {
			kind = kindForStatus(status)
		}
		e.Kind = kind
		if e.Message == "" {
			e.Message = http.StatusText(status)
		}
		return e
	}
	return &ir.Error{Status: status, Kind: kindForStatus(status), Message: upstreamMessage(status, body)}
}

func kindForStatus(status int) ir.ErrorKind { return ir.KindForStatus(status) }

// statusOfKind is the HTTP status the messages API uses for a kind, for in-band
// stream errors that arrive without one.
func statusOfKind(k ir.ErrorKind) int {
	if k == ir.ErrOverloaded {
		return 529 // the messages API's overloaded_error
	}
	return ir.StatusOfKind(k)
}

func upstreamMessage(status int, body []byte) string {
	msg := fmt.Sprintf("upstream answered %d %s", status, http.StatusText(status))
	body = bytes.TrimSpace(body)
	if len(body) > 0 && len(body) < 512 {
		msg += ": " + string(body)
	}
	return msg
}

// RewriteModel names the client's model in a whole messages answer (the top-level model) or
// a message_start event (message.model), whatever the value and spacing, every other byte
// kept; other events have no model and come back as they are.
func (format) RewriteModel(data []byte, client string) []byte {
	out, _ := jsonscan.Replace(data, marshal(client), modelPaths...)
	return out
}

var modelPaths = [][]string{{"model"}, {"message", "model"}}

// IsDone reports the stream's terminator event (message_stop). An error event also ends a
// stream, but not as a success.
func IsDone(eventName []byte) bool { return string(eventName) == "message_stop" }

// marshal is json.Marshal without HTML escaping: text, thinking and signatures travel as
// the upstream and the client wrote them.
func marshal(v any) []byte {
	b, err := codec.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}

// messageID gives an answer the msg_ shape, minting an id when the source has none.
func messageID(id string) string {
	switch {
	case strings.HasPrefix(id, "msg_"):
		return id
	case id == "":
		return codec.RandomID("msg_")
	}
	return "msg_" + id
}

// sanitizeID makes a tool-call id valid for a messages upstream (^[a-zA-Z0-9_-]+$), the same
// way every time so a tool_use and its tool_result keep matching.
func sanitizeID(id string) string {
	if id == "" {
		return codec.RandomID("toolu_")
	}
	ok := true
	for i := 0; i < len(id); i++ {
		if !idByte(id[i]) {
			ok = false
			break
		}
	}
	if ok {
		return id
	}
	b := []byte(id)
	for i := range b {
		if !idByte(b[i]) {
			b[i] = '_'
		}
	}
	return string(b)
}

func idByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// objectArgs turns tool-call arguments text into a JSON object for tool_use.input: blank
// arguments are {}; anything that is not a JSON object is {} too (ok=false), the shape
// anthropic-sdk-go itself gives a cut-off tool input.
func objectArgs(args string) (obj json.RawMessage, ok bool) {
	t := bytes.TrimSpace([]byte(args))
	if len(t) == 0 {
		return json.RawMessage("{}"), true
	}
	if t[0] != '{' || !json.Valid(t) {
		return json.RawMessage("{}"), false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, t) != nil {
		return json.RawMessage("{}"), false
	}
	return buf.Bytes(), true
}

// compactObject re-encodes a wire tool input compactly as arguments text ("{}" for none).
func compactObject(raw json.RawMessage) (string, bool) {
	if isNull(raw) {
		return "{}", true
	}
	t := bytes.TrimSpace(raw)
	if t[0] != '{' {
		return "", false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, t) != nil {
		return "", false
	}
	return buf.String(), true
}

// deltaKinds are the stream events that carry only a piece of content.
var deltaKinds = []string{"content_block_delta"}

// ContentDelta implements ir.DeltaSkipper; the decoder takes an event's kind from its SSE name
// before its data's type.
func (format) ContentDelta(name, data []byte) bool {
	return codec.IsDeltaEvent(name, data, true, deltaKinds)
}

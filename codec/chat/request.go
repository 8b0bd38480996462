// Package chat translates the chat-completions wire format. A same-format route is passed
// through: the gateway reads only what it needs and forwards every other field unchanged.
package chat

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonpatch"
)

func invalid(param, format string, args ...any) error { return bad(param, format, args...) }

// Request is a chat-completions request kept as the client wrote it, so unknown fields and
// their order survive: the light parse reads the members it checks in place (codec/jsonpatch),
// decoding none of the rest.
type Request struct {
	Model        string
	Stream       bool
	IncludeUsage bool // the client asked for the usage chunk itself
	MaxTokens    int  // max_completion_tokens, else max_tokens; 0 = not given
	Choices      int  // n; 0 = not given
	Images       bool // a message's content holds an image (an image_url part)
	body         *jsonpatch.Object
}

// ParseRequest checks the request (roles, ranges, enums, tool names; see check.go) and keeps
// the body opaque otherwise.
func ParseRequest(body []byte) (*Request, error) {
	obj, err := jsonpatch.Scan(body)
	if err != nil {
		return nil, notAnObject(body)
	}
	r := &Request{body: obj}
	if e := r.check(); e != nil {
		return nil, e
	}
	return r, nil
}

// HasTools reports a tools (or legacy functions) member that lists something: what an auto
// model's choice asks of a chat body without decoding it.
func (r *Request) HasTools() bool {
	for _, k := range []string{"tools", "functions"} {
		v := bytes.TrimSpace(r.body.Value(k))
		if len(v) > 0 && string(v) != "null" && !(v[0] == '[' && len(bytes.TrimSpace(v[1:len(v)-1])) == 0) {
			return true
		}
	}
	return false
}

// notAnObject says why a body is not a JSON object (only on this error path is it decoded).
func notAnObject(body []byte) *ir.Error {
	var v any
	err := json.Unmarshal(body, &v)
	if err == nil {
		return bad("", "the request body must be a JSON object; got %s", check.Quote(body))
	}
	return bad("", "the request body must be a JSON object: %s", check.JSONProblem(err))
}

// value is the raw value of the member named name (the last one, as decoders take it), nil
// when absent.
func (r *Request) value(name string) json.RawMessage { return r.body.Value(name) }

// Thinking reads the request's reasoning controls.
func (r *Request) Thinking() ir.Thinking {
	var t ir.Thinking
	decodeThinking(r.value, &t) // already validated by ParseRequest
	return t
}

// Patch is what the gateway changes in a body it passes through.
type Patch struct {
	// Thinking is the reasoning the model's class resolved; the body asks for it in the
	// model's native parameter only (reasoning_effort or enable_thinking), as EncodeIR does.
	Thinking  ir.Thinking
	MaxTokens int // a cap the model's context window imposes; 0 = none
}

// thinkingFields are the chat request fields that ask for reasoning, in every dialect.
var thinkingFields = []string{"reasoning_effort", "thinking", "enable_thinking"}

// nativeThinking is how a chat-format route is asked for resolved thinking: reasoning_effort
// for effort-class models (none when off), enable_thinking for toggle models; nothing when the
// model's default applies.
func nativeThinking(t ir.Thinking) (field string, value any) {
	switch {
	case t.Effort != "":
		return "reasoning_effort", t.Effort
	case t.Enabled != nil:
		return "enable_thinking", *t.Enabled
	}
	return "", nil
}

// UpstreamBody is the body for a chat-format route: the route's model id, the patch, and for
// streams include_usage forced on so the gateway can bill what it streamed. Every other member
// keeps its place and bytes (codec/jsonpatch).
func (r *Request) UpstreamBody(upstreamModel string, p Patch) ([]byte, error) {
	ops := make([]jsonpatch.Op, 0, 8)
	ops = append(ops, jsonpatch.Set("model", quote(upstreamModel)))
	for _, f := range thinkingFields {
		ops = append(ops, jsonpatch.Remove(f))
	}
	if field, v := nativeThinking(p.Thinking); field != "" {
		b, _ := json.Marshal(v)
		ops = append(ops, jsonpatch.Set(field, b))
	}
	if p.MaxTokens > 0 {
		field := "max_tokens" // the field the client used, so reasoning models keep theirs
		if r.value("max_completion_tokens") != nil {
			field = "max_completion_tokens"
		}
		ops = append(ops, jsonpatch.Set(field, strconv.AppendInt(nil, int64(p.MaxTokens), 10)))
	}
	if r.Stream {
		opts := []byte("{}")
		if raw := r.value("stream_options"); raw != nil && !isNull(raw) {
			opts = raw
		}
		b, err := jsonpatch.Apply(opts, jsonpatch.Set("include_usage", []byte("true")))
		if err != nil {
			return nil, invalid("stream_options", "stream_options must be an object")
		}
		ops = append(ops, jsonpatch.Set("stream_options", b))
	}
	return r.body.Apply(ops...), nil
}

// unmarshalField decodes a member of a decoded object; absent and null leave v untouched.
func unmarshalField(fields map[string]json.RawMessage, name string, v any) error {
	return unmarshalRaw(fields[name], v)
}

func unmarshalRaw(raw json.RawMessage, v any) error {
	if raw == nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	return json.Unmarshal(raw, v)
}

func jsonProblem(err error) string { return check.JSONProblem(err) }

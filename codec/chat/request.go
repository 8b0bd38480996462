// Package chat translates the chat-completions wire format. A same-format route is passed
// through: the gateway reads only what it needs and forwards every other field unchanged.
package chat

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

// InvalidError is a request the client must fix; Param names the field.
type InvalidError struct {
	Param   string
	Message string
}

func (e *InvalidError) Error() string { return e.Message }

func invalid(param, format string, args ...any) error {
	return &InvalidError{Param: param, Message: fmt.Sprintf(format, args...)}
}

// Request is a chat-completions request, kept as its raw fields so unknown ones survive.
type Request struct {
	Model        string
	Stream       bool
	IncludeUsage bool // the client asked for the usage chunk itself
	MaxTokens    int  // max_completion_tokens, else max_tokens; 0 = not given
	fields       map[string]json.RawMessage
}

// ParseRequest checks the fields the gateway depends on and keeps the rest opaque.
func ParseRequest(body []byte) (*Request, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, invalid("", "the request body must be a JSON object: %s", jsonProblem(err))
	}
	r := &Request{fields: fields}
	if err := unmarshalField(fields, "model", &r.Model); err != nil || r.Model == "" {
		return nil, invalid("model", "model is required and must be a string")
	}
	var msgs []struct {
		Role *string `json:"role"`
	}
	raw, ok := fields["messages"]
	if !ok {
		return nil, invalid("messages", "messages is required")
	}
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, invalid("messages", "messages must be an array of message objects")
	}
	if len(msgs) == 0 {
		return nil, invalid("messages", "messages must contain at least one message")
	}
	for i, m := range msgs {
		if m.Role == nil || *m.Role == "" {
			return nil, invalid(fmt.Sprintf("messages[%d].role", i), "messages[%d].role is required", i)
		}
	}
	if err := unmarshalField(fields, "stream", &r.Stream); err != nil {
		return nil, invalid("stream", "stream must be a boolean")
	}
	var so struct {
		IncludeUsage bool `json:"include_usage"`
	}
	if err := unmarshalField(fields, "stream_options", &so); err != nil {
		return nil, invalid("stream_options", "stream_options must be an object")
	}
	r.IncludeUsage = so.IncludeUsage
	var maxTokens, maxCompletion int
	if err := unmarshalField(fields, "max_tokens", &maxTokens); err != nil || maxTokens < 0 {
		return nil, invalid("max_tokens", "max_tokens must be a positive integer")
	}
	if err := unmarshalField(fields, "max_completion_tokens", &maxCompletion); err != nil || maxCompletion < 0 {
		return nil, invalid("max_completion_tokens", "max_completion_tokens must be a positive integer")
	}
	r.MaxTokens = maxTokens
	if maxCompletion > 0 {
		r.MaxTokens = maxCompletion
	}
	var t ir.Thinking
	if e := decodeThinking(fields, &t); e != nil {
		return nil, invalid(e.Param, "%s", e.Message)
	}
	return r, nil
}

// Thinking reads the request's reasoning controls.
func (r *Request) Thinking() ir.Thinking {
	var t ir.Thinking
	decodeThinking(r.fields, &t) // already validated by ParseRequest
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
// streams include_usage forced on so the gateway can bill what it streamed.
func (r *Request) UpstreamBody(upstreamModel string, p Patch) ([]byte, error) {
	out := make(map[string]json.RawMessage, len(r.fields))
	for k, v := range r.fields {
		out[k] = v
	}
	m, _ := json.Marshal(upstreamModel)
	out["model"] = m
	for _, f := range thinkingFields {
		delete(out, f)
	}
	if field, v := nativeThinking(p.Thinking); field != "" {
		out[field], _ = json.Marshal(v)
	}
	if p.MaxTokens > 0 {
		field := "max_tokens" // the field the client used, so reasoning models keep theirs
		if _, ok := r.fields["max_completion_tokens"]; ok {
			field = "max_completion_tokens"
		}
		out[field], _ = json.Marshal(p.MaxTokens)
	}
	if r.Stream {
		opts := map[string]json.RawMessage{}
		if raw, ok := r.fields["stream_options"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			if err := json.Unmarshal(raw, &opts); err != nil {
				return nil, invalid("stream_options", "stream_options must be an object")
			}
		}
		opts["include_usage"] = json.RawMessage("true")
		out["stream_options"], _ = json.Marshal(opts)
	}
	return codec.Marshal(out)
}

func unmarshalField(fields map[string]json.RawMessage, name string, v any) error {
	raw, ok := fields[name]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	return json.Unmarshal(raw, v)
}

func jsonProblem(err error) string {
	if err == nil {
		return "got null"
	}
	return err.Error()
}

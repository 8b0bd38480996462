// Package chat translates the chat-completions wire format. A same-format route is passed
// through: the gateway reads only what it needs and forwards every other field unchanged.
package chat

import (
	"bytes"
	"encoding/json"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

func invalid(param, format string, args ...any) error { return bad(param, format, args...) }

// Request is a chat-completions request kept as the client wrote it, so unknown fields and
// their order survive: the light parse reads the members it checks in place (codec/jsonscan),
// decoding none of the rest.
type Request struct {
	Model        string
	Stream       bool
	IncludeUsage bool // the client asked for the usage chunk itself
	MaxTokens    int  // max_completion_tokens, else max_tokens; 0 = not given
	Choices      int  // n; 0 = not given
	body         []byte
	members      []member
}

// member is one top-level member of the body: its resolved name and where key and value are.
type member struct {
	name     string
	key, val jsonscan.Span
}

// ParseRequest checks the request (issue #12 item 9: roles, ranges, enums, tool names; see
// check.go) and keeps the body opaque otherwise.
func ParseRequest(body []byte) (*Request, error) {
	r := &Request{body: body}
	err := jsonscan.MemberSpans(body, func(k []byte, ks, v jsonscan.Span) bool {
		r.members = append(r.members, member{name: jsonscan.Key(k), key: ks, val: v})
		return true
	})
	if err != nil {
		return nil, notAnObject(body)
	}
	if e := r.check(); e != nil {
		return nil, e
	}
	return r, nil
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
func (r *Request) value(name string) json.RawMessage {
	for i := len(r.members) - 1; i >= 0; i-- {
		if m := r.members[i]; m.name == name {
			return r.body[m.val.Start:m.val.End]
		}
	}
	return nil
}

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

// edit sets (or, with a nil value, removes) one top-level member.
type edit struct {
	name  string
	value []byte
}

// UpstreamBody is the body for a chat-format route: the route's model id, the patch, and for
// streams include_usage forced on so the gateway can bill what it streamed. Every other member
// keeps its place and bytes.
func (r *Request) UpstreamBody(upstreamModel string, p Patch) ([]byte, error) {
	m, _ := json.Marshal(upstreamModel)
	edits := []edit{{"model", m}}
	for _, f := range thinkingFields {
		edits = append(edits, edit{f, nil})
	}
	if field, v := nativeThinking(p.Thinking); field != "" {
		b, _ := json.Marshal(v)
		edits = setEdit(edits, field, b)
	}
	if p.MaxTokens > 0 {
		field := "max_tokens" // the field the client used, so reasoning models keep theirs
		if r.value("max_completion_tokens") != nil {
			field = "max_completion_tokens"
		}
		b, _ := json.Marshal(p.MaxTokens)
		edits = setEdit(edits, field, b)
	}
	if r.Stream {
		opts := map[string]json.RawMessage{}
		if raw := r.value("stream_options"); raw != nil && !isNull(raw) {
			if err := json.Unmarshal(raw, &opts); err != nil {
				return nil, invalid("stream_options", "stream_options must be an object")
			}
		}
		opts["include_usage"] = json.RawMessage("true")
		b, _ := json.Marshal(opts)
		edits = setEdit(edits, "stream_options", b)
	}
	return r.rewrite(edits), nil
}

func setEdit(edits []edit, name string, value []byte) []edit {
	for i := range edits {
		if edits[i].name == name {
			edits[i].value = value
			return edits
		}
	}
	return append(edits, edit{name, value})
}

// rewrite is the body with the edits made: an edited member keeps the place of its first
// occurrence (later duplicates go), a removed one goes, a new one comes last.
func (r *Request) rewrite(edits []edit) []byte {
	out := make([]byte, 0, len(r.body)+64)
	out = append(out, '{')
	done := make([]bool, len(edits))
	put := func(member []byte) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, member...)
	}
	for _, m := range r.members {
		i := editOf(edits, m.name)
		switch {
		case i < 0:
			put(r.body[m.key.Start-1 : m.val.End])
		case !done[i] && edits[i].value != nil:
			put(append(append(append([]byte{}, r.body[m.key.Start-1:m.key.End+1]...), ':'), edits[i].value...))
			done[i] = true
		}
	}
	for i, e := range edits {
		if !done[i] && e.value != nil {
			k, _ := json.Marshal(e.name)
			put(append(append(k, ':'), e.value...))
		}
	}
	return append(out, '}')
}

func editOf(edits []edit, name string) int {
	for i, e := range edits {
		if e.name == name {
			return i
		}
	}
	return -1
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

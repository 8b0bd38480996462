package chat

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// What the light parse checks before any upstream is called: the members
// the gateway reads, the roles, the ranges and enums of the OpenAI API reference, and the
// tools a tool_choice names. Each member is read in place; only the small values checked are
// decoded.

// Roles are the chat roles (function is the deprecated predecessor of tool).
var Roles = []string{"system", "developer", "user", "assistant", "tool", "function"}

// ranges are the numeric members the OpenAI API bounds.
var ranges = []check.Range{
	{Param: "max_tokens", Min: 1, Max: check.Unbounded, Integer: true},
	{Param: "max_completion_tokens", Min: 1, Max: check.Unbounded, Integer: true},
	{Param: "temperature", Min: 0, Max: 2},
	{Param: "top_p", Min: 0, Max: 1},
	{Param: "top_k", Min: 0, Max: check.Unbounded, Integer: true}, // not OpenAI's; providers that take it start at 0
	{Param: "n", Min: 1, Max: 128, Integer: true},
	{Param: "presence_penalty", Min: -2, Max: 2},
	{Param: "frequency_penalty", Min: -2, Max: 2},
	{Param: "top_logprobs", Min: 0, Max: 20, Integer: true},
}

// maxStop is how many stop sequences the API takes.
const maxStop = 4

func (r *Request) check() *ir.Error {
	if err := unmarshalRaw(r.value("model"), &r.Model); err != nil || r.Model == "" {
		return bad("model", "model is required and must be a string")
	}
	var e *ir.Error
	if r.Images, e = checkMessages(r.value("messages")); e != nil {
		return e
	}
	for _, rg := range ranges {
		if e := rg.Check(r.value(rg.Param)); e != nil {
			return e
		}
	}
	var maxTokens, maxCompletion int
	unmarshalRaw(r.value("max_tokens"), &maxTokens) // checked above
	unmarshalRaw(r.value("max_completion_tokens"), &maxCompletion)
	unmarshalRaw(r.value("n"), &r.Choices)
	r.MaxTokens = maxTokens
	if maxCompletion > 0 {
		r.MaxTokens = maxCompletion
	}
	if err := unmarshalRaw(r.value("stream"), &r.Stream); err != nil {
		return bad("stream", "stream must be a boolean")
	}
	var so struct {
		IncludeUsage bool `json:"include_usage"`
	}
	if err := unmarshalRaw(r.value("stream_options"), &so); err != nil {
		return bad("stream_options", "stream_options must be an object {\"include_usage\": boolean}")
	}
	r.IncludeUsage = so.IncludeUsage
	var logprobs bool
	if err := unmarshalRaw(r.value("logprobs"), &logprobs); err != nil {
		return bad("logprobs", "logprobs must be a boolean")
	}
	if _, e := decodeStop(r.value("stop")); e != nil {
		return e
	}
	if e := checkTools(r.value); e != nil {
		return e
	}
	var t ir.Thinking
	return decodeThinking(r.value, &t)
}

// checkMessages checks that messages is a non-empty array of objects with a known role whose
// content points only at media the client may name (media.go); images reports an image in any
// of them.
func checkMessages(raw json.RawMessage) (images bool, e *ir.Error) {
	if raw == nil {
		return false, bad("messages", "messages is required")
	}
	n := 0
	err := jsonscan.Elements(raw, func(v jsonscan.Span) bool {
		at := fmt.Sprintf("messages[%d]", n)
		n++
		msg := raw[v.Start:v.End]
		if msg[0] != '{' {
			e = bad(at, "%s must be a message object {\"role\", \"content\"}; got %s", at, check.Quote(msg))
			return false
		}
		members := pick(msg, "role", "content")
		var role string
		if members[0] == nil || isNull(members[0]) {
			e = bad(at+".role", "%s.role is required: one of %s", at, strings.Join(Roles, ", "))
			return false
		}
		if json.Unmarshal(members[0], &role) != nil {
			e = bad(at+".role", "%s.role must be a string: one of %s", at, strings.Join(Roles, ", "))
			return false
		}
		if e = check.OneOf(at+".role", role, Roles...); e != nil {
			return false
		}
		has, me := checkMedia(at, members[1])
		images, e = images || has, me
		return e == nil
	})
	switch {
	case err != nil:
		return false, bad("messages", "messages must be an array of message objects")
	case e != nil:
		return false, e
	case n == 0:
		return false, bad("messages", "messages must contain at least one message")
	}
	return images, nil
}

// decodeStop reads stop: a string or an array of at most maxStop strings.
func decodeStop(raw json.RawMessage) ([]string, *ir.Error) {
	if raw == nil || isNull(raw) {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if json.Unmarshal(raw, &many) != nil || len(many) > maxStop {
		return nil, bad("stop", "stop must be a string or an array of at most %d strings; got %s", maxStop, check.Quote(raw))
	}
	return many, nil
}

// toolRef is the part of a tool, or of a tool_choice naming one, that the checks read.
type toolRef struct {
	Type, Name   string // Name: a deprecated functions[] entry's, or function_call's
	Function     *string
	Custom       *string
	AllowedTools json.RawMessage // tool_choice {"type":"allowed_tools"}
}

// readRef reads a tool object in place (codec/jsonscan); ok false for a value that is not one.
func readRef(raw []byte) (toolRef, bool) {
	var t toolRef
	if len(raw) == 0 || raw[0] != '{' {
		return t, false
	}
	v := pick(raw, "type", "name", "function", "custom", "allowed_tools")
	if json.Unmarshal(v[0], &t.Type) != nil && v[0] != nil || json.Unmarshal(v[1], &t.Name) != nil && v[1] != nil {
		return t, false
	}
	for i, dst := range []**string{&t.Function, &t.Custom} {
		if obj := v[2+i]; len(obj) > 0 && obj[0] == '{' {
			var name string
			unmarshalRaw(pick(obj, "name")[0], &name)
			*dst = &name
		}
	}
	t.AllowedTools = v[4]
	return t, true
}

// pick returns the raw values of the named members of an object inside the body the light
// parse has checked (nil where absent; the last of a repeated one), in one pass over it.
func pick(obj []byte, names ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(names))
	jsonw.EachMember(obj, func(k []byte, v jsonscan.Span) bool {
		for i, n := range names {
			if jsonscan.KeyIs(k, n) {
				out[i] = obj[v.Start:v.End]
			}
		}
		return true
	})
	return out
}

// each calls fn with each element of a JSON array; false when raw is not one.
func each(raw []byte, fn func(i int, v []byte)) bool {
	i := 0
	return jsonscan.Elements(raw, func(v jsonscan.Span) bool {
		fn(i, raw[v.Start:v.End])
		i++
		return true
	}) == nil
}

// name is the tool's name and the param that holds it; ok false for a kind without one.
func (t toolRef) name(at string) (string, string, bool) {
	switch {
	case t.Type == "function" && t.Function != nil:
		return *t.Function, at + ".function.name", true
	case t.Type == "custom" && t.Custom != nil:
		return *t.Custom, at + ".custom.name", true
	}
	return "", "", false
}

// checkTools checks the tools' names (OpenAI's rule, unique) and that tool_choice, and the
// deprecated function_call, name a tool the request offers.
func checkTools(value func(string) json.RawMessage) *ir.Error {
	tools := check.NewTools(check.OpenAINames)
	for _, list := range []string{"tools", "functions"} {
		raw := value(list)
		if raw == nil || isNull(raw) {
			continue
		}
		var e *ir.Error
		ok := each(raw, func(i int, v []byte) {
			at := fmt.Sprintf("%s[%d]", list, i)
			t, isObject := readRef(v)
			name, param, named := t.name(at)
			if list == "functions" {
				name, param, named = t.Name, at+".name", true
			}
			switch {
			case e != nil:
			case !isObject:
				e = bad(at, "%s must be a tool object; got %s", at, check.Quote(v))
			case named: // another kind is a provider's own: the route judges it
				e = tools.Add(param, name)
			}
		})
		if !ok {
			return bad(list, "%s must be an array of tool objects", list)
		}
		if e != nil {
			return e
		}
	}
	if e := checkToolChoice(value("tool_choice"), tools); e != nil {
		return e
	}
	raw := value("function_call")
	var mode string
	if raw == nil || isNull(raw) || json.Unmarshal(raw, &mode) == nil && (mode == "none" || mode == "auto") {
		return nil
	}
	fc, ok := readRef(raw)
	if !ok || fc.Name == "" {
		return bad("function_call", "function_call must be \"none\", \"auto\" or {\"name\": …}")
	}
	return tools.Chosen("function_call.name", fc.Name)
}

func checkToolChoice(raw json.RawMessage, tools *check.Tools) *ir.Error {
	if raw == nil || isNull(raw) {
		return nil
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		if e := check.OneOf("tool_choice", mode, "none", "auto", "required"); e != nil {
			return e
		}
		if mode == "required" && !tools.Offered() {
			return bad("tool_choice", "tool_choice \"required\" needs tools, and the request offers none")
		}
		return nil
	}
	tc, ok := readRef(raw)
	if !ok {
		return bad("tool_choice", "tool_choice must be \"none\", \"auto\", \"required\" or an object")
	}
	if name, param, ok := tc.name("tool_choice"); ok {
		return tools.Chosen(param, name)
	}
	if tc.Type != "allowed_tools" || tc.AllowedTools == nil {
		return nil // a provider's own kind of choice: the route judges it
	}
	v := pick(tc.AllowedTools, "mode", "tools")
	var allowedMode string
	unmarshalRaw(v[0], &allowedMode)
	if e := check.OneOf("tool_choice.allowed_tools.mode", allowedMode, "auto", "required"); e != nil {
		return e
	}
	var e *ir.Error
	each(v[1], func(i int, ref []byte) {
		t, _ := readRef(ref)
		if name, param, ok := t.name(fmt.Sprintf("tool_choice.allowed_tools.tools[%d]", i)); ok && e == nil {
			e = tools.Chosen(param, name)
		}
	})
	return e
}

package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
)

// Fields DecodeRequest maps into IR; everything else travels in Request.Extra.
var mappedFields = map[string]bool{
	"model": true, "messages": true, "tools": true, "tool_choice": true, "parallel_tool_calls": true,
	"max_tokens": true, "max_completion_tokens": true, "temperature": true, "top_p": true, "top_k": true,
	"stop": true, "stream": true, "stream_options": true, "reasoning_effort": true, "thinking": true,
	"enable_thinking": true, "response_format": true, "user": true, "functions": true, "function_call": true,
}

func bad(param, format string, args ...any) *ir.Error { return check.Bad(param, format, args...) }

// DecodeIR parses a chat-completions request into IR, after the light parse's checks.
func DecodeIR(body []byte) (*ir.Request, error) {
	light, err := ParseRequest(body)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, bad("", "the request body must be a JSON object: %s", jsonProblem(err))
	}
	r := &ir.Request{Model: light.Model, Stream: light.Stream, IncludeUsage: light.IncludeUsage, MaxTokens: light.MaxTokens, Choices: light.Choices}
	get := func(name string, v any) *ir.Error {
		if err := unmarshalField(fields, name, v); err != nil {
			return bad(name, "%s must be %s", name, jsonKindOf(err))
		}
		return nil
	}
	var msgs []wireMessage
	if err := json.Unmarshal(fields["messages"], &msgs); err != nil {
		return nil, bad("messages", "messages must be an array of message objects: %s", jsonProblem(err))
	}
	for i, m := range msgs {
		msg, err := decodeMessage(i, m)
		if err != nil {
			return nil, err
		}
		r.Messages = append(r.Messages, msg)
	}
	if err := decodeTools(fields, r); err != nil {
		return nil, err
	}
	for _, e := range []*ir.Error{
		get("parallel_tool_calls", &r.Parallel), get("temperature", &r.Temperature), get("top_p", &r.TopP),
		get("top_k", &r.TopK), get("user", &r.User),
	} {
		if e != nil {
			return nil, e
		}
	}
	r.Stop, _ = decodeStop(fields["stop"]) // checked by the light parse
	if raw, ok := fields["response_format"]; ok && !isNull(raw) {
		r.ResponseFormat = raw
	}
	if err := decodeThinking(func(name string) json.RawMessage { return fields[name] }, &r.Thinking); err != nil {
		return nil, err
	}
	for k, v := range fields {
		if !mappedFields[k] {
			if r.Extra == nil {
				r.Extra = map[string]json.RawMessage{}
			}
			r.Extra[k] = v
		}
	}
	return r, nil
}

// jsonKindOf names the JSON type a member failed to decode as.
func jsonKindOf(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return check.Kind(te.Type.Kind().String())
	}
	return "valid JSON"
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func decodeMessage(i int, m wireMessage) (ir.Message, *ir.Error) {
	at := fmt.Sprintf("messages[%d]", i)
	switch m.Role {
	case "system", "developer":
		parts, err := decodeContent(at, m.Content, textOnly)
		return ir.Message{Role: ir.RoleSystem, Name: m.Name, Parts: parts}, err
	case "user":
		parts, err := decodeContent(at, m.Content, withMedia)
		if err == nil && len(parts) == 0 {
			err = bad(at+".content", "%s.content is required", at)
		}
		return ir.Message{Role: ir.RoleUser, Name: m.Name, Parts: parts}, err
	case "assistant":
		return decodeAssistant(at, m)
	case "tool", "function":
		if m.Role == "tool" && m.ToolCallID == "" {
			return ir.Message{}, bad(at+".tool_call_id", "%s.tool_call_id is required for a tool message", at)
		}
		parts, err := decodeContent(at, m.Content, withMedia)
		id, _ := ir.SplitCallID(m.ToolCallID)
		return ir.Message{Role: ir.RoleTool, Parts: []ir.Part{{Kind: ir.PartToolResult,
			ToolResult: &ir.ToolResult{CallID: id, Name: m.Name, Content: parts}}}}, err
	case "":
		return ir.Message{}, bad(at+".role", "%s.role is required", at)
	}
	return ir.Message{}, bad(at+".role", "%s.role %q must be system, developer, user, assistant or tool", at, m.Role)
}

func decodeAssistant(at string, m wireMessage) (ir.Message, *ir.Error) {
	msg := ir.Message{Role: ir.RoleAssistant, Name: m.Name}
	if len(m.ThinkingBlocks) > 0 {
		for _, b := range m.ThinkingBlocks {
			r := &ir.Reasoning{Text: b.Thinking, Signature: b.Signature, Redacted: b.Data}
			if r.Signature != "" || r.Redacted != "" {
				r.SignatureFormat = "messages"
			}
			msg.Parts = append(msg.Parts, ir.Part{Kind: ir.PartReasoning, Reasoning: r})
		}
	} else if rc := firstNonEmpty(m.ReasoningContent, m.Reasoning); rc != "" {
		msg.Parts = append(msg.Parts, ir.Part{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Text: rc}})
	}
	parts, err := decodeContent(at, m.Content, withThinking)
	if err != nil {
		return msg, err
	}
	msg.Parts = append(msg.Parts, parts...)
	for j, tc := range m.ToolCalls {
		call := &ir.ToolCall{}
		call.ID, call.Signature = ir.SplitCallID(tc.ID)
		if call.Signature != "" {
			call.SignatureFormat = "gemini"
		}
		switch {
		case tc.Function != nil:
			call.Name, call.Arguments = tc.Function.Name, NormalizeArguments(tc.Function.Arguments)
		case tc.Custom != nil:
			call.Name, call.Arguments = tc.Custom.Name, customInput(tc.Custom.Input)
		default:
			return msg, bad(fmt.Sprintf("%s.tool_calls[%d].function", at, j), "%s.tool_calls[%d] needs a function", at, j)
		}
		if call.ID == "" || call.Name == "" {
			return msg, bad(fmt.Sprintf("%s.tool_calls[%d]", at, j), "%s.tool_calls[%d] needs an id and a function name", at, j)
		}
		msg.Parts = append(msg.Parts, ir.Part{Kind: ir.PartToolCall, ToolCall: call})
	}
	return msg, nil
}

func firstNonEmpty(ps ...*string) string {
	for _, p := range ps {
		if p != nil && *p != "" {
			return *p
		}
	}
	return ""
}

// NormalizeArguments makes a tool call's arguments a JSON object text: "" becomes "{}".
func NormalizeArguments(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}

// customInput wraps a custom tool's free-form input as the one-string-argument object the
// IR carries for every tool.
func customInput(s string) string {
	b, _ := json.Marshal(map[string]string{"input": s})
	return string(b)
}

// contentKinds says which parts a message's content may hold besides text.
type contentKinds int

const (
	textOnly     contentKinds = iota // system messages
	withMedia                        // user and tool messages: images, audio and files
	withThinking                     // assistant messages: thinking parts (Mistral's answers)
)

// decodeContent reads a string or an array of parts.
func decodeContent(at string, raw json.RawMessage, kinds contentKinds) ([]ir.Part, *ir.Error) {
	if len(raw) == 0 || isNull(raw) {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, nil
		}
		return []ir.Part{{Kind: ir.PartText, Text: s}}, nil
	}
	var parts []wirePart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, bad(at+".content", "%s.content must be a string or an array of content parts", at)
	}
	var out []ir.Part
	media := kinds == withMedia
	for j, p := range parts {
		where := fmt.Sprintf("%s.content[%d]", at, j)
		switch {
		case p.Type == "thinking" && kinds == withThinking:
			if t := thinkingText(p.Thinking, nil); t != "" {
				out = append(out, ir.Part{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Text: t}})
			}
		case p.Type == "reference" && kinds == withThinking:
			// Mistral's citation ids, no text: nothing another format can carry.
		case p.Type == "text":
			out = append(out, ir.Part{Kind: ir.PartText, Text: p.Text})
		case p.Type == "refusal":
			out = append(out, ir.Part{Kind: ir.PartText, Text: p.Refusal})
		case p.Type == "image_url" && media && p.ImageURL != nil:
			out = append(out, ir.Part{Kind: ir.PartImage, Image: ParseImageURL(p.ImageURL.URL, p.ImageURL.Detail)})
		case p.Type == "input_audio" && media && p.InputAudio != nil:
			out = append(out, ir.Part{Kind: ir.PartFile, File: &ir.File{MediaType: "audio/" + p.InputAudio.Format, Data: p.InputAudio.Data}})
		case p.Type == "file" && media && p.File != nil:
			f := &ir.File{Name: p.File.Filename}
			if img := ParseImageURL(p.File.FileData, ""); img.Data != "" {
				f.MediaType, f.Data = img.MediaType, img.Data
			} else {
				return nil, bad(where+".file", "%s: only inline file_data (a data: URL) is supported, not file ids", where)
			}
			out = append(out, ir.Part{Kind: ir.PartFile, File: f})
		default:
			return nil, bad(where+".type", "%s.type %q is not allowed here", where, p.Type)
		}
	}
	return out, nil
}

// ParseImageURL splits a data: URL into media type and base64 data; other URLs stay URLs.
func ParseImageURL(u, detail string) *ir.Image {
	if mediaType, data, ok := check.DataURL(u); ok {
		return &ir.Image{MediaType: mediaType, Data: data, Detail: detail}
	}
	return &ir.Image{URL: u, Detail: detail}
}

func decodeTools(fields map[string]json.RawMessage, r *ir.Request) *ir.Error {
	var tools []wireTool
	if err := unmarshalField(fields, "tools", &tools); err != nil {
		return bad("tools", "tools must be an array of tool objects")
	}
	for i, t := range tools {
		switch {
		case t.Type == "function" && t.Function != nil && t.Function.Name != "":
			r.Tools = append(r.Tools, ir.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters, Strict: t.Function.Strict})
		case t.Type == "custom" && t.Custom != nil && t.Custom.Name != "":
			r.Tools = append(r.Tools, ir.Tool{Name: t.Custom.Name, Description: t.Custom.Description, Custom: true})
		default:
			return bad(fmt.Sprintf("tools[%d]", i), "tools[%d] must be {\"type\":\"function\",\"function\":{\"name\",…}}", i)
		}
	}
	raw, ok := fields["tool_choice"]
	if !ok || isNull(raw) {
		return nil
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		switch mode {
		case "auto", "none", "required":
			r.ToolChoice.Mode = ir.ToolChoiceMode(mode)
			return nil
		}
		return bad("tool_choice", "tool_choice %q must be auto, none, required or an object", mode)
	}
	var obj struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		Custom struct {
			Name string `json:"name"`
		} `json:"custom"`
		AllowedTools struct {
			Mode  string     `json:"mode"`
			Tools []wireTool `json:"tools"`
		} `json:"allowed_tools"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return bad("tool_choice", "tool_choice must be a string or an object")
	}
	switch obj.Type {
	case "function":
		r.ToolChoice = ir.ToolChoice{Mode: ir.ToolNamed, Name: obj.Function.Name}
	case "custom":
		r.ToolChoice = ir.ToolChoice{Mode: ir.ToolNamed, Name: obj.Custom.Name}
	case "allowed_tools":
		r.ToolChoice.Mode = ir.ToolAuto
		if obj.AllowedTools.Mode == "required" {
			r.ToolChoice.Mode = ir.ToolRequired
		}
		for _, t := range obj.AllowedTools.Tools {
			if t.Function != nil {
				r.ToolChoice.Allowed = append(r.ToolChoice.Allowed, t.Function.Name)
			} else if t.Custom != nil {
				r.ToolChoice.Allowed = append(r.ToolChoice.Allowed, t.Custom.Name)
			}
		}
	default:
		return bad("tool_choice.type", "tool_choice.type %q must be function, custom or allowed_tools", obj.Type)
	}
	if r.ToolChoice.Mode == ir.ToolNamed && r.ToolChoice.Name == "" {
		return bad("tool_choice", "tool_choice names no tool")
	}
	return nil
}

// decodeThinking reads the reasoning controls of every chat dialect; value gives a member.
func decodeThinking(value func(string) json.RawMessage, t *ir.Thinking) *ir.Error {
	if err := unmarshalRaw(value("reasoning_effort"), &t.Effort); err != nil {
		return bad("reasoning_effort", "reasoning_effort must be a string")
	}
	if t.Effort != "" && !ir.ValidEffort(t.Effort) {
		return bad("reasoning_effort", "reasoning_effort %q is not one of %s", t.Effort, ir.EffortList)
	}
	var enable *bool
	if err := unmarshalRaw(value("enable_thinking"), &enable); err != nil {
		return bad("enable_thinking", "enable_thinking must be a boolean")
	}
	t.Enabled = enable
	var th struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	}
	if err := unmarshalRaw(value("thinking"), &th); err != nil {
		return bad("thinking", "thinking must be an object {\"type\", \"budget_tokens\"}")
	}
	switch th.Type {
	case "":
	case "enabled", "adaptive":
		on := true
		t.Enabled, t.BudgetTokens = &on, th.BudgetTokens
	case "disabled":
		off := false
		t.Enabled = &off
	default:
		return bad("thinking.type", "thinking.type %q must be enabled, adaptive or disabled", th.Type)
	}
	if t.Enabled != nil && *t.Enabled || t.Effort != "" && t.Effort != "none" {
		t.IncludeText = true // chat clients read reasoning_content when they ask for thinking
	}
	return nil
}

package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

// The request's tools, tool_choice, reasoning and text, client side.

// wireTool is a tool definition's fields.
type wireTool struct {
	Type        string          `json:"type"`
	Name        *string         `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
	Format      *struct {
		Type       string `json:"type"`
		Syntax     string `json:"syntax"`
		Definition string `json:"definition"`
	} `json:"format"`
}

// tools maps function and custom tools to IR; hosted tools and the raw custom definitions
// (their grammar has no IR equivalent) stay in Extra["tools"] for a responses route.
func (d *reqDecoder) tools() error {
	raw, ok := d.fields["tools"]
	if !ok || isNull(raw) {
		return nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return invalid("tools", "tools must be an array of tool objects")
	}
	var kept []json.RawMessage
	d.anyTools = len(list) > 0
	for i, raw := range list {
		param := fmt.Sprintf("tools[%d]", i)
		var w wireTool
		if err := unmarshalAt(param, raw, &w, "a tool object"); err != nil {
			return err
		}
		switch w.Type {
		case "":
			return invalid(param+".type", "%s.type is required", param)
		case "function", "custom":
			if w.Name == nil || *w.Name == "" {
				return invalid(param+".name", "%s.name is required", param)
			}
			if err := failed(d.names.Add(param+".name", *w.Name)); err != nil {
				return err
			}
		default:
			kept = append(kept, jsonscan.Compact(raw))
			continue
		}
		t := ir.Tool{Name: *w.Name, Description: w.Description, Strict: w.Strict}
		if w.Type == "custom" {
			t.Custom = true
			t.Parameters = customSchema(w.Format)
			kept = append(kept, jsonscan.Compact(raw))
		} else if !isNull(w.Parameters) {
			if bytes.TrimSpace(w.Parameters)[0] != '{' {
				return invalid(param+".parameters", "%s.parameters must be a JSON schema object", param)
			}
			t.Parameters = jsonscan.Compact(w.Parameters)
		}
		d.r.Tools = append(d.r.Tools, t)
	}
	if len(kept) > 0 {
		b, _ := json.Marshal(kept)
		d.extra("tools", b)
	}
	return nil
}

// customSchema is the one-string-parameter schema a custom tool becomes for formats without
// custom tools; a grammar is described to the model in the parameter's description.
func customSchema(f *struct {
	Type       string `json:"type"`
	Syntax     string `json:"syntax"`
	Definition string `json:"definition"`
}) json.RawMessage {
	desc := "The free-form input of the tool."
	if f != nil && f.Type == "grammar" && f.Definition != "" {
		desc = fmt.Sprintf("The input of the tool; it must follow this %s grammar:\n%s", f.Syntax, f.Definition)
	}
	b, _ := json.Marshal(map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"input": map[string]string{"type": "string", "description": desc}},
		"required":             []string{"input"},
		"additionalProperties": false,
	})
	return b
}

func (d *reqDecoder) toolChoice() error {
	raw, ok := d.fields["tool_choice"]
	if !ok || isNull(raw) {
		return nil
	}
	tc := &d.r.ToolChoice
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch {
		case s == "required" && !d.anyTools:
			return invalid("tool_choice", `tool_choice "required" needs tools, and the request offers none`)
		case s == "auto" || s == "none" || s == "required":
			tc.Mode = ir.ToolChoiceMode(s)
			return nil
		}
		return invalid("tool_choice", `tool_choice must be "auto", "none", "required" or an object; got %q`, s)
	}
	var w struct {
		Type  string            `json:"type"`
		Name  string            `json:"name"`
		Mode  string            `json:"mode"`
		Tools []json.RawMessage `json:"tools"`
	}
	if err := unmarshalAt("tool_choice", raw, &w, "a string or an object"); err != nil {
		return err
	}
	switch w.Type {
	case "function", "custom":
		if w.Name == "" {
			return invalid("tool_choice.name", "tool_choice.name is required")
		}
		if err := failed(d.names.Chosen("tool_choice.name", w.Name)); err != nil {
			return err
		}
		tc.Mode, tc.Name = ir.ToolNamed, w.Name
	case "allowed_tools":
		if w.Mode != "auto" && w.Mode != "required" {
			return invalid("tool_choice.mode", `tool_choice.mode must be "auto" or "required"`)
		}
		tc.Mode = ir.ToolChoiceMode(w.Mode)
		for i, t := range w.Tools {
			var ref struct{ Type, Name string }
			_ = json.Unmarshal(t, &ref)
			if (ref.Type == "function" || ref.Type == "custom") && ref.Name != "" {
				if err := failed(d.names.Chosen(fmt.Sprintf("tool_choice.tools[%d].name", i), ref.Name)); err != nil {
					return err
				}
				tc.Allowed = append(tc.Allowed, ref.Name)
			} else {
				d.extra("tool_choice", jsonscan.Compact(raw)) // names a hosted tool
			}
		}
	case "":
		return invalid("tool_choice.type", "tool_choice.type is required")
	default: // a hosted tool (web_search_preview, mcp, …)
		d.extra("tool_choice", jsonscan.Compact(raw))
	}
	return nil
}

func (d *reqDecoder) reasoning() error {
	raw, ok := d.fields["reasoning"]
	if !ok || isNull(raw) {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return invalid("reasoning", "reasoning must be an object")
	}
	th := &d.r.Thinking
	for _, k := range []string{"effort", "summary", "generate_summary"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		delete(m, k)
		var s string
		if !isNull(v) && json.Unmarshal(v, &s) != nil {
			return invalid("reasoning."+k, "reasoning.%s must be a string", k)
		}
		switch {
		case k == "effort" && s != "" && !ir.ValidEffort(s):
			return invalid("reasoning.effort", "reasoning.effort %q is not one of %s", s, ir.EffortList)
		case k == "effort":
			th.Effort = s
		case th.Summary == "": // generate_summary is the deprecated name of summary
			th.Summary = s
		}
	}
	th.IncludeText = th.Summary != ""
	if len(m) > 0 {
		b, _ := json.Marshal(m)
		d.extra("reasoning", b)
	}
	return nil
}

// text maps text.format to ResponseFormat (chat's response_format shape); the rest of text
// (verbosity) stays in Extra.
func (d *reqDecoder) text() error {
	raw, ok := d.fields["text"]
	if !ok || isNull(raw) {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return invalid("text", "text must be an object")
	}
	if f, ok := m["format"]; ok {
		delete(m, "format")
		if !isNull(f) {
			rf, err := chatResponseFormat(f)
			if err != nil {
				return err
			}
			d.r.ResponseFormat = rf
		}
	}
	if len(m) > 0 {
		b, _ := json.Marshal(m)
		d.extra("text", b)
	}
	return nil
}

// jsonSchemaFormat is the json_schema body shared by both shapes.
type jsonSchemaFormat struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

func chatResponseFormat(raw json.RawMessage) (json.RawMessage, error) {
	var f struct {
		Type string `json:"type"`
		jsonSchemaFormat
	}
	if err := unmarshalAt("text.format", raw, &f, "an object"); err != nil {
		return nil, err
	}
	switch f.Type {
	case "text", "json_object":
		return json.RawMessage(`{"type":"` + f.Type + `"}`), nil
	case "json_schema":
		if f.Name == "" {
			return nil, invalid("text.format.name", "text.format.name is required")
		}
		if isNull(f.Schema) {
			return nil, invalid("text.format.schema", "text.format.schema is required")
		}
		f.Schema = jsonscan.Compact(f.Schema)
		b, _ := json.Marshal(struct {
			Type       string           `json:"type"`
			JSONSchema jsonSchemaFormat `json:"json_schema"`
		}{"json_schema", f.jsonSchemaFormat})
		return b, nil
	}
	return nil, invalid("text.format.type", `text.format.type must be "text", "json_object" or "json_schema"`)
}

// enums checks the string members whose values the Responses API enumerates.
func (d *reqDecoder) enums() error {
	for _, e := range []struct {
		param, member string
		raw           json.RawMessage
		allowed       []string
	}{
		{"truncation", "", d.fields["truncation"], []string{"auto", "disabled"}},
		{"text.verbosity", "verbosity", d.fields["text"], []string{"low", "medium", "high"}},
	} {
		raw := e.raw
		if e.member != "" {
			var obj map[string]json.RawMessage
			if json.Unmarshal(raw, &obj) != nil {
				continue // text's own check names it
			}
			raw = obj[e.member]
		}
		var v string
		if isNull(raw) {
			continue
		}
		if json.Unmarshal(raw, &v) != nil {
			return invalid(e.param, "%s must be a string: one of %s", e.param, strings.Join(e.allowed, ", "))
		}
		if err := failed(check.OneOf(e.param, v, e.allowed...)); err != nil {
			return err
		}
	}
	return nil
}

package messages

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
)

// Tool members IR holds; others are kept per tool name in Extra["tools[].<member>"].
var toolFields = map[string]bool{"type": true, "name": true, "description": true, "input_schema": true, "strict": true, "defer_loading": true}

func decodeTools(fields map[string]json.RawMessage, r *ir.Request) *ir.Error {
	names := check.NewTools(check.AnthropicNames)
	if raw := fields["tools"]; !isNull(raw) {
		var tools []map[string]json.RawMessage
		if json.Unmarshal(raw, &tools) != nil {
			return bad("tools", "tools must be an array of tool objects")
		}
		perField := map[string]map[string]json.RawMessage{}
		servers := map[string][]json.RawMessage{}
		for i, t := range tools {
			at := fmt.Sprintf("tools[%d]", i)
			var typ string
			if err := unmarshalMember(t, "type", &typ); err != nil {
				return bad(at+".type", "type must be a string")
			}
			if typ != "" && typ != "custom" {
				var name string // a server tool's name is its type's; a tool_choice may name it
				if unmarshalMember(t, "name", &name) == nil && name != "" {
					if e := names.AddAny(at+".name", name); e != nil {
						return e
					}
				}
				servers[typ] = append(servers[typ], marshal(t))
				continue
			}
			var tool ir.Tool
			if err := unmarshalMember(t, "name", &tool.Name); err != nil || tool.Name == "" {
				return bad(at+".name", "name is required and must be a string")
			}
			if e := names.Add(at+".name", tool.Name); e != nil {
				return e
			}
			if err := unmarshalMember(t, "description", &tool.Description); err != nil {
				return bad(at+".description", "description must be a string")
			}
			if err := unmarshalMember(t, "strict", &tool.Strict); err != nil {
				return bad(at+".strict", "strict must be a boolean")
			}
			if err := unmarshalMember(t, "defer_loading", &tool.Deferred); err != nil {
				return bad(at+".defer_loading", "defer_loading must be a boolean")
			}
			if s := t["input_schema"]; !isNull(s) {
				var obj map[string]json.RawMessage
				if json.Unmarshal(s, &obj) != nil {
					return bad(at+".input_schema", "input_schema must be a JSON schema object")
				}
				tool.Parameters = s
			}
			for k, v := range t {
				if !toolFields[k] {
					if perField[k] == nil {
						perField[k] = map[string]json.RawMessage{}
					}
					perField[k][tool.Name] = v
				}
			}
			r.Tools = append(r.Tools, tool)
		}
		for k, v := range perField {
			setExtra(r, extraTools+k, marshal(v))
		}
		for typ, list := range servers {
			setExtra(r, extraTools+typ, marshal(list))
		}
	}
	raw := fields["tool_choice"]
	if isNull(raw) {
		return nil
	}
	var tc struct {
		Type            string `json:"type"`
		Name            string `json:"name"`
		DisableParallel *bool  `json:"disable_parallel_tool_use"`
	}
	if err := json.Unmarshal(raw, &tc); err != nil {
		return typeProblem("tool_choice", err)
	}
	switch tc.Type {
	case "auto":
		r.ToolChoice.Mode = ir.ToolAuto
	case "any":
		if !names.Offered() {
			return bad("tool_choice.type", "type \"any\" needs tools, and the request offers none")
		}
		r.ToolChoice.Mode = ir.ToolRequired
	case "none":
		r.ToolChoice.Mode = ir.ToolNone
	case "tool":
		if tc.Name == "" {
			return bad("tool_choice.name", "name is required when type is \"tool\"")
		}
		if e := names.Chosen("tool_choice.name", tc.Name); e != nil {
			return e
		}
		r.ToolChoice = ir.ToolChoice{Mode: ir.ToolNamed, Name: tc.Name}
	default:
		return bad("tool_choice.type", "type must be auto, any, tool or none, not %q", tc.Type)
	}
	if tc.DisableParallel != nil {
		parallel := !*tc.DisableParallel
		r.Parallel = &parallel
	}
	return nil
}

func unmarshalMember(obj map[string]json.RawMessage, name string, v any) error {
	raw, ok := obj[name]
	if !ok || isNull(raw) {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// decodeThinking reads thinking as given: enabled (with its budget), disabled, adaptive
// (on, sized by the model: no budget). display "omitted" means no thinking text back.
func decodeThinking(raw json.RawMessage, t *ir.Thinking) *ir.Error {
	if isNull(raw) {
		return nil
	}
	var th struct {
		Type         string `json:"type"`
		BudgetTokens *int   `json:"budget_tokens"`
		Display      string `json:"display"`
	}
	if err := json.Unmarshal(raw, &th); err != nil {
		return typeProblem("thinking", err)
	}
	on, off := true, false
	switch th.Type {
	case "enabled":
		if th.BudgetTokens == nil || *th.BudgetTokens < 1 {
			return bad("thinking.budget_tokens", "budget_tokens is required with type \"enabled\" and must be at least 1")
		}
		t.Enabled, t.BudgetTokens = &on, *th.BudgetTokens
	case "adaptive":
		t.Enabled = &on
	case "disabled":
		t.Enabled = &off
		return nil
	default:
		return bad("thinking.type", "type must be enabled, adaptive or disabled, not %q", th.Type)
	}
	t.IncludeText = th.Display != "omitted"
	return nil
}

// decodeOutputConfig reads output_config: effort (the effort-2025-11-24 beta's reasoning
// effort, any of ir.Efforts) into Thinking.Effort, format (json_schema) into ResponseFormat;
// members IR has no place for stay in Extra["output_config"] for a messages route.
func decodeOutputConfig(raw json.RawMessage, r *ir.Request) *ir.Error {
	if isNull(raw) {
		return nil
	}
	var oc map[string]json.RawMessage
	if json.Unmarshal(raw, &oc) != nil {
		return bad("output_config", "output_config must be an object")
	}
	if v, ok := oc["effort"]; ok && !isNull(v) {
		var effort string
		if json.Unmarshal(v, &effort) != nil {
			return bad("output_config.effort", "effort must be a string")
		}
		if !ir.ValidEffort(effort) {
			return bad("output_config.effort", "effort %q is not one of %s", effort, ir.EffortList)
		}
		r.Thinking.Effort = effort
	}
	delete(oc, "effort")
	if v, ok := oc["format"]; ok && !isNull(v) {
		rf, err := responseFormat(v)
		if err != nil {
			return err
		}
		r.ResponseFormat = rf
	}
	delete(oc, "format")
	if len(oc) > 0 {
		setExtra(r, "output_config", marshal(oc))
	}
	return nil
}

// structuredOutputName names the schema for formats whose structured output needs a name
// (chat json_schema.name, responses text.format.name); the messages format has none.
const structuredOutputName = "output"

// responseFormat turns output_config.format {"type":"json_schema","schema"} into IR's
// structured-output request, chat's response_format shape.
func responseFormat(raw json.RawMessage) (json.RawMessage, *ir.Error) {
	var f struct {
		Type   string          `json:"type"`
		Schema json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, typeProblem("output_config.format", err)
	}
	if f.Type != "json_schema" {
		return nil, bad("output_config.format.type", "type must be \"json_schema\", not %q", f.Type)
	}
	var schema map[string]json.RawMessage
	if isNull(f.Schema) || json.Unmarshal(f.Schema, &schema) != nil {
		return nil, bad("output_config.format.schema", "schema is required and must be a JSON schema object")
	}
	var buf bytes.Buffer
	json.Compact(&buf, f.Schema)
	return marshal(map[string]any{"type": "json_schema", "json_schema": map[string]any{
		"name": structuredOutputName, "schema": json.RawMessage(buf.Bytes())}}), nil
}

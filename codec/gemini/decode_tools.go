package gemini

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

// The request's tools and toolConfig, client side.

// toolsNamed is the declared functions' names (none when the request has no tools).
func (d *decoder) toolsNamed() *check.Tools {
	if d.names == nil {
		d.names = check.NewTools(check.GeminiNames)
	}
	return d.names
}

// tools reads functionDeclarations into IR tools; other tool kinds travel in Extra.
func (d *decoder) tools(raw json.RawMessage) *ir.Error {
	if isNull(raw) {
		return nil
	}
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tools); err != nil {
		return bad("tools", "tools must be an array of Tool objects")
	}
	perField := map[string]map[string]json.RawMessage{}
	kinds := map[string][]json.RawMessage{}
	d.names = check.NewTools(check.GeminiNames)
	for i, t := range tools {
		for kind, v := range t {
			if kind != "functionDeclarations" {
				kinds[kind] = append(kinds[kind], mustMarshal(map[string]json.RawMessage{kind: v}))
				continue
			}
			var decls []map[string]json.RawMessage
			if err := json.Unmarshal(v, &decls); err != nil {
				return bad(fmt.Sprintf("tools[%d].functionDeclarations", i), "functionDeclarations must be an array")
			}
			for j, fd := range decls {
				at := fmt.Sprintf("tools[%d].functionDeclarations[%d]", i, j)
				tool, err := declaration(at, fd, perField)
				if err != nil {
					return err
				}
				if e := d.names.Add(at+".name", tool.Name); e != nil {
					return gemErr(e)
				}
				d.r.Tools = append(d.r.Tools, tool)
			}
		}
	}
	for kind, list := range kinds {
		d.extra(extraTools+kind, mustMarshal(list))
	}
	for field, byTool := range perField {
		d.extra(extraTools+field, mustMarshal(byTool))
	}
	return nil
}

func declaration(at string, fd map[string]json.RawMessage, perField map[string]map[string]json.RawMessage) (ir.Tool, *ir.Error) {
	var t ir.Tool
	if json.Unmarshal(fd["name"], &t.Name) != nil || t.Name == "" {
		return t, bad(at+".name", "%s.name is required", at)
	}
	if raw, ok := fd["description"]; ok && json.Unmarshal(raw, &t.Description) != nil {
		return t, bad(at+".description", "%s.description must be a string", at)
	}
	params, jsonSchema := fd["parameters"], fd["parametersJsonSchema"]
	switch {
	case !isNull(params) && !isNull(jsonSchema):
		return t, bad(at, "%s: parameters and parametersJsonSchema must not both be set", at)
	case !isNull(jsonSchema):
		t.Parameters = jsonscan.Compact(jsonSchema)
	case !isNull(params):
		s, err := jsonSchemaOf(params)
		if err != nil {
			return t, bad(at+".parameters", "%s.parameters is not a valid Schema: %s", at, check.JSONProblem(err))
		}
		t.Parameters = s
	}
	for k, v := range fd {
		switch k {
		case "name", "description", "parameters", "parametersJsonSchema":
		default:
			if perField[k] == nil {
				perField[k] = map[string]json.RawMessage{}
			}
			perField[k][t.Name] = v
		}
	}
	return t, nil
}

func mustMarshal(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// toolConfig reads functionCallingConfig into the tool choice: ANY with one allowed
// name forces that tool, with several restricts to them; VALIDATED reads as AUTO.
func (d *decoder) toolConfig(raw json.RawMessage) *ir.Error {
	if isNull(raw) {
		return nil
	}
	var tc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tc); err != nil {
		return bad("toolConfig", "toolConfig must be an object")
	}
	for k, v := range tc {
		if k != "functionCallingConfig" {
			d.extra("toolConfig."+k, v)
		}
	}
	if isNull(tc["functionCallingConfig"]) {
		return nil
	}
	var fc map[string]json.RawMessage
	if err := json.Unmarshal(tc["functionCallingConfig"], &fc); err != nil {
		return bad("toolConfig.functionCallingConfig", "functionCallingConfig must be an object")
	}
	var mode string
	var names []string
	for k, v := range fc {
		var err error
		switch k {
		case "mode":
			err = json.Unmarshal(v, &mode)
		case "allowedFunctionNames":
			err = json.Unmarshal(v, &names)
		default:
			d.extra("toolConfig.functionCallingConfig."+k, v)
		}
		if err != nil {
			return bad("toolConfig.functionCallingConfig."+k, "functionCallingConfig.%s has the wrong type", k)
		}
	}
	for i, name := range names {
		if e := d.toolsNamed().Chosen(fmt.Sprintf("toolConfig.functionCallingConfig.allowedFunctionNames[%d]", i), name); e != nil {
			return gemErr(e)
		}
	}
	choice := ir.ToolChoice{Allowed: names}
	switch strings.ToUpper(mode) {
	case "", "MODE_UNSPECIFIED":
		if len(names) > 0 {
			choice.Mode = ir.ToolAuto
		}
	case "AUTO", "VALIDATED":
		choice.Mode = ir.ToolAuto
	case "NONE":
		choice = ir.ToolChoice{Mode: ir.ToolNone}
	case "ANY":
		choice.Mode = ir.ToolRequired
		if len(names) == 1 {
			choice = ir.ToolChoice{Mode: ir.ToolNamed, Name: names[0]}
		}
	default:
		return bad("toolConfig.functionCallingConfig.mode", "functionCallingConfig.mode %q is not one of AUTO, ANY, NONE, VALIDATED", mode)
	}
	d.r.ToolChoice = choice
	return nil
}

package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Tool helpers shared by the formats: the chat tool and tool_choice shapes, and the sample
// arguments every format's tool calls carry.

// chatTool is one entry of a chat request's "tools".
type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// isFunction reports whether the tool is a function tool, the only kind the simulator calls.
// Custom (free-form) tools are accepted but never chosen.
func (t chatTool) isFunction() bool { return t.Type == "" || t.Type == "function" }

// toolChoice is a parsed "tool_choice": a mode ("none", "auto", "required") or a forced name.
type toolChoice struct {
	mode   string
	forced string
}

// parseToolChoice accepts every tool_choice shape in the spec. allowed_tools is treated like
// auto: the simulator already calls only the tools it was given.
func parseToolChoice(raw json.RawMessage) (toolChoice, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return toolChoice{mode: "auto"}, nil
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		switch mode {
		case "none", "auto", "required":
			return toolChoice{mode: mode}, nil
		}
		return toolChoice{}, fmt.Errorf("invalid tool_choice %q: expected none, auto, required or an object", mode)
	}
	var obj struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return toolChoice{}, errors.New("invalid tool_choice: expected a string or an object")
	}
	switch obj.Type {
	case "function":
		if obj.Function.Name == "" {
			return toolChoice{}, errors.New("tool_choice.function.name is required")
		}
		return toolChoice{mode: "required", forced: obj.Function.Name}, nil
	case "allowed_tools":
		return toolChoice{mode: "auto"}, nil
	}
	return toolChoice{}, fmt.Errorf("unsupported tool_choice type %q", obj.Type)
}

// validateTools checks what the simulator relies on: a name per function tool, and
// parameters that are a JSON object when present.
func validateTools(tools []chatTool) *apiError {
	var names []string
	var at []int
	for i, t := range tools {
		if t.isFunction() && t.Function.Name != "" {
			names, at = append(names, t.Function.Name), append(at, i)
		}
	}
	if e := openAIToolNames(names, func(i int) string { return fmt.Sprintf("tools[%d].function.name", at[i]) }); e != nil {
		return e
	}
	for i, t := range tools {
		if !t.isFunction() {
			continue
		}
		if t.Function.Name == "" {
			param := fmt.Sprintf("tools[%d].function.name", i)
			return badRequest(param, "Missing required parameter: '"+param+"'.")
		}
		if _, _, err := toolProperties(t.Function.Parameters); err != nil {
			return badRequest(fmt.Sprintf("tools[%d].function.parameters", i),
				fmt.Sprintf("Invalid 'tools[%d].function.parameters': %v.", i, err))
		}
	}
	return nil
}

// toolProperties returns the property names and schemas of a tool's parameters schema.
func toolProperties(params json.RawMessage) ([]string, []json.RawMessage, error) {
	keys, values, err := objectMembers(params)
	if err != nil {
		return nil, nil, err
	}
	for i, k := range keys {
		if k == "properties" {
			names, schemas, err := objectMembers(values[i])
			if err != nil {
				return nil, nil, fmt.Errorf("properties %w", err)
			}
			return names, schemas, nil
		}
	}
	return nil, nil, nil
}

// objectMembers splits a JSON object into its keys and raw values, keeping their order (a Go
// map would sort them). Empty or null input is an empty object.
func objectMembers(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("must be a JSON object")
	}
	var keys []string
	var values []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, tok.(string))
		values = append(values, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	return keys, values, nil
}

package messages

import (
	"encoding/json"

	"github.com/modelgate/modelgate/codec/ir"
)

// How a resolved thinking request is said in the messages format: thinking, max_tokens and
// output_config, for converted requests and same-format bodies alike.

// outputConfig is the output_config member: what a messages client sent besides effort and
// format, the adaptive effort, and a json_schema structured-output request as format.
func outputConfig(r *ir.Request, effort string, loss *ir.Loss) map[string]any {
	oc := map[string]any{}
	if raw, ok := r.Extra["output_config"]; ok {
		var m map[string]json.RawMessage
		json.Unmarshal(raw, &m)
		for k, v := range m {
			oc[k] = v
		}
	}
	if effort != "" {
		oc["effort"] = effort
	}
	if f, ok := outputFormat(r.ResponseFormat); !ok {
		loss.Drop("response_format")
	} else if f != nil {
		oc["format"] = f
	}
	if len(oc) == 0 {
		return nil
	}
	return oc
}

// outputFormat is output_config.format for a json_schema response_format (nil for none or
// plain text); ok is false for what the messages format cannot ask for (json_object).
func outputFormat(rf json.RawMessage) (format map[string]any, ok bool) {
	if isNull(rf) {
		return nil, true
	}
	var f struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	switch {
	case json.Unmarshal(rf, &f) != nil:
		return nil, false
	case f.Type == "text":
		return nil, true
	case f.Type != "json_schema" || isNull(f.JSONSchema.Schema):
		return nil, false
	}
	return map[string]any{"type": "json_schema", "schema": f.JSONSchema.Schema}, true
}

// toolLoopHasThinking reports whether thinking may stay on: false when the conversation is
// in a tool loop (the last assistant turn called tools and the next user turn answers them)
// and that assistant turn does not start with a thinking block.
func toolLoopHasThinking(msgs []outMessage) bool {
	a := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" {
			a = i
			break
		}
	}
	if a < 0 || a == len(msgs)-1 || msgs[a+1].Content[0].Type != "tool_result" {
		return true
	}
	switch msgs[a].Content[0].Type {
	case "thinking", "redacted_thinking":
		return true
	}
	for _, b := range msgs[a].Content {
		if b.Type == "tool_use" {
			return false
		}
	}
	return true
}

package converse

import (
	"bytes"
	"encoding/json"

	"github.com/modelgate/modelgate/codec/claude"
	"github.com/modelgate/modelgate/codec/ir"
)

// defaultMaxTokens is maxTokens when thinking has a budget and the request gave no cap: the
// cap must exceed the budget, and Bedrock's default for the model may not.
const defaultMaxTokens = 4096

// writeThinking puts the plan into additionalModelRequestFields.
func writeThinking(p claude.Plan, extra map[string]any) {
	if p.Thinking == nil {
		return
	}
	extra["thinking"] = p.Thinking
	if p.Effort != "" {
		extra["output_config"] = map[string]any{"effort": p.Effort}
	}
}

// inference is inferenceConfig, with top_k in the additional fields for Claude. With thinking
// on, Claude takes no temperature but 1, no top_p under 0.95 and no top_k: those are dropped
// and reported, as the messages format does. Temperature and top_p are clamped to 0..1.
func inference(r *ir.Request, plan claude.Plan, fam family, extra map[string]any, loss *ir.Loss) *inferenceConfig {
	var ic inferenceConfig
	ic.MaxTokens = r.MaxTokens
	if plan.Budget > 0 {
		if ic.MaxTokens <= 0 {
			ic.MaxTokens = defaultMaxTokens
		}
		if ic.MaxTokens <= plan.Budget {
			ic.MaxTokens += plan.Budget
		}
	}
	if t := r.Temperature; t != nil {
		v := min(max(*t, 0), 1)
		switch {
		case plan.On() && v != 1:
			loss.Drop("temperature")
		default:
			if v != *t {
				loss.Drop("temperature")
			}
			ic.Temperature = &v
		}
	}
	if p := r.TopP; p != nil {
		v := min(max(*p, 0), 1)
		switch {
		case plan.On() && v < 0.95:
			loss.Drop("top_p")
		default:
			if v != *p {
				loss.Drop("top_p")
			}
			ic.TopP = &v
		}
	}
	if r.TopK != nil {
		if fam.anthropic && !plan.On() {
			extra["top_k"] = *r.TopK
		} else {
			loss.Drop("top_k")
		}
	}
	ic.StopSequences = r.Stop
	if ic.MaxTokens == 0 && ic.Temperature == nil && ic.TopP == nil && len(ic.StopSequences) == 0 {
		return nil
	}
	return &ic
}

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// customSchema declares a free-form (custom) tool as a function of one string, as the other
// codecs do.
var customSchema = json.RawMessage(`{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`)

// tools is toolConfig: the function tools (those tool_choice allows), and the choice. Converse
// has no "none": a request that forbids tools sends none, unless its history holds tool blocks,
// for which Converse wants a toolConfig; then the tools go with the default choice and the
// choice is reported. History with tool blocks and no tool offered declares the tools it
// called (their names only), since Converse refuses it otherwise; that is reported too.
func (e *encoder) tools(r *ir.Request, thinking, history bool) *toolConfig {
	tc := r.ToolChoice
	allowed := map[string]bool{}
	for _, n := range tc.Allowed {
		allowed[n] = true
	}
	var tools []tool
	for _, t := range r.LoadedTools(e.loss) {
		if len(allowed) > 0 && !allowed[t.Name] {
			continue
		}
		schema := t.Parameters
		if t.Custom {
			schema = customSchema
		} else if s := bytes.TrimSpace(schema); len(s) == 0 || bytes.Equal(s, []byte("null")) {
			schema = emptySchema
		}
		tools = append(tools, tool{ToolSpec: &toolSpec{Name: t.Name, Description: t.Description,
			InputSchema: inputSchema{JSON: schema}, Strict: t.Strict}})
	}
	if len(tools) == 0 || tc.Mode == ir.ToolNone {
		if !history {
			return nil
		}
		e.loss.Drop("tool_choice")
		if len(tools) == 0 {
			tools = historyTools(r.Messages)
		}
		if len(tools) == 0 {
			return nil
		}
		return &toolConfig{Tools: tools}
	}
	out := &toolConfig{Tools: tools}
	mode := tc.Mode
	if thinking && (mode == ir.ToolRequired || mode == ir.ToolNamed) {
		e.loss.Drop("tool_choice") // Claude thinks only with the choice left to it
		mode = ir.ToolAuto
	}
	switch mode {
	case ir.ToolAuto:
		out.ToolChoice = &toolChoice{Auto: &struct{}{}}
	case ir.ToolRequired:
		out.ToolChoice = &toolChoice{Any: &struct{}{}}
	case ir.ToolNamed:
		name := tc.Name
		if name == "" && len(tools) == 1 { // a choice among allowed tools that leaves one
			name = tools[0].ToolSpec.Name
		}
		if name == "" {
			out.ToolChoice = &toolChoice{Any: &struct{}{}} // some tool of those allowed
		} else {
			out.ToolChoice = &toolChoice{Tool: &namedTool{Name: name}}
		}
	}
	return out
}

// historyTools declares each tool the conversation called, by name, with an open schema.
func historyTools(msgs []ir.Message) []tool {
	seen := map[string]bool{}
	var tools []tool
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Kind != ir.PartToolCall || p.ToolCall == nil || p.ToolCall.Name == "" || seen[p.ToolCall.Name] {
				continue
			}
			seen[p.ToolCall.Name] = true
			tools = append(tools, tool{ToolSpec: &toolSpec{Name: p.ToolCall.Name, InputSchema: inputSchema{JSON: emptySchema}}})
		}
	}
	return tools
}

// structuredOutput is outputConfig for a json_schema response_format (the schema as a JSON
// text, as Converse takes it); json_object has no Converse spelling and is reported.
func structuredOutput(rf json.RawMessage, loss *ir.Loss) *outputConfig {
	t := bytes.TrimSpace(rf)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil
	}
	var f struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	switch {
	case json.Unmarshal(t, &f) != nil:
		loss.Drop("response_format")
		return nil
	case f.Type == "text":
		return nil
	case f.Type != "json_schema" || !json.Valid(f.JSONSchema.Schema) || bytes.Equal(bytes.TrimSpace(f.JSONSchema.Schema), []byte("null")):
		loss.Drop("response_format")
		return nil
	}
	oc := &outputConfig{TextFormat: textFormat{Type: "json_schema"}}
	var b bytes.Buffer
	json.Compact(&b, f.JSONSchema.Schema)
	oc.TextFormat.Structure.JSONSchema = jsonSchema{Schema: b.String(), Name: f.JSONSchema.Name, Description: f.JSONSchema.Description}
	return oc
}

package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

// ranges are the generationConfig members the Gemini API bounds. topK is
// an integer in the API and a float in some SDKs, so any number of at least 1 passes.
var ranges = []check.Range{
	{Param: "generationConfig.temperature", Min: 0, Max: 2},
	{Param: "generationConfig.topP", Min: 0, Max: 1},
	{Param: "generationConfig.topK", Min: 1, Max: check.Unbounded},
	{Param: "generationConfig.candidateCount", Min: 1, Max: 8, Integer: true},
	{Param: "generationConfig.maxOutputTokens", Min: 1, Max: check.Unbounded, Integer: true},
	{Param: "generationConfig.presencePenalty", Min: -2, Max: 2},
	{Param: "generationConfig.frequencyPenalty", Min: -2, Max: 2},
	{Param: "generationConfig.logprobs", Min: 0, Max: 20, Integer: true},
}

// generation reads generationConfig: sampling, the output cap, stop sequences, structured
// output and thinkingConfig. Members IR has no place for (seed, penalties, modalities, …)
// travel in Extra as "generationConfig.<name>".
func (d *decoder) generation(raw json.RawMessage) *ir.Error {
	if isNull(raw) {
		return nil
	}
	var gc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &gc); err != nil {
		return bad("generationConfig", "generationConfig must be an object")
	}
	if e := check.Ranges(gc, ranges); e != nil {
		return gemErr(e)
	}
	r := d.r
	var topK *float64
	var structured = map[string]json.RawMessage{}
	for k, v := range gc {
		var err error
		switch k {
		case "temperature":
			err = json.Unmarshal(v, &r.Temperature)
		case "topP":
			err = json.Unmarshal(v, &r.TopP)
		case "topK": // an integer in the API, a float in some SDKs
			err = json.Unmarshal(v, &topK)
		case "maxOutputTokens":
			err = json.Unmarshal(v, &r.MaxTokens)
		case "stopSequences":
			if err = json.Unmarshal(v, &r.Stop); err == nil && len(r.Stop) > maxStopSequences {
				return bad("generationConfig.stopSequences", "generationConfig.stopSequences takes at most %d sequences; got %d", maxStopSequences, len(r.Stop))
			}
		case "candidateCount":
			if err = json.Unmarshal(v, &r.Choices); err == nil && r.Choices > 1 {
				d.extra("generationConfig."+k, v) // a gemini route gives them all
			}
		case "responseMimeType", "responseJsonSchema", "_responseJsonSchema", "responseSchema":
			structured[k] = v
		case "thinkingConfig":
			if e := d.thinking(v); e != nil {
				return e
			}
		default:
			d.extra("generationConfig."+k, v)
		}
		if err != nil {
			return bad("generationConfig."+k, "generationConfig.%s must be %s", k, kindOf(err))
		}
	}
	if topK != nil {
		k := int(*topK)
		r.TopK = &k
	}
	return d.structuredOutput(structured)
}

// structuredOutput maps responseMimeType application/json (+ a schema) to the chat-shaped
// ResponseFormat IR holds; other MIME types (text/x.enum, …) travel in Extra as they are.
func (d *decoder) structuredOutput(f map[string]json.RawMessage) *ir.Error {
	if len(f) == 0 {
		return nil
	}
	var mime string
	if raw, ok := f["responseMimeType"]; ok && json.Unmarshal(raw, &mime) != nil {
		return bad("generationConfig.responseMimeType", "generationConfig.responseMimeType must be a string")
	}
	schema := f["responseJsonSchema"]
	if isNull(schema) {
		schema = f["_responseJsonSchema"]
	}
	if isNull(schema) && !isNull(f["responseSchema"]) {
		s, err := jsonSchemaOf(f["responseSchema"])
		if err != nil {
			return bad("generationConfig.responseSchema", "generationConfig.responseSchema is not a valid Schema: %s", check.JSONProblem(err))
		}
		schema = s
	}
	switch mime = strings.ToLower(strings.TrimSpace(mime)); {
	case mime == "application/json" && !isNull(schema):
		d.r.ResponseFormat = mustMarshal(map[string]any{"type": "json_schema",
			"json_schema": map[string]any{"name": "response", "schema": jsonscan.Compact(schema)}})
	case mime == "application/json":
		d.r.ResponseFormat = json.RawMessage(`{"type":"json_object"}`)
	case (mime == "" || mime == "text/plain") && isNull(schema):
	default:
		for k, v := range f {
			d.extra("generationConfig."+k, v)
		}
	}
	return nil
}

// thinkingLevels are Gemini 3's thinkingLevel values and the IR efforts they read as.
var thinkingLevels = map[string]string{"MINIMAL": "minimal", "LOW": "low", "MEDIUM": "medium", "HIGH": "high"}

// thinking reads thinkingConfig: budget 0 is off, -1 dynamic (on, the model's own
// amount), a positive budget on with that budget; a level is an effort; includeThoughts
// asks for the reasoning text.
func (d *decoder) thinking(raw json.RawMessage) *ir.Error {
	if isNull(raw) {
		return nil
	}
	var tc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tc); err != nil {
		return bad("generationConfig.thinkingConfig", "generationConfig.thinkingConfig must be an object")
	}
	t := &d.r.Thinking
	for k, v := range tc {
		at := "generationConfig.thinkingConfig." + k
		switch k {
		case "includeThoughts":
			if json.Unmarshal(v, &t.IncludeText) != nil {
				return bad(at, "%s must be a boolean", at)
			}
		case "thinkingBudget":
			var b int
			if json.Unmarshal(v, &b) != nil || b < -1 {
				return bad(at, "%s must be -1 (dynamic), 0 (off) or a positive number of tokens", at)
			}
			on := b != 0
			t.Enabled = &on
			if b > 0 {
				t.BudgetTokens = b
			}
		case "thinkingLevel":
			var level string
			if json.Unmarshal(v, &level) != nil {
				return bad(at, "%s must be a string", at)
			}
			level = strings.ToUpper(level)
			if level == "" || level == "THINKING_LEVEL_UNSPECIFIED" {
				continue
			}
			effort, ok := thinkingLevels[level]
			if !ok {
				return bad(at, "%s %q is not one of MINIMAL, LOW, MEDIUM, HIGH", at, level)
			}
			t.Effort = effort
		default:
			d.extra(at, v)
		}
	}
	return nil
}

// jsonSchemaOf rewrites a Gemini Schema (the OpenAPI 3.0 subset of `parameters` and
// `responseSchema`) as JSON Schema for formats that take JSON Schema: type names in lower
// case, nullable as a type union with "null", example as examples, integer bounds that
// protobuf JSON writes as strings as numbers; propertyOrdering, which only Gemini reads,
// is left out.
func jsonSchemaOf(raw json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return marshal(openAPIToJSONSchema(v)), nil
}

// intBounds are the Schema members protobuf JSON may write as strings (int64).
var intBounds = map[string]bool{"minItems": true, "maxItems": true, "minLength": true,
	"maxLength": true, "minProperties": true, "maxProperties": true}

func openAPIToJSONSchema(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		switch {
		case k == "propertyOrdering" || k == "nullable":
		case k == "type":
			if s, ok := val.(string); ok {
				if s = strings.ToLower(s); s != "type_unspecified" && s != "" {
					out[k] = s
				}
			} else {
				out[k] = val
			}
		case k == "example":
			out["examples"] = []any{val}
		case k == "properties" || k == "$defs" || k == "definitions":
			if props, ok := val.(map[string]any); ok {
				conv := make(map[string]any, len(props))
				for name, p := range props {
					conv[name] = openAPIToJSONSchema(p)
				}
				val = conv
			}
			out[k] = val
		case k == "items" || k == "additionalProperties" || k == "not":
			out[k] = openAPIToJSONSchema(val)
		case k == "anyOf" || k == "oneOf" || k == "allOf":
			if list, ok := val.([]any); ok {
				conv := make([]any, len(list))
				for i, alt := range list {
					conv[i] = openAPIToJSONSchema(alt)
				}
				val = conv
			}
			out[k] = val
		case intBounds[k]:
			if s, ok := val.(string); ok {
				if n, err := strconv.ParseInt(s, 10, 64); err == nil {
					val = n
				}
			}
			out[k] = val
		default:
			out[k] = val
		}
	}
	if nullable, _ := m["nullable"].(bool); nullable {
		if t, ok := out["type"].(string); ok {
			out["type"] = []any{t, "null"}
		}
	}
	return out
}

// gemErr is a shared check's error with Google's status code.
func gemErr(e *ir.Error) *ir.Error {
	if e != nil {
		e.Code = "INVALID_ARGUMENT"
	}
	return e
}

// kindOf names the JSON type a member failed to decode as (no Go words).
func kindOf(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return check.Kind(te.Type.Kind().String())
	}
	return "valid JSON"
}

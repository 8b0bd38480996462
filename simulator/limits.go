package simulator

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
)

// What the real providers refuse before generating, so a gateway that lets a bad request
// through is caught by the upstream's 400 in tests: numeric members out of their ranges, tool
// names outside the provider's pattern or given twice, and media URLs a provider will not
// fetch. Each provider words the refusal its own way (openAIRange, anthropicRange,
// geminiRange); the checks themselves are written here, apart from the gateway's.

// bound is a numeric request member a provider bounds.
type bound struct {
	path     string // member names from the top level down, dot-separated
	min, max float64
	integer  bool
}

var (
	chatBounds = []bound{
		{path: "temperature", max: 2}, {path: "top_p", max: 1}, {path: "n", min: 1, max: 128, integer: true},
		{path: "presence_penalty", min: -2, max: 2}, {path: "frequency_penalty", min: -2, max: 2},
		{path: "top_logprobs", max: 20, integer: true},
	}
	embeddingsBounds = []bound{{path: "dimensions", min: 1, max: math.Inf(1), integer: true}}
	responsesBounds  = []bound{{path: "temperature", max: 2}, {path: "top_p", max: 1}, {path: "top_logprobs", max: 20, integer: true}}
	messagesBounds   = []bound{{path: "top_p", max: 1}, {path: "top_k", max: math.Inf(1), integer: true}}
	geminiBounds     = []bound{
		{path: "generationConfig.temperature", max: 2}, {path: "generationConfig.topP", max: 1},
		{path: "generationConfig.topK", min: 1, max: math.Inf(1)},
		{path: "generationConfig.candidateCount", min: 1, max: 8, integer: true},
		{path: "generationConfig.presencePenalty", min: -2, max: 2},
		{path: "generationConfig.frequencyPenalty", min: -2, max: 2},
		{path: "generationConfig.logprobs", max: 20, integer: true},
	}
)

// outOfBounds finds the first member of body outside its bound: the bound, the value as
// written and as a number. Members of another type are the decoders' business.
func outOfBounds(body []byte, bounds []bound) (bound, string, float64, bool) {
	for _, b := range bounds {
		raw := memberAt(body, strings.Split(b.path, "."))
		v, err := strconv.ParseFloat(string(raw), 64)
		if len(raw) == 0 || err != nil {
			continue
		}
		if v < b.min || v > b.max || b.integer && v != math.Trunc(v) {
			return b, string(raw), v, true
		}
	}
	return bound{}, "", 0, false
}

// memberAt is the raw value at path in a JSON object, nil when absent.
func memberAt(body []byte, path []string) json.RawMessage {
	raw := json.RawMessage(body)
	for _, name := range path {
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil {
			return nil
		}
		raw = members[name]
	}
	return raw
}

// openAIRange is OpenAI's refusal of a member out of range ("Invalid 'temperature': decimal
// above maximum value. Expected a value <= 2, but got 99 instead.").
func openAIRange(body []byte, bounds []bound) *apiError {
	b, got, v, bad := outOfBounds(body, bounds)
	if !bad {
		return nil
	}
	if v >= b.min && v <= b.max { // in range, so a fraction where an integer belongs
		e := badRequest(b.path, fmt.Sprintf("Invalid type for '%s': expected an integer, but got a decimal number instead.", b.path))
		e.Code = "invalid_type"
		return e
	}
	kind, side, code, limit, op := "decimal", "above maximum", "above_max", b.max, "<="
	if b.integer {
		kind = "integer"
	}
	if v < b.min {
		side, code, limit, op = "below minimum", "below_min", b.min, ">="
	}
	e := badRequest(b.path, fmt.Sprintf("Invalid '%s': %s %s value. Expected a value %s %s, but got %s instead.", b.path, kind, side, op, numText(limit), got))
	e.Code = kind + "_" + code + "_value"
	return e
}

// anthropicRange is Anthropic's ("top_p: Input should be less than or equal to 1").
func anthropicRange(body []byte, bounds []bound) *apiError {
	b, _, v, bad := outOfBounds(body, bounds)
	if !bad {
		return nil
	}
	switch {
	case b.integer && v != math.Trunc(v):
		return invalidMessages("%s: Input should be a valid integer, got a number with a fractional part", b.path)
	case v < b.min:
		return invalidMessages("%s: Input should be greater than or equal to %s", b.path, numText(b.min))
	}
	return invalidMessages("%s: Input should be less than or equal to %s", b.path, numText(b.max))
}

// geminiRange is Google's.
func geminiRange(body []byte, bounds []bound) *apiError {
	b, got, _, bad := outOfBounds(body, bounds)
	if !bad {
		return nil
	}
	name := b.path[strings.LastIndexByte(b.path, '.')+1:]
	if math.IsInf(b.max, 1) {
		return invalidGemini("Unable to submit request because it has a %s value of %s but the supported range is "+
			"from %s (inclusive). Update the value and try again.", name, got, numText(b.min))
	}
	return invalidGemini("Unable to submit request because it has a %s value of %s but the supported range is "+
		"from %s (inclusive) to %s (inclusive). Update the value and try again.", name, got, numText(b.min), numText(b.max))
}

func numText(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// namePattern is a provider's rule for tool names.
type namePattern struct {
	max   int
	extra string // allowed besides [a-zA-Z0-9_-]
	regex string // as the provider quotes it
}

var (
	openAINames    = namePattern{max: 64, regex: "^[a-zA-Z0-9_-]+$"}
	anthropicNames = namePattern{max: 128, regex: "^[a-zA-Z0-9_-]{1,128}$"}
	geminiNames    = namePattern{max: 128, extra: ".:"}
)

func (p namePattern) matches(name string) bool {
	if name == "" || len(name) > p.max {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || strings.IndexByte(p.extra, c) >= 0) {
			return false
		}
	}
	return true
}

// badToolName is the first tool name the pattern refuses or that repeats an earlier one:
// its index, and whether it repeats.
func badToolName(names []string, p namePattern) (int, bool, bool) {
	seen := map[string]bool{}
	for i, n := range names {
		if !p.matches(n) {
			return i, false, true
		}
		if seen[n] {
			return i, true, true
		}
		seen[n] = true
	}
	return 0, false, false
}

// openAIToolNames refuses a bad or repeated name among names, whose params are at(i).
func openAIToolNames(names []string, at func(int) string) *apiError {
	i, dup, bad := badToolName(names, openAINames)
	switch {
	case !bad:
		return nil
	case dup:
		return badRequest("tools", fmt.Sprintf("Invalid 'tools': duplicate tool name '%s'. Each tool must have a unique name.", names[i]))
	case len(names[i]) > openAINames.max:
		e := badRequest(at(i), fmt.Sprintf("Invalid '%s': string too long. Expected a string with maximum length %d, but got a string with length %d instead.",
			at(i), openAINames.max, len(names[i])))
		e.Code = "string_above_max_length"
		return e
	}
	e := badRequest(at(i), fmt.Sprintf("Invalid '%s': string does not match pattern. Expected a string that matches the pattern '%s'.", at(i), openAINames.regex))
	e.Code = "invalid_value"
	return e
}

// webOrDataURL reports a media reference a provider fetches: an http(s) URL with a host, or
// a base64 data URL.
func webOrDataURL(s string) bool {
	if rest, ok := strings.CutPrefix(strings.ToLower(s), "data:"); ok {
		meta, data, found := strings.Cut(rest, ",")
		return found && strings.HasSuffix(meta, ";base64") && data != ""
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

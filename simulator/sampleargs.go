package simulator

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Sample tool arguments. Real agents execute the calls the simulator makes, so the arguments
// are the plainest values the schema allows: only required properties, booleans false,
// numbers at their minimum (else 1), enums and consts their first value, strings "sample"
// (or a value of the declared format), arrays empty unless minItems asks for more, nested
// required objects filled the same way. An optional flag such as run_in_background is left
// out, so an agent never starts background work and polls it forever.

// maxSampleDepth bounds recursion through nested or self-referencing ($ref) schemas.
const maxSampleDepth = 8

// sampleArguments builds a call's arguments: a JSON object with a sample value per required
// property of the tool's parameters, in the schema's own order (as a model writes them). It
// also returns the number of properties written, which counts toward completion tokens.
func sampleArguments(params json.RawMessage) (string, int) {
	s := sampler{root: params}
	return s.object(params, 0)
}

// sampler resolves local $refs against the root schema of one tool.
type sampler struct{ root json.RawMessage }

// schemaDoc is the part of a JSON schema (or Gemini/OpenAPI schema) the sampler reads.
type schemaDoc struct {
	Type     json.RawMessage   `json:"type"`
	Enum     []json.RawMessage `json:"enum"`
	Const    json.RawMessage   `json:"const"`
	Format   string            `json:"format"`
	Minimum  *float64          `json:"minimum"`
	Maximum  *float64          `json:"maximum"`
	ExclMin  json.RawMessage   `json:"exclusiveMinimum"` // a number, or a draft-4 boolean
	MinLen   *int              `json:"minLength"`
	MaxLen   *int              `json:"maxLength"`
	MinItems *int              `json:"minItems"`
	Items    json.RawMessage   `json:"items"`
	Props    json.RawMessage   `json:"properties"`
	Required []string          `json:"required"`
	AnyOf    []json.RawMessage `json:"anyOf"`
	OneOf    []json.RawMessage `json:"oneOf"`
	AllOf    []json.RawMessage `json:"allOf"`
	Ref      string            `json:"$ref"`
}

// value is the sample for one schema.
func (s sampler) value(schema json.RawMessage, depth int) string {
	var d schemaDoc
	_ = json.Unmarshal(schema, &d) // a malformed schema just gets the default sample
	if depth > maxSampleDepth {
		return "null"
	}
	if d.Ref != "" {
		if target := s.resolve(d.Ref); target != nil {
			return s.value(target, depth+1)
		}
		return `"sample"`
	}
	if len(d.Const) > 0 {
		return compactJSON(d.Const)
	}
	if len(d.Enum) > 0 {
		return compactJSON(d.Enum[0])
	}
	for _, alts := range [][]json.RawMessage{d.AnyOf, d.OneOf, d.AllOf} {
		if alt := firstNonNull(alts); alt != nil {
			return s.value(alt, depth+1)
		}
	}
	switch schemaType(d) {
	case "boolean":
		return "false"
	case "integer":
		return sampleNumber(d, true)
	case "number":
		return sampleNumber(d, false)
	case "array":
		return s.array(d, depth)
	case "object":
		obj, _ := s.object(schema, depth)
		return obj
	case "null":
		return "null"
	}
	return sampleString(d)
}

// object is the sample of an object schema: its required properties, in schema order.
func (s sampler) object(schema json.RawMessage, depth int) (string, int) {
	var d schemaDoc
	_ = json.Unmarshal(schema, &d)
	names, schemas, _ := objectMembers(d.Props) // validated by validateTools
	var b strings.Builder
	b.WriteByte('{')
	n := 0
	for i, name := range names {
		if !slices.Contains(d.Required, name) {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(name)
		b.Write(key)
		b.WriteByte(':')
		b.WriteString(s.value(schemas[i], depth+1))
		n++
	}
	b.WriteByte('}')
	return b.String(), n
}

// array is minItems samples of the item schema, or an empty array.
func (s sampler) array(d schemaDoc, depth int) string {
	n := 0
	if d.MinItems != nil {
		n = min(*d.MinItems, 16)
	}
	items := make([]string, n)
	for i := range items {
		items[i] = s.value(d.Items, depth+1)
	}
	return "[" + strings.Join(items, ",") + "]"
}

// resolve follows a local reference such as "#/$defs/Item" or "#/definitions/Item".
func (s sampler) resolve(ref string) json.RawMessage {
	if ref == "#" {
		return s.root
	}
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil
	}
	node := s.root
	for _, part := range strings.Split(path, "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		var members map[string]json.RawMessage
		if json.Unmarshal(node, &members) != nil {
			return nil
		}
		if node, ok = members[part]; !ok {
			return nil
		}
	}
	return node
}

// schemaType is the schema's type in lower case (Gemini spells types in capitals); a type
// list such as ["string","null"] uses its first non-null entry. Without a type, properties
// mean an object and items an array.
func schemaType(d schemaDoc) string {
	var typ string
	if json.Unmarshal(d.Type, &typ) != nil {
		var types []string
		_ = json.Unmarshal(d.Type, &types)
		for _, t := range types {
			if !strings.EqualFold(t, "null") {
				typ = t
				break
			}
		}
	}
	switch {
	case typ != "":
		return strings.ToLower(typ)
	case len(d.Props) > 0:
		return "object"
	case len(d.Items) > 0:
		return "array"
	}
	return ""
}

// firstNonNull is the first alternative of anyOf/oneOf that is not the null type.
func firstNonNull(alts []json.RawMessage) json.RawMessage {
	for _, a := range alts {
		var d schemaDoc
		if json.Unmarshal(a, &d) == nil && schemaType(d) == "null" {
			continue
		}
		return a
	}
	return nil
}

// sampleNumber is the schema's minimum (one above an exclusive minimum), capped by its
// maximum, else 1.
func sampleNumber(d schemaDoc, integer bool) string {
	v := 1.0
	if d.Minimum != nil {
		v = *d.Minimum
	}
	var excl float64
	var draft4 bool // draft-4 exclusiveMinimum: true excludes the minimum itself
	switch {
	case json.Unmarshal(d.ExclMin, &excl) == nil:
		v = excl + 1
		if integer {
			v = math.Floor(excl) + 1
		}
	case json.Unmarshal(d.ExclMin, &draft4) == nil && draft4 && d.Minimum != nil:
		v = *d.Minimum + 1
	}
	if integer {
		v = math.Ceil(v)
	}
	if d.Maximum != nil && v > *d.Maximum {
		v = *d.Maximum
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// formatSamples are strings valid for the common string formats.
var formatSamples = map[string]string{
	"date-time": "2026-01-01T00:00:00Z",
	"date":      "2026-01-01",
	"time":      "00:00:00",
	"email":     "sample@example.com",
	"uri":       "https://example.com/sample",
	"url":       "https://example.com/sample",
	"uuid":      "00000000-0000-4000-8000-000000000000",
	"hostname":  "example.com",
	"ipv4":      "127.0.0.1",
	"ipv6":      "::1",
}

// sampleString is "sample", a value of the declared format, or "sample" repeated or cut to
// fit minLength/maxLength.
func sampleString(d schemaDoc) string {
	str, ok := formatSamples[strings.ToLower(d.Format)]
	if !ok {
		str = "sample"
		if d.MinLen != nil && *d.MinLen > len(str) {
			str = strings.Repeat("s", min(*d.MinLen, 1024))
		}
		if d.MaxLen != nil && *d.MaxLen < len(str) {
			str = str[:max(*d.MaxLen, 0)]
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(str)
	return strings.TrimSuffix(b.String(), "\n")
}

package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strings"

	"github.com/modelgate/modelgate/codec/ir"
)

// Function parameters are sent as `parameters`, Gemini's OpenAPI-3.0 subset, not as
// `parametersJsonSchema`: every Gemini model and both backends (Developer API, Vertex) take
// `parameters`, while `parametersJsonSchema` only exists on newer models. What the subset
// cannot say is rewritten where an equivalent exists and otherwise dropped and reported.

// keptKeywords pass through unchanged (the Schema message of the Gemini API).
var keptKeywords = map[string]bool{
	"title": true, "description": true, "nullable": true, "default": true, "example": true,
	"minItems": true, "maxItems": true, "minLength": true, "maxLength": true,
	"minProperties": true, "maxProperties": true, "minimum": true, "maximum": true,
	"pattern": true, "propertyOrdering": true,
}

// keptFormats are the `format` values Gemini documents (string: enum, date-time; number:
// float, double; integer: int32, int64); others are rejected with a 400.
var keptFormats = map[string]bool{
	"enum": true, "date-time": true, "float": true, "double": true, "int32": true, "int64": true,
}

const (
	maxSchemaDepth = 64
	// maxSchemaNodes bounds the work of expanding $refs (a few refs that each use another
	// one twice would otherwise grow exponentially).
	maxSchemaNodes = 20000
)

type sanitizer struct {
	root   object
	loss   *ir.Loss
	prefix string   // loss path prefix, e.g. "tools[].parameters."
	refs   []string // $refs being expanded, to stop cycles
	depth  int
	nodes  int
}

// sanitizeSchema rewrites a JSON schema into Gemini's subset. It returns nil when the
// schema says nothing (an object without properties): Gemini rejects empty properties.
func sanitizeSchema(raw json.RawMessage, prefix string, loss *ir.Loss) (any, error) {
	v, err := parseOrdered(raw)
	if err != nil {
		return nil, err
	}
	root, _ := v.(object)
	s := &sanitizer{root: root, loss: loss, prefix: prefix, refs: []string{"#"}}
	o := s.node(v)
	if _, ok := o.get("properties"); !ok && !o.has("anyOf") {
		if t, _ := o.get("type"); t == nil || t == "object" {
			return nil, nil
		}
	}
	return o, nil
}

func (s *sanitizer) drop(keyword string) { s.loss.Drop(s.prefix + keyword) }

// node sanitizes one schema.
func (s *sanitizer) node(v any) object {
	in, ok := v.(object)
	if !ok {
		if b, isBool := v.(bool); isBool && !b {
			s.drop("false") // the schema that accepts nothing has no equivalent
		}
		return object{}
	}
	if s.depth >= maxSchemaDepth || s.nodes >= maxSchemaNodes {
		s.drop("$ref") // in practice only $ref expansion gets this deep or this large
		return object{}
	}
	s.depth++
	s.nodes++
	defer func() { s.depth-- }()

	out := object{}
	nullable := false
	if ref, ok := in.get("$ref"); ok {
		target, name, cyclic, ok := s.resolve(ref)
		switch {
		case ok && !cyclic:
			s.refs = append(s.refs, name)
			out = s.node(target)
			s.refs = s.refs[:len(s.refs)-1]
		case ok: // recursion: the inner occurrence keeps only its type
			s.drop("$ref")
			if to, isObj := target.(object); isObj {
				if t, isStr := to.get("type"); isStr {
					if ts, _ := t.(string); ts != "" {
						out.set("type", ts)
					}
				}
			}
		default:
			s.drop("$ref")
		}
	}
	for _, m := range in {
		switch m.key {
		case "$ref", "$defs", "definitions":
			// $ref expanded above; definitions are only reachable through it
		case "type":
			switch t := m.val.(type) {
			case string:
				out.set("type", t)
			case []any:
				var types []string
				for _, e := range t {
					switch e {
					case "null":
						nullable = true
					default:
						if str, ok := e.(string); ok {
							types = append(types, str)
						}
					}
				}
				if len(types) > 1 {
					s.drop("type") // a union of types: the first one is kept
				}
				if len(types) > 0 {
					out.set("type", types[0])
				}
			default:
				s.drop("type")
			}
		case "const":
			if _, has := in.get("enum"); !has {
				if m.val == nil {
					nullable = true
				} else {
					out.set("enum", []any{enumString(m.val)})
				}
			}
		case "enum":
			vals, ok := m.val.([]any)
			if !ok {
				s.drop("enum")
				continue
			}
			strs := make([]any, 0, len(vals))
			for _, e := range vals {
				if e == nil {
					nullable = true
					continue
				}
				strs = append(strs, enumString(e))
			}
			out.set("enum", strs)
		case "anyOf", "oneOf":
			branches, ok := m.val.([]any)
			if !ok {
				s.drop(m.key)
				continue
			}
			var kept []any
			for _, b := range branches {
				if isNullSchema(b) {
					nullable = true
					continue
				}
				kept = append(kept, s.node(b))
			}
			switch len(kept) {
			case 0:
			case 1:
				out.mergeAbsent(kept[0].(object))
			default:
				if prev, ok := out.get("anyOf"); ok {
					kept = append(prev.([]any), kept...)
				}
				out.set("anyOf", kept)
			}
		case "allOf":
			branches, ok := m.val.([]any)
			if !ok {
				s.drop("allOf")
				continue
			}
			for _, b := range branches {
				out.mergeAll(s.node(b))
			}
		case "properties":
			props, ok := m.val.(object)
			if !ok {
				s.drop("properties")
				continue
			}
			sp := object{}
			if prev, ok := out.get("properties"); ok {
				sp = append(sp, prev.(object)...)
			}
			for _, p := range props {
				sp.set(p.key, s.node(p.val))
			}
			if len(sp) > 0 {
				out.set("properties", sp)
			}
		case "items":
			if tuple, isTuple := m.val.([]any); isTuple {
				// Tuple validation: the elements may be any of the positions' schemas.
				s.drop("items")
				var elems []any
				for _, e := range tuple {
					elems = append(elems, s.node(e))
				}
				switch len(elems) {
				case 0:
				case 1:
					out.set("items", elems[0])
				default:
					out.set("items", object{{"anyOf", elems}})
				}
				continue
			}
			out.set("items", s.node(m.val))
		case "required":
			if req, ok := m.val.([]any); ok {
				out.set("required", req)
			} else {
				s.drop("required")
			}
		case "format":
			if f, ok := m.val.(string); ok && keptFormats[f] {
				out.set("format", f)
			} else {
				s.drop("format")
			}
		default:
			if keptKeywords[m.key] {
				out.set(m.key, m.val)
			} else {
				s.drop(m.key)
			}
		}
	}
	if nullable {
		out.set("nullable", true)
	}
	// required may only name declared properties (Gemini: "property is not defined").
	if req, ok := out.get("required"); ok {
		props, _ := out.get("properties")
		po, _ := props.(object)
		var keep []any
		for _, r := range req.([]any) {
			if name, ok := r.(string); ok && po.has(name) {
				keep = append(keep, name)
			}
		}
		if len(keep) != len(req.([]any)) {
			s.drop("required")
		}
		if len(keep) == 0 {
			out.del("required")
		} else {
			out.set("required", keep)
		}
	}
	if !out.has("type") && !out.has("anyOf") {
		switch {
		case out.has("properties"):
			out.set("type", "object")
		case out.has("enum"):
			out.set("type", "string") // Gemini's enum values are strings
		}
	}
	if t, _ := out.get("type"); (t == "integer" || t == "number") && out.has("enum") && !out.has("format") {
		out.set("format", "enum") // numbers as string enum values, as Gemini documents them
	}
	return out
}

// resolve follows a local $ref (#, #/$defs/X, #/definitions/X, #/properties/…) and says
// whether it is one being expanded already; anything else fails.
func (s *sanitizer) resolve(ref any) (target any, name string, cyclic, ok bool) {
	r, isStr := ref.(string)
	if !isStr || (r != "#" && !strings.HasPrefix(r, "#/")) {
		return nil, "", false, false
	}
	for _, open := range s.refs {
		if open == r {
			cyclic = true
		}
	}
	if r == "#" {
		return s.root, r, cyclic, s.root != nil
	}
	var cur any = s.root
	for _, tok := range strings.Split(r[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if un, err := url.PathUnescape(tok); err == nil {
			tok = un
		}
		o, isObj := cur.(object)
		if !isObj {
			return nil, "", false, false
		}
		if cur, isObj = o.get(tok); !isObj {
			return nil, "", false, false
		}
	}
	return cur, r, cyclic, true
}

func isNullSchema(v any) bool {
	o, ok := v.(object)
	if !ok {
		return false
	}
	t, _ := o.get("type")
	return t == "null" && len(o) == 1
}

// enumString renders an enum value as Gemini wants it: a string (numbers keep their text).
func enumString(v any) any {
	switch e := v.(type) {
	case string:
		return e
	case json.Number:
		return e.String()
	case bool:
		if e {
			return "true"
		}
		return "false"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// object is a JSON object that keeps its members' order (property order steers the model's
// argument order, and canonical test output is easier to read in source order).
type object []member

type member struct {
	key string
	val any
}

func (o object) get(k string) (any, bool) {
	for _, m := range o {
		if m.key == k {
			return m.val, true
		}
	}
	return nil, false
}

func (o object) has(k string) bool { _, ok := o.get(k); return ok }

func (o *object) set(k string, v any) {
	for i := range *o {
		if (*o)[i].key == k {
			(*o)[i].val = v
			return
		}
	}
	*o = append(*o, member{k, v})
}

func (o *object) del(k string) {
	for i := range *o {
		if (*o)[i].key == k {
			*o = append((*o)[:i], (*o)[i+1:]...)
			return
		}
	}
}

// mergeAbsent copies members of b that o does not have.
func (o *object) mergeAbsent(b object) {
	for _, m := range b {
		if !o.has(m.key) {
			*o = append(*o, m)
		}
	}
}

// mergeAll merges an allOf branch: properties and required are unions, other keywords are
// taken when o does not have them yet.
func (o *object) mergeAll(b object) {
	for _, m := range b {
		prev, ok := o.get(m.key)
		switch {
		case !ok:
			*o = append(*o, m)
		case m.key == "properties":
			po, _ := prev.(object)
			for _, p := range m.val.(object) {
				if !po.has(p.key) {
					po = append(po, p)
				}
			}
			o.set("properties", po)
		case m.key == "required":
			pr, _ := prev.([]any)
			for _, r := range m.val.([]any) {
				if !containsValue(pr, r) {
					pr = append(pr, r)
				}
			}
			o.set("required", pr)
		}
	}
}

func containsValue(list []any, v any) bool {
	for _, e := range list {
		if e == v {
			return true
		}
	}
	return false
}

// MarshalJSON writes the whole tree in one pass (nested objects are not re-marshaled and
// re-validated level by level).
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := appendJSON(&b, o); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func appendJSON(b *bytes.Buffer, v any) error {
	switch t := v.(type) {
	case object:
		b.WriteByte('{')
		for i, m := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := appendLeaf(b, m.key); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := appendJSON(b, m.val); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := appendJSON(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		return appendLeaf(b, t)
	}
	return nil
}

func appendLeaf(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

// parseOrdered parses JSON into object, []any, json.Number, string, bool and nil.
func parseOrdered(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := object{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(kt.(string), v) // a repeated key: the last one wins, as in encoding/json
			}
			_, err := dec.Token()
			return o, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token()
			return a, err
		}
		return nil, errors.New("unexpected delimiter")
	default:
		return t, nil
	}
}

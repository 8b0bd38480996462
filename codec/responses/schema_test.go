package responses

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"
)

// A small validator for the official OpenAPI description: $ref, allOf, anyOf/oneOf (as "at
// least one"), type (incl. "null" and nullable), enum, required, properties,
// additionalProperties, items, minimum/maximum. Only the schemas a check touches are parsed.

// specPath is the spec shared by the project; MODELGATE_OPENAPI overrides it.
func specPath() string {
	if p := os.Getenv("MODELGATE_OPENAPI"); p != "" {
		return p
	}
	return filepath.Join("..", "..", "..", "shared", "specs", "openai-openapi.yaml")
}

type openAPI struct {
	mu     sync.Mutex
	lines  []string
	blocks map[string][2]int
	parsed map[string]any
	events map[string]string // event type → schema name
}

var (
	specOnce sync.Once
	spec     *openAPI
	specErr  error
)

// subsetFile holds the schemas the tests use, extracted from the spec (descriptions and
// examples left out) so the checks run where the shared spec is not checked out.
// TestOpenAPISubsetIsCurrent keeps it in step (go test -update rewrites it).
const subsetFile = "openapi-responses.yaml"

// loadSpec reads the shared spec, or else the extracted subset.
func loadSpec(t testing.TB) *openAPI {
	t.Helper()
	specOnce.Do(func() {
		if spec, specErr = readSpec(specPath()); specErr != nil {
			spec, specErr = readSpec(fixturePath(subsetFile))
		}
	})
	if specErr != nil {
		t.Fatalf("no OpenAPI description to validate with: %v", specErr)
	}
	return spec
}

func readSpec(path string) (*openAPI, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &openAPI{blocks: map[string][2]int{}, parsed: map[string]any{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		s.lines = append(s.lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	in, name, start := false, "", 0
	for i, l := range s.lines {
		switch {
		case l == "  schemas:":
			in = true
			continue
		case !in:
			continue
		case len(l) > 2 && l[0] == ' ' && l[1] == ' ' && l[2] != ' ': // the next components section
			if name != "" {
				s.blocks[name] = [2]int{start, i}
			}
			in, name = false, ""
			continue
		}
		if strings.HasPrefix(l, "    ") && len(l) > 4 && l[4] != ' ' && strings.HasSuffix(l, ":") {
			if name != "" {
				s.blocks[name] = [2]int{start, i}
			}
			name, start = strings.TrimSuffix(strings.TrimSpace(l), ":"), i
		}
	}
	if in && name != "" {
		s.blocks[name] = [2]int{start, len(s.lines)}
	}
	if len(s.blocks) == 0 {
		return nil, fmt.Errorf("%s: no components.schemas found", path)
	}
	return s, nil
}

func (s *openAPI) schema(name string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.parsed[name]; ok {
		return v, nil
	}
	b, ok := s.blocks[name]
	if !ok {
		return nil, fmt.Errorf("schema %s not in the spec", name)
	}
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(strings.Join(s.lines[b[0]:b[1]], "\n")), &doc); err != nil {
		return nil, fmt.Errorf("schema %s: %v", name, err)
	}
	s.parsed[name] = doc[name]
	return doc[name], nil
}

// eventSchema names the schema of a stream event type, from ResponseStreamEvent.
func (s *openAPI) eventSchema(typ string) (string, error) {
	s.mu.Lock()
	ready := s.events != nil
	s.mu.Unlock()
	if !ready {
		root, err := s.schema("ResponseStreamEvent")
		if err != nil {
			return "", err
		}
		events := map[string]string{}
		for _, alt := range alternatives(root) {
			ref, _ := alt.(map[string]any)["$ref"].(string)
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			sch, err := s.schema(name)
			if err != nil {
				return "", err
			}
			props, _ := sch.(map[string]any)["properties"].(map[string]any)
			tp, _ := props["type"].(map[string]any)
			for _, e := range asList(tp["enum"]) {
				events[fmt.Sprint(e)] = name
			}
		}
		s.mu.Lock()
		s.events = events
		s.mu.Unlock()
	}
	name, ok := s.events[typ]
	if !ok {
		return "", fmt.Errorf("event type %q is not a ResponseStreamEvent", typ)
	}
	return name, nil
}

func alternatives(sch any) []any {
	m, _ := sch.(map[string]any)
	if l := asList(m["anyOf"]); l != nil {
		return l
	}
	return asList(m["oneOf"])
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// check validates a JSON document against a named schema and returns the problems found.
func (s *openAPI) check(name string, doc []byte) []string {
	var v any
	d := json.NewDecoder(bytes.NewReader(doc))
	if err := d.Decode(&v); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	var errs []string
	s.validate("$", map[string]any{"$ref": "#/components/schemas/" + name}, v, &errs, 0)
	sort.Strings(errs)
	return errs
}

func (s *openAPI) validate(path string, sch any, v any, errs *[]string, depth int) {
	if depth > 64 {
		return
	}
	m, ok := sch.(map[string]any)
	if !ok {
		return // true / {} / unknown shapes accept anything
	}
	fail := func(format string, args ...any) {
		*errs = append(*errs, path+": "+fmt.Sprintf(format, args...))
	}
	if ref, ok := m["$ref"].(string); ok {
		target, err := s.schema(strings.TrimPrefix(ref, "#/components/schemas/"))
		if err != nil {
			fail("%v", err)
			return
		}
		s.validate(path, target, v, errs, depth+1)
		return
	}
	for _, sub := range asList(m["allOf"]) {
		s.validate(path, sub, v, errs, depth+1)
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		alts := asList(m[key])
		if alts == nil {
			continue
		}
		var best []string
		matched := false
		for _, alt := range alts {
			var sub []string
			s.validate(path, alt, v, &sub, depth+1)
			if len(sub) == 0 {
				matched = true
				break
			}
			if best == nil || distance(path, sub) < distance(path, best) {
				best = sub
			}
		}
		if !matched {
			fail("matches none of the %d %s alternatives; nearest: %s", len(alts), key, strings.Join(best, "; "))
		}
	}
	if t, ok := m["type"]; ok && !(v == nil && m["nullable"] == true) {
		types := asList(t)
		if types == nil {
			types = []any{t}
		}
		okType := false
		for _, tt := range types {
			okType = okType || hasType(fmt.Sprint(tt), v)
		}
		if !okType {
			fail("is %s, want %v", jsonType(v), t)
			return
		}
	}
	if enum := asList(m["enum"]); enum != nil && !(v == nil && m["nullable"] == true) {
		found := false
		for _, e := range enum {
			found = found || sameValue(e, v)
		}
		if !found {
			fail("%v is not one of %v", v, enum)
		}
	}
	if c, ok := m["const"]; ok && !sameValue(c, v) {
		fail("%v is not %v", v, c)
	}
	if n, ok := v.(float64); ok {
		if min, ok := number(m["minimum"]); ok && n < min {
			fail("%v is below the minimum %v", n, min)
		}
		if max, ok := number(m["maximum"]); ok && n > max {
			fail("%v is above the maximum %v", n, max)
		}
	}
	if obj, ok := v.(map[string]any); ok {
		for _, r := range asList(m["required"]) {
			if _, ok := obj[fmt.Sprint(r)]; !ok {
				fail("required property %q is missing", r)
			}
		}
		props, _ := m["properties"].(map[string]any)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps, ok := props[k]; ok {
				s.validate(path+"."+k, ps, obj[k], errs, depth+1)
			} else if ap, ok := m["additionalProperties"]; ok {
				if ap == false {
					fail("property %q is not allowed", k)
				} else {
					s.validate(path+"."+k, ap, obj[k], errs, depth+1)
				}
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := m["items"]; ok {
			for i, e := range arr {
				s.validate(fmt.Sprintf("%s[%d]", path, i), items, e, errs, depth+1)
			}
		}
		if min, ok := number(m["minItems"]); ok && float64(len(arr)) < min {
			fail("has %d items, fewer than %v", len(arr), min)
		}
	}
}

// distance ranks a failed alternative: one of the wrong type or with the wrong "type"
// discriminator is far; otherwise the fewer problems, the nearer.
func distance(path string, errs []string) int {
	d := len(errs)
	for _, e := range errs {
		if strings.HasPrefix(e, path+": is ") || strings.HasPrefix(e, path+".type: ") {
			d += 1000
		}
	}
	return d
}

func hasType(t string, v any) bool {
	switch t {
	case "null":
		return v == nil
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		n, ok := v.(float64)
		return ok && n == math.Trunc(n)
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return true
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func sameValue(schemaValue, v any) bool {
	if n, ok := number(schemaValue); ok {
		f, ok := v.(float64)
		return ok && f == n
	}
	return reflect.DeepEqual(schemaValue, v)
}

// assertSchema fails the test when doc does not validate against the named schema.
func assertSchema(t *testing.T, name string, doc []byte) {
	t.Helper()
	s := loadSpec(t)
	if errs := s.check(name, doc); len(errs) > 0 {
		t.Errorf("%s does not validate:\n  %s\ndocument: %s", name, strings.Join(errs, "\n  "), doc)
	}
}

// assertEventSchema validates a stream event against the schema of its type.
func assertEventSchema(t *testing.T, typ string, doc []byte) {
	t.Helper()
	s := loadSpec(t)
	name, err := s.eventSchema(typ)
	if err != nil {
		t.Error(err)
		return
	}
	assertSchema(t, name, doc)
}

func TestSchemaCheckerCatchesProblems(t *testing.T) {
	s := loadSpec(t)
	good := `{"input_tokens":3,"input_tokens_details":{"cached_tokens":1,"cache_write_tokens":0},
		"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":5}`
	if errs := s.check("ResponseUsage", []byte(good)); len(errs) > 0 {
		t.Fatalf("a valid usage fails: %v", errs)
	}
	bad := `{"input_tokens":"3","input_tokens_details":{"cached_tokens":1},"output_tokens":2,
		"output_tokens_details":{"reasoning_tokens":0}}`
	want := []string{
		`$.input_tokens: is a string, want integer`,
		`$.input_tokens_details: required property "cache_write_tokens" is missing`,
		`$: required property "total_tokens" is missing`,
	}
	sort.Strings(want)
	if errs := s.check("ResponseUsage", []byte(bad)); !reflect.DeepEqual(errs, want) {
		t.Errorf("errors = %q\nwant %q", errs, want)
	}
	if errs := s.check("OutputItem", []byte(`{"type":"function_call","call_id":"c","name":"f"}`)); len(errs) == 0 {
		t.Error("a function_call without arguments passes")
	}
	if name, err := s.eventSchema("response.output_text.delta"); err != nil || name != "ResponseTextDeltaEvent" {
		t.Errorf("eventSchema = %q, %v", name, err)
	}
}

// subsetRoots are the schemas the tests validate with; the subset holds everything they
// reference.
var subsetRoots = []string{"Response", "CreateResponse", "ResponseStreamEvent", "ResponseUsage", "OutputItem"}

func TestOpenAPISubsetIsCurrent(t *testing.T) {
	full, err := readSpec(specPath())
	if err != nil {
		t.Skipf("the shared spec is not here to compare with: %v", err)
	}
	schemas := map[string]any{}
	var visit func(name string)
	visit = func(name string) {
		if _, ok := schemas[name]; ok {
			return
		}
		sch, err := full.schema(name)
		if err != nil {
			t.Fatal(err)
		}
		schemas[name] = stripDocs(sch, false)
		b := full.blocks[name]
		for _, l := range full.lines[b[0]:b[1]] {
			if _, ref, ok := strings.Cut(l, "#/components/schemas/"); ok {
				visit(strings.Trim(ref, `"' `))
			}
		}
	}
	for _, n := range subsetRoots {
		visit(n)
	}
	var buf bytes.Buffer
	buf.WriteString(`# Schemas of the Responses API, extracted from openai/openai-openapi openapi.yaml
# (commit f85dbe223d40e1a31cba812ab2d755c7e98a92a3) without descriptions and examples, for the
# tests of codec/responses. Regenerate: go test ./codec/responses/ -run OpenAPISubset -update
#
# The MIT License. Copyright (c) OpenAI (https://openai.com). Permission is hereby granted, free
# of charge, to any person obtaining a copy of this software and associated documentation files
# (the "Software"), to deal in the Software without restriction, including without limitation
# the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of
# the Software, and to permit persons to whom the Software is furnished to do so, subject to the
# following conditions: The above copyright notice and this permission notice shall be included
# in all copies or substantial portions of the Software. THE SOFTWARE IS PROVIDED "AS IS",
# WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED.
`)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(map[string]any{"components": map[string]any{"schemas": schemas}}); err != nil {
		t.Fatal(err)
	}
	golden(t, subsetFile, buf.Bytes())
}

// stripDocs drops documentation keywords from a schema (not properties that happen to be
// named like them).
func stripDocs(v any, properties bool) any {
	switch n := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(n))
		for k, val := range n {
			if !properties && (k == "description" || k == "example" || k == "examples" || k == "title" ||
				strings.HasPrefix(k, "x-")) {
				continue
			}
			out[k] = stripDocs(val, !properties && k == "properties")
		}
		return out
	case []any:
		out := make([]any, len(n))
		for i, e := range n {
			out[i] = stripDocs(e, false)
		}
		return out
	}
	return v
}

package catalog

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The YAML library reports a value of the wrong type, an unknown field and a key given twice
// by line, in Go's words ("cannot unmarshal !!str `abc` into int64", "field foo not found in
// type catalog.modelDoc"). yamlError says each in the file's words and names the field by its
// path in the file (models[0].context_length), like the validator's errors.
var (
	wrongType    = regexp.MustCompile("(?s)^line (\\d+): cannot unmarshal (.+?)( `.*`)? into (.+)$")
	unknownField = regexp.MustCompile(`(?s)^line (\d+): field (.*) not found in type .+$`)
	repeatedKey  = regexp.MustCompile(`(?s)^line (\d+): mapping key (".*") already defined at line (\d+)$`)
)

// yamlError is err, the library's error decoding data, as the validator would say it: one
// line per problem, each naming the file. A file that is not YAML at all keeps the library's
// message ("yaml: line 3: did not find expected key").
func yamlError(path string, data []byte, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("%s: %v", path, err)
	}
	var root yaml.Node
	yaml.Unmarshal(data, &root) // it parsed once: only the types were wrong
	lines := make([]string, len(te.Errors))
	for i, e := range te.Errors {
		lines[i] = path + ": " + explain(&root, e)
	}
	return errors.New(strings.Join(lines, "\n"))
}

// fractions finds what the library lets through silently: a number written as a float where
// a whole number belongs, which it would truncate (weight: 1.5 would be 1).
func fractions(path string, data []byte) error {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return nil
	}
	var lines []string
	walkMembers(&root, "", reflect.TypeOf(fileDoc{}), func(mb member) bool {
		v := mb.value
		if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!float" && kindOf(mb.valueType) == "a whole number" {
			lines = append(lines, fmt.Sprintf("%s: line %d: %s: must be a whole number, not %s", path, v.Line, mb.path, describe(v)))
		}
		return false
	})
	if lines == nil {
		return nil
	}
	return errors.New(strings.Join(lines, "\n"))
}

// explain is one of the library's type errors in the file's words.
func explain(root *yaml.Node, e string) string {
	if m := unknownField.FindStringSubmatch(e); m != nil {
		at, _ := find(root, m[1], func(mb member) *yaml.Node { return keyNamed(mb, m[2]) })
		if at.parent == "" {
			return fmt.Sprintf("line %s: unknown section %q (docs/catalog.md lists the fields)", m[1], m[2])
		}
		return fmt.Sprintf("line %s: %s: unknown field %q (docs/catalog.md lists the fields)", m[1], at.parent, m[2])
	}
	if m := repeatedKey.FindStringSubmatch(e); m != nil {
		name, _ := strconv.Unquote(m[2])
		at, _ := find(root, m[1], func(mb member) *yaml.Node { return keyNamed(mb, name) })
		if at.parent == "" {
			return fmt.Sprintf("line %s: section %q is given twice (first on line %s)", m[1], name, m[3])
		}
		return fmt.Sprintf("line %s: %s: %q is given twice (first on line %s)", m[1], at.parent, name, m[3])
	}
	m := wrongType.FindStringSubmatch(e)
	if m == nil {
		return e
	}
	if len(root.Content) > 0 && root.Content[0].Kind != yaml.MappingNode { // the document itself
		return fmt.Sprintf("line %s: the file must be a mapping of the catalog's sections (server, models, …), not %s", m[1], describe(root.Content[0]))
	}
	shown, scalar := strings.CutPrefix(m[3], " `") // a scalar's value (and a custom-tagged list's "")
	shown = strings.TrimSuffix(shown, "`")
	shows := func(n *yaml.Node) bool {
		return scalar && n.Kind == yaml.ScalarNode && truncated(n.Value) == shown ||
			shown == "" && (n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode)
	}
	into := strings.TrimLeft(m[4], "*")
	// The member the library decoded into that type; without one (an alias, a merge) any
	// member that shows that value.
	for _, typed := range []bool{true, false} {
		at, got := find(root, m[1], func(mb member) *yaml.Node {
			switch {
			case mb.key != nil && shows(mb.key) && (!typed || mb.keyType == into):
				return mb.key
			case shows(mb.value) && (!typed || mb.valueType == into):
				return mb.value
			}
			return nil
		})
		switch {
		case got == nil:
			continue
		case got == at.key && at.parent == "":
			return fmt.Sprintf("line %s: section names must be words, not %s", m[1], describe(got))
		case got == at.key:
			return fmt.Sprintf("line %s: %s: keys must be field names, not %s", m[1], at.parent, describe(got))
		}
		return fmt.Sprintf("line %s: %s: must be %s, not %s", m[1], at.path, kindOf(into), describe(got))
	}
	return e
}

// member is one member of the file (a mapping's key and value, or a list's item with no
// key): the path of what holds it and its own (models[0], models[0].kind), and the Go types
// its key and value decode into ("" outside the file's layout).
type member struct {
	parent, path       string
	key, value         *yaml.Node
	keyType, valueType string
}

// keyNamed is mb's key when it is name.
func keyNamed(mb member, name string) *yaml.Node {
	if mb.key != nil && mb.key.Value == name {
		return mb.key
	}
	return nil
}

// find is the first member with a node on line that pick picks, and that node.
func find(root *yaml.Node, line string, pick func(member) *yaml.Node) (member, *yaml.Node) {
	n, _ := strconv.Atoi(line)
	var found member
	var got *yaml.Node
	walkMembers(root, "", reflect.TypeOf(fileDoc{}), func(mb member) bool {
		if g := pick(mb); g != nil && g.Line == n {
			found, got = mb, g
			return true
		}
		return false
	})
	return found, got
}

// plainKey is a key a path shows as it is; another is quoted: signals["x.y"].
var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// walkMembers visits the members under n, which decodes into t (nil: outside the layout),
// until visit says stop. Aliases are not followed: the library reports the anchored node.
func walkMembers(n *yaml.Node, at string, t reflect.Type, visit func(member) bool) bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if walkMembers(c, at, t, visit) {
				return true
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := fmt.Sprintf("%s[%q]", at, k.Value)
			if plainKey.MatchString(k.Value) {
				p = strings.TrimPrefix(at+"."+k.Value, ".")
			}
			kt, vt := memberTypes(t, k.Value)
			if visit(member{at, p, k, v, typeName(kt), typeName(vt)}) || walkMembers(v, p, vt, visit) {
				return true
			}
		}
	case yaml.SequenceNode:
		var et reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			et = t.Elem()
		}
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", at, i)
			if visit(member{at, p, nil, c, "", typeName(et)}) || walkMembers(c, p, et, visit) {
				return true
			}
		}
	}
	return false
}

// memberTypes are the types the key and value of member name of a t decode into.
func memberTypes(t reflect.Type, name string) (key, value reflect.Type) {
	switch {
	case t == nil:
	case t.Kind() == reflect.Map:
		return t.Key(), t.Elem()
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag == name {
				return reflect.TypeOf(""), t.Field(i).Type
			}
		}
		return reflect.TypeOf(""), nil
	}
	return nil, nil
}

// typeName is t as the library names it (without pointers), "" for none.
func typeName(t reflect.Type) string {
	if t == nil {
		return ""
	}
	return strings.TrimLeft(t.String(), "*")
}

// truncated is a value as the library's message shows it.
func truncated(v string) string {
	if len(v) > 10 {
		return v[:7] + "..."
	}
	return v
}

// kindOf names what a Go type takes in YAML words.
func kindOf(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	}
	return "a mapping"
}

// describe is a YAML value as a message shows it: its kind, or the scalar quoted and cut.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	value := n.Value
	if len(value) > 40 {
		value = value[:37] + "..."
	}
	return strconv.Quote(value)
}

package gemini

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/modelgate/modelgate/codec/ir"
)

// withExtra renders body with the members of Extra put back where a gemini client had
// them: top-level and nested members at their dotted path, other tool kinds after the
// function declarations, per-declaration fields into their declaration. Markers of parts
// IR could not hold are reported: those parts are not in the history any more.
func withExtra(body request, extra map[string]json.RawMessage, loss *ir.Loss) ([]byte, error) {
	var top map[string]any
	if err := json.Unmarshal(marshal(body), &top); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys) // tool kinds in a stable order
	for _, k := range keys {
		v := extra[k]
		switch rest, isTool := strings.CutPrefix(k, extraTools); {
		case isTool:
			mergeTool(top, rest, v, loss)
		case strings.Contains(k, "[]"):
			loss.Drop(k) // a marker
		default:
			setPath(top, strings.Split(k, "."), v)
		}
	}
	return marshal(top), nil
}

// setPath sets obj[path...] = v, creating objects on the way; a member the encoder already
// wrote wins (it is what IR said, and IR came from the same client).
func setPath(obj map[string]any, path []string, v json.RawMessage) {
	for _, name := range path[:len(path)-1] {
		next, ok := obj[name].(map[string]any)
		if !ok {
			if _, taken := obj[name]; taken {
				return
			}
			next = map[string]any{}
			obj[name] = next
		}
		obj = next
	}
	last := path[len(path)-1]
	if _, taken := obj[last]; !taken {
		obj[last] = v
	}
}

// mergeTool puts back one "tools[].<name>" entry: an array of raw tool objects of another
// kind, or a declaration field by function name.
func mergeTool(top map[string]any, name string, v json.RawMessage, loss *ir.Loss) {
	tools, _ := top["tools"].([]any)
	var kind []json.RawMessage
	if json.Unmarshal(v, &kind) == nil {
		for _, t := range kind {
			tools = append(tools, t)
		}
		top["tools"] = tools
		return
	}
	var byFunc map[string]json.RawMessage
	if json.Unmarshal(v, &byFunc) != nil {
		loss.Drop(extraTools + name)
		return
	}
	for _, t := range tools {
		tool, _ := t.(map[string]any)
		decls, _ := tool["functionDeclarations"].([]any)
		for _, d := range decls {
			decl, _ := d.(map[string]any)
			if fn, _ := decl["name"].(string); decl != nil && byFunc[fn] != nil {
				if _, taken := decl[name]; !taken {
					decl[name] = byFunc[fn]
				}
			}
		}
	}
}

package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/codec/ir"
)

// Streamed function-call arguments (Gemini 3, functionCallingConfig.streamFunctionCallArguments):
// one call arrives as several functionCall parts. The first has the name (and any id and
// signature) and willContinue; the next ones hold only partialArgs, each one value at a JSON
// path (RFC 9535), a string possibly in several fragments for the same path; the last piece,
// without willContinue and often empty ({}), ends the call. callJoiner puts the pieces back
// together, so every client format sees one call with its whole arguments.

// partialArg is one PartialArg: a JSON path and at most one value.
type partialArg struct {
	JSONPath     string          `json:"jsonPath"`
	StringValue  *string         `json:"stringValue,omitempty"`
	NumberValue  json.RawMessage `json:"numberValue,omitempty"`
	BoolValue    *bool           `json:"boolValue,omitempty"`
	NullValue    json.RawMessage `json:"nullValue,omitempty"`
	WillContinue bool            `json:"willContinue,omitempty"`
}

// callJoiner turns the functionCall parts of one answer (or one model turn a client sends
// back as it got it) into whole calls, in order.
type callJoiner struct {
	open *joinedCall // a streamed call still waiting for its last piece
}

type joinedCall struct {
	tc   ir.ToolCall
	args *argValue // nil while the call has no partialArgs (tc.Arguments holds its args)
}

// add takes one functionCall part and returns the call it completes, if any: the part
// itself when it is whole and no streamed call is open, or the open call when this is its
// last piece. An empty functionCall with nothing open (a stray end marker) is no call.
func (j *callJoiner) add(fc *functionCall, sig string) (*ir.ToolCall, error) {
	c := j.open
	if c == nil {
		if fc.Name == "" && fc.ID == "" && isNull(fc.Args) && len(fc.PartialArgs) == 0 && !fc.WillContinue {
			return nil, nil
		}
		c = &joinedCall{tc: ir.ToolCall{Arguments: callArgs(fc.Args)}}
	}
	if c.tc.Name == "" {
		c.tc.Name = fc.Name
	}
	if c.tc.ID == "" {
		c.tc.ID = fc.ID
	}
	if c.tc.Signature == "" && sig != "" {
		c.tc.Signature, c.tc.SignatureFormat = sig, signatureFormat
	}
	for _, pa := range fc.PartialArgs {
		if c.args == nil {
			v, err := parseArgValue([]byte(c.tc.Arguments))
			if err != nil {
				return nil, err
			}
			c.args = v
		}
		if err := c.args.apply(pa); err != nil {
			return nil, err
		}
	}
	if fc.WillContinue {
		j.open = c
		return nil, nil
	}
	j.open = nil
	return c.done(), nil
}

// flush ends a streamed call whose last piece never came (the answer ended first): it is
// as whole as it will get.
func (j *callJoiner) flush() *ir.ToolCall {
	c := j.open
	j.open = nil
	if c == nil {
		return nil
	}
	return c.done()
}

// done is the joined call; its id is empty when no piece had one (the caller names it).
func (c *joinedCall) done() *ir.ToolCall {
	tc := c.tc
	if c.args != nil {
		tc.Arguments = string(c.args.appendJSON(nil))
	}
	return &tc
}

// argValue is a JSON value under construction. Objects keep their members in the order
// they first appeared, so the arguments read as the model wrote them.
type argValue struct {
	keys    []string // an object's member names, in order (members != nil)
	members map[string]*argValue
	items   []*argValue // an array's elements (isArray)
	isArray bool
	str     *strings.Builder // a string, which later fragments may extend
	raw     json.RawMessage  // a number, true, false or null
}

func newObject() *argValue { return &argValue{members: map[string]*argValue{}} }

// apply sets one partial argument. A string value extends the string already at its path
// (the fragments of one string share the path); a partialArg without a value only ends
// its path's string and changes nothing.
func (v *argValue) apply(pa partialArg) error {
	var raw json.RawMessage
	switch {
	case pa.StringValue != nil:
	case len(pa.NumberValue) > 0:
		if raw = numberJSON(pa.NumberValue); raw == nil {
			return fmt.Errorf("partialArgs %s: numberValue %s is not a number JSON can hold", pa.JSONPath, pa.NumberValue)
		}
	case pa.BoolValue != nil:
		raw = json.RawMessage(fmt.Sprint(*pa.BoolValue))
	case len(pa.NullValue) > 0:
		raw = json.RawMessage("null")
	default:
		return nil
	}
	steps, err := parseJSONPath(pa.JSONPath)
	if err != nil {
		return err
	}
	slot := v
	for _, s := range steps {
		slot = slot.child(s)
	}
	if pa.StringValue == nil {
		*slot = argValue{raw: raw}
		return nil
	}
	if slot.str == nil {
		*slot = argValue{str: &strings.Builder{}}
	}
	slot.str.WriteString(*pa.StringValue)
	return nil
}

// numberJSON is a numberValue as a JSON number, nil when it is none. Protobuf's JSON may
// write a double as a string ("1.5"); "NaN" and "Infinity" have no JSON form.
func numberJSON(raw json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') || !json.Valid(raw) {
		return nil
	}
	return raw
}

// child is the value at one step below v, made (with v turned into the container the step
// needs) when it does not exist yet. Array elements skipped over are null.
func (v *argValue) child(s pathStep) *argValue {
	if s.isIndex {
		if !v.isArray {
			*v = argValue{isArray: true}
		}
		for len(v.items) <= s.index {
			v.items = append(v.items, &argValue{raw: json.RawMessage("null")})
		}
		return v.items[s.index]
	}
	if v.members == nil {
		*v = *newObject()
	}
	c, ok := v.members[s.name]
	if !ok {
		c = &argValue{raw: json.RawMessage("null")}
		v.members[s.name] = c
		v.keys = append(v.keys, s.name)
	}
	return c
}

func (v *argValue) appendJSON(b []byte) []byte {
	switch {
	case v.members != nil:
		b = append(b, '{')
		for i, k := range v.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, marshal(k)...)
			b = append(b, ':')
			b = v.members[k].appendJSON(b)
		}
		return append(b, '}')
	case v.isArray:
		b = append(b, '[')
		for i, it := range v.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = it.appendJSON(b)
		}
		return append(b, ']')
	case v.str != nil:
		return append(b, marshal(v.str.String())...)
	}
	return append(b, v.raw...)
}

// parseArgValue reads JSON arguments (an object, as callArgs renders them) into an argValue,
// so partialArgs can be added to arguments a piece already carried.
func parseArgValue(raw []byte) (*argValue, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := readArgValue(dec)
	if err != nil {
		return nil, fmt.Errorf("functionCall.args: %v", err)
	}
	if v.members == nil {
		return newObject(), nil
	}
	return v, nil
}

func readArgValue(dec *json.Decoder) (*argValue, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			v := &argValue{isArray: true}
			for dec.More() {
				it, err := readArgValue(dec)
				if err != nil {
					return nil, err
				}
				v.items = append(v.items, it)
			}
			_, err = dec.Token()
			return v, err
		}
		v := newObject()
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			m, err := readArgValue(dec)
			if err != nil {
				return nil, err
			}
			if _, dup := v.members[k]; !dup {
				v.keys = append(v.keys, k)
			}
			v.members[k] = m
		}
		_, err = dec.Token()
		return v, err
	case string:
		v := &argValue{str: &strings.Builder{}}
		v.str.WriteString(t)
		return v, nil
	case json.Number:
		return &argValue{raw: json.RawMessage(t)}, nil
	case bool:
		return &argValue{raw: json.RawMessage(fmt.Sprint(t))}, nil
	}
	return &argValue{raw: json.RawMessage("null")}, nil
}

// pathStep is one step of a JSON path: a member name or an array index.
type pathStep struct {
	name    string
	index   int
	isIndex bool
}

// parseJSONPath reads the singular JSON paths Gemini writes (RFC 9535): "$" then steps
// ".name", "['name']" or "[\"name\"]" and "[index]", e.g. $.recipe.ingredients[0].name.
// Wildcards, slices and filters name no single value and are refused.
func parseJSONPath(p string) ([]pathStep, error) {
	bad := func(why string) error { return fmt.Errorf("partialArgs jsonPath %q: %s", p, why) }
	if !strings.HasPrefix(p, "$") {
		return nil, bad(`it does not start with "$"`)
	}
	var steps []pathStep
	for rest := p[1:]; rest != ""; {
		switch rest[0] {
		case '.':
			end := strings.IndexAny(rest[1:], ".[")
			if end < 0 {
				end = len(rest) - 1
			}
			name := rest[1 : 1+end]
			if name == "" || name == "*" {
				return nil, bad("a step names no member")
			}
			steps = append(steps, pathStep{name: name})
			rest = rest[1+end:]
		case '[':
			step, n, err := bracketStep(rest)
			if err != nil {
				return nil, bad(err.Error())
			}
			steps = append(steps, step)
			rest = rest[n:]
		default:
			return nil, bad(fmt.Sprintf("unexpected %q", rest[0]))
		}
	}
	if len(steps) == 0 {
		return nil, bad("it names the arguments object itself, not a member")
	}
	return steps, nil
}

// maxPathIndex bounds an array index in a path: the elements before it are made (null),
// and no tool argument needs anywhere near this many.
const maxPathIndex = 1 << 16

// bracketStep reads "[index]" or a quoted member name in brackets at the start of s, and
// how many bytes it took.
func bracketStep(s string) (pathStep, int, error) {
	if len(s) > 1 && (s[1] == '\'' || s[1] == '"') {
		return quotedStep(s)
	}
	end := strings.IndexByte(s, ']')
	if end < 2 {
		return pathStep{}, 0, fmt.Errorf("a [ step is empty or not closed")
	}
	n, err := strconv.Atoi(s[1:end])
	if err != nil || n < 0 || n > maxPathIndex || s[1] == '+' {
		return pathStep{}, 0, fmt.Errorf("%q is not an array index up to %d", s[1:end], maxPathIndex)
	}
	return pathStep{index: n, isIndex: true}, end + 1, nil
}

// quotedStep reads ['name'] or ["name"]; the escapes are JSON's, plus \' in either quote.
func quotedStep(s string) (pathStep, int, error) {
	q := s[1]
	text := []byte{'"'} // the name as a JSON string literal
	for i := 2; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] == '\'' {
				text = append(text, '\'')
			} else {
				text = append(text, '\\', s[i])
			}
		case c == q:
			if i+1 >= len(s) || s[i+1] != ']' {
				return pathStep{}, 0, fmt.Errorf("a quoted name is not closed by ]")
			}
			var name string
			if err := json.Unmarshal(append(text, '"'), &name); err != nil {
				return pathStep{}, 0, fmt.Errorf("a quoted name is not a valid string")
			}
			return pathStep{name: name}, i + 2, nil
		case c == '"':
			text = append(text, '\\', '"') // literal inside a single-quoted name
		default:
			text = append(text, c)
		}
	}
	return pathStep{}, 0, fmt.Errorf("a quoted name is not closed")
}

// Package check holds the checks every client format makes before any upstream is called:
// numeric ranges, enums, tool names and the URLs a request points at. Each rule has one
// message, naming the field as the client wrote it and what it allows, whichever envelope
// renders it.
package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelgate/modelgate/codec/ir"
)

// Bad is a request the client must fix: status 400, Param naming the field.
func Bad(param, format string, args ...any) *ir.Error {
	return &ir.Error{Status: 400, Kind: ir.ErrInvalidRequest, Code: "invalid_request", Param: param, Message: fmt.Sprintf(format, args...)}
}

// Unbounded is a Range without an upper bound.
var Unbounded = math.Inf(1)

// Range bounds one numeric member of a request.
type Range struct {
	Param    string // as the client wrote it: "temperature", "generationConfig.topK"
	Min, Max float64
	Integer  bool // the format takes whole numbers only
}

// Check checks a member's raw JSON value; absent (nil) and null pass.
func (r Range) Check(raw []byte) *ir.Error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	isNumber := err == nil && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') && json.Valid(raw)
	// Integers are written without a fraction or exponent: the decoders read them as Go ints.
	if !isNumber || r.Integer && bytes.ContainsAny(raw, ".eE") || v < r.Min || v > r.Max {
		return Bad(r.Param, "%s must be %s; got %s", r.Param, r.allowed(), Quote(raw))
	}
	// An integer past 64 bits is in no decoder's range: the gateway could not clamp or read it,
	// and a provider refuses it as not an integer.
	if _, err := strconv.ParseInt(string(raw), 10, 64); r.Integer && err != nil {
		return Bad(r.Param, "%s must be %s, at most %d; got %s", r.Param, r.allowed(), int64(math.MaxInt64), Quote(raw))
	}
	return nil
}

// Value checks a number the decoder already holds.
func (r Range) Value(v float64) *ir.Error {
	return r.Check(strconv.AppendFloat(nil, v, 'g', -1, 64))
}

// allowed says what the range takes: "a number from 0 to 2", "an integer of at least 1".
func (r Range) allowed() string {
	kind := "a number"
	if r.Integer {
		kind = "an integer"
	}
	switch {
	case math.IsInf(r.Max, 1):
		return fmt.Sprintf("%s of at least %s", kind, num(r.Min))
	case math.IsInf(r.Min, -1):
		return fmt.Sprintf("%s of at most %s", kind, num(r.Max))
	}
	return fmt.Sprintf("%s from %s to %s", kind, num(r.Min), num(r.Max))
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Ranges checks the members of an object (name → raw value) that have a Range; names are the
// last element of each Range's Param.
func Ranges(members map[string]json.RawMessage, ranges []Range) *ir.Error {
	for _, r := range ranges {
		name := r.Param[strings.LastIndexByte(r.Param, '.')+1:]
		if raw, ok := members[name]; ok {
			if e := r.Check(raw); e != nil {
				return e
			}
		}
	}
	return nil
}

// OneOf checks that value is one of allowed.
func OneOf(param, value string, allowed ...string) *ir.Error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return Bad(param, "%s must be one of %s; got %q", param, strings.Join(allowed, ", "), value)
}

// maxQuoted bounds how much of a bad value an error message repeats.
const maxQuoted = 40

// Quote is a raw JSON value as an error message shows it, cut to a readable length.
func Quote(raw []byte) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > maxQuoted {
		cut := maxQuoted
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// QuoteString is a string value as an error message shows it, quoted and cut like Quote.
func QuoteString(s string) string { return Quote([]byte(strconv.Quote(s))) }

// ScalarText is a JSON string or number as text (an upstream error's code may be either);
// null and other shapes are "".
func ScalarText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// JSONProblem says what is wrong with a body encoding/json refused, in a client's words: no
// Go type names, no package prefix.
func JSONProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return "got null"
	case errors.As(err, &syn):
		return fmt.Sprintf("it is not valid JSON (%s at byte %d)", strings.TrimPrefix(syn.Error(), "json: "), syn.Offset)
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Sprintf("%s must be %s, not %s", typ.Field, Kind(typ.Type.Kind().String()), typ.Value)
	case errors.As(err, &typ):
		return fmt.Sprintf("got %s", typ.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// Kind names the JSON type a Go kind decodes from, for messages.
func Kind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "slice", "array":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	}
	return "another type"
}

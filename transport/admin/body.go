package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
)

// bodyProblem finds what encoding/json lets through in a body it decoded into v (a pointer to
// a struct of json-tagged members): a value other than an object (null), a member spelt in
// another case (it matches case-insensitively) or given twice (the last would win), and
// anything after the object. An operator's body is one object of the documented members, so
// what is stored is what was sent. It returns the member at fault ("" for the body) and the
// problem, or "" and "" when there is none.
func bodyProblem(body []byte, v any) (param, problem string) {
	names := memberNames(v)
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", "it must be an object, not " + check.Quote(body)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		name, _ := tok.(string)
		if err != nil || dec.Decode(new(json.RawMessage)) != nil {
			return "", "it is not valid JSON"
		}
		i := slices.IndexFunc(names, func(n string) bool { return strings.EqualFold(n, name) })
		switch {
		case i >= 0 && names[i] != name:
			return names[i], fmt.Sprintf("member %q must be spelt %q", name, names[i])
		case seen[name]:
			return name, fmt.Sprintf("member %q is given twice", name)
		}
		seen[name] = true
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return "", "it is not valid JSON"
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", "it must be one JSON object with nothing after it"
	}
	return "", ""
}

// memberNames are the json names of the struct v points to.
func memberNames(v any) []string {
	t := reflect.TypeOf(v).Elem()
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}

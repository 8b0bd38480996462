package responses

import (
	"reflect"
	"strings"

	"github.com/modelgate/modelgate/codec/jsonscan"
)

// memberNames are the JSON member names of a wire struct, from its tags.
func memberNames(t reflect.Type) []string {
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

var (
	itemMembers = memberNames(reflect.TypeFor[wireItem]())
	partMembers = memberNames(reflect.TypeFor[wirePart]())
)

// exactMembers refuses a member whose name is one of names only when case is ignored
// ("tYpe"): encoding/json would read it as that member, but the Responses API's names are
// case-sensitive, so the item would mean one thing here and another upstream.
func exactMembers(param string, raw []byte, names []string) error {
	var bad, want string
	jsonscan.Members(raw, func(key []byte, _ jsonscan.Span) bool {
		k := jsonscan.Key(key)
		for _, n := range names {
			if k != n && strings.EqualFold(k, n) {
				bad, want = k, n
				return false
			}
		}
		return true
	})
	if bad == "" {
		return nil
	}
	return invalid(param+"."+bad, "%s.%s is not a member of this object: member names are case-sensitive; did you mean %q?", param, bad, want)
}

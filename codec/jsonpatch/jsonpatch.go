// Package jsonpatch sets and removes a few top-level members of a JSON object in its text,
// keeping every other byte as it was written: member order, spacing, escapes, numbers and
// members the gateway does not know. It is how a same-format route gets the client's body with
// the route's model id and the few parameters the gateway translates, without decoding the body
// into a map and encoding it again.
//
// A member is found by its name as encoding/json reads it: escapes resolved ("mod\u0065l" is
// model), exact case (as decoding into a map). When a name occurs more than once a decoder keeps
// the last value (Value reads that one); a set member is written once, with the op's value, in
// the place where the name first stood, and its later occurrences are removed, so the result
// has one member of that name and decodes as decode-set-encode of the body would. A removed
// member goes with all its occurrences. A member set that was absent is added at the end.
package jsonpatch

import (
	"bytes"
	"encoding/json"

	"github.com/modelgate/modelgate/codec/jsonscan"
)

// Op sets the top-level member Key to Value (JSON text, written as it is), or removes it when
// Value is nil.
type Op struct {
	Key   string
	Value []byte
}

// Set is an Op that sets key to value.
func Set(key string, value []byte) Op { return Op{Key: key, Value: value} }

// Remove is an Op that removes key.
func Remove(key string) Op { return Op{Key: key} }

// Member is one top-level member of a scanned object: its raw key (between its quotes, escapes
// as written), where the key (between its quotes) and the value are.
type Member struct {
	Raw    []byte
	Key, V jsonscan.Span
}

// Object is a JSON object's text with its top-level members located.
type Object struct {
	Text    []byte
	Members []Member
	open    int // the index of '{'
}

// Scan locates the top-level members of the object that is the whole of text (whitespace around
// it allowed). The error reports text that is not exactly one well-formed object, as
// encoding/json would reject it.
func Scan(text []byte) (*Object, error) {
	o := &Object{Text: text, open: bytes.IndexByte(text, '{')}
	err := jsonscan.MemberSpans(text, func(k []byte, ks, v jsonscan.Span) bool {
		o.Members = append(o.Members, Member{Raw: k, Key: ks, V: v})
		return true
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// Apply is Scan then Object.Apply.
func Apply(text []byte, ops ...Op) ([]byte, error) {
	o, err := Scan(text)
	if err != nil {
		return nil, err
	}
	return o.Apply(ops...), nil
}

// Value is the value of the member named key (its last occurrence), nil when absent.
func (o *Object) Value(key string) []byte {
	for i := len(o.Members) - 1; i >= 0; i-- {
		if m := o.Members[i]; jsonscan.KeyIs(m.Raw, key) {
			return o.Text[m.V.Start:m.V.End]
		}
	}
	return nil
}

// Apply returns the text with the ops made (see the package comment); with several ops for one
// key the last counts. Without a change to make it returns the text itself.
func (o *Object) Apply(ops ...Op) []byte {
	// plan[i] is what becomes of member i: kept (-1), removed (-2), or given ops[k]'s value
	// (k >= 0; only the first occurrence of a name that is set).
	var buf [16]int
	plan := buf[:0]
	if len(o.Members) > len(buf) {
		plan = make([]int, 0, len(o.Members))
	}
	plan = plan[:len(o.Members)]
	var fbuf [16]bool
	found := fbuf[:0] // the ops whose key is in the text
	if len(ops) > len(fbuf) {
		found = make([]bool, 0, len(ops))
	}
	found = found[:len(ops)]
	changes := false
	for i, m := range o.Members {
		k := opFor(ops, m.Raw)
		switch {
		case k < 0:
			plan[i] = -1
		case ops[k].Value == nil || found[k]:
			plan[i], changes = -2, true
		default:
			plan[i] = k
			changes = changes || !bytes.Equal(o.Text[m.V.Start:m.V.End], ops[k].Value)
		}
		if k >= 0 {
			found[k] = true
		}
	}
	for k, op := range ops {
		if op.Value != nil && !found[k] && lastOp(ops, k) {
			changes = true
		}
	}
	if !changes {
		return o.Text
	}
	n := len(o.Text)
	for _, op := range ops {
		n += len(op.Key) + len(op.Value) + 4
	}
	out := append(make([]byte, 0, n), o.Text[:o.open+1]...)
	first := true // no member written yet
	end := o.open + 1
	for i, m := range o.Members {
		sep := o.Text[end : m.Key.Start-1] // the whitespace and comma before the member
		end = m.V.End
		if plan[i] == -2 {
			continue
		}
		if first && i > 0 {
			sep = trimComma(sep) // the members before it were removed, and their commas
		}
		first = false
		out = append(out, sep...)
		if plan[i] == -1 {
			out = append(out, o.Text[m.Key.Start-1:m.V.End]...)
			continue
		}
		out = append(out, o.Text[m.Key.Start-1:m.V.Start]...)
		out = append(out, ops[plan[i]].Value...)
	}
	for k, op := range ops {
		if op.Value == nil || found[k] || !lastOp(ops, k) {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = appendKey(out, op.Key)
		out = append(out, ':')
		out = append(out, op.Value...)
	}
	return append(out, o.Text[end:]...)
}

// opFor is the index of the last op naming the raw key, -1 when none does.
func opFor(ops []Op, raw []byte) int {
	for i := len(ops) - 1; i >= 0; i-- {
		if jsonscan.KeyIs(raw, ops[i].Key) {
			return i
		}
	}
	return -1
}

// lastOp reports that no later op names the same key as ops[i].
func lastOp(ops []Op, i int) bool {
	for _, op := range ops[i+1:] {
		if op.Key == ops[i].Key {
			return false
		}
	}
	return true
}

// trimComma removes the comma (and the whitespace before it) from a separator.
func trimComma(sep []byte) []byte {
	if i := bytes.IndexByte(sep, ','); i >= 0 {
		return sep[i+1:]
	}
	return sep
}

func appendKey(out []byte, key string) []byte {
	if plainKey(key) {
		out = append(out, '"')
		out = append(out, key...)
		return append(out, '"')
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(key)
	return append(out, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

// plainKey reports a key that is its own JSON string body: printable ASCII, no quote or
// backslash.
func plainKey(key string) bool {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// Sub is the op for the member key of o when it is an object to change: its members named in
// remove go, then the ops are made, and an object left empty goes altogether. A member that is
// absent or not an object is taken as {} (a decoder into a map would drop it the same way).
func Sub(o *Object, key string, ops []Op, remove ...string) Op {
	all := make([]Op, 0, len(remove)+len(ops))
	for _, k := range remove {
		all = append(all, Remove(k))
	}
	all = append(all, ops...)
	inner, err := Scan(o.Value(key))
	if err != nil {
		inner, _ = Scan([]byte("{}"))
	}
	out := inner.Apply(all...)
	if empty, _ := Scan(out); len(empty.Members) == 0 {
		return Remove(key)
	}
	return Set(key, out)
}

// Answer is how a same-format relay readies a whole answer in one scan: text with the member
// modelKey, where present, set to model (JSON text; never added), and the value of the member
// usageKey (nil when absent). Text that is not one object comes back as it is, with no usage.
func Answer(text []byte, modelKey string, model []byte, usageKey string) (out, usage []byte) {
	o, err := Scan(text)
	if err != nil {
		return text, nil
	}
	usage = o.Value(usageKey)
	if o.Value(modelKey) == nil {
		return text, usage
	}
	return o.Apply(Set(modelKey, model)), usage
}

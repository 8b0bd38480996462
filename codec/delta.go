package codec

import "github.com/modelgate/modelgate/codec/jsonscan"

// IsDeltaEvent reports a stream frame that is a well-formed JSON object of one of kinds, its
// kind read as a format's decoder reads it: the SSE name first and the data's last type member
// only without one (nameFirst, messages), or the type member first and the name only without
// one (responses). A type written with escapes is not resolved: such a frame is not called a
// delta, and goes to the decoder. Only the grammar and the kind are checked: a delta whose
// members have the wrong JSON types is passed on as it is (ir.DeltaSkipper).
func IsDeltaEvent(name, data []byte, nameFirst bool, kinds []string) bool {
	var typ []byte
	err := jsonscan.Members(data, func(k []byte, v jsonscan.Span) bool {
		if jsonscan.KeyIs(k, "type") {
			typ = data[v.Start:v.End]
		}
		return true
	})
	if err != nil || len(typ) > 0 && typ[0] != '"' {
		return false // the decoder refuses it
	}
	kind := name
	if len(typ) > 2 && (!nameFirst || len(name) == 0) {
		kind = typ[1 : len(typ)-1]
	}
	for _, k := range kinds {
		if string(kind) == k {
			return true
		}
	}
	return false
}

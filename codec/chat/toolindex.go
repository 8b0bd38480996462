package chat

// toolIndexes numbers one choice's streamed tool calls 0, 1, 2… in order of first appearance,
// whatever the upstream numbered them: OpenAI-compatible servers in front of Claude count
// content blocks (the first call is 1), some skip numbers, and some number every call 0 and
// tell calls apart only by a new id. Chat clients need the position in the final tool_calls
// array (the openai-node stream helper crashes on anything else).
type toolIndexes struct {
	ours map[int]int    // upstream index -> ours
	ids  map[int]string // upstream index -> the id of the call it currently names
	next int
}

// index is our index for a fragment with the upstream's index and id ("" on a continuation,
// which carries only the index); fresh reports the first fragment of a call.
func (x *toolIndexes) index(up int, id string) (idx int, fresh bool) {
	if x.ours == nil {
		x.ours, x.ids = map[int]int{}, map[int]string{}
	}
	idx, known := x.ours[up]
	// A new id on a known index is a new call; a repeated id is the same call.
	if known && (id == "" || id == x.ids[up]) {
		return idx, false
	}
	idx = x.next
	x.next++
	x.ours[up], x.ids[up] = idx, id
	return idx, true
}

package api

import (
	"encoding/json"
	"strconv"
)

// openBlocks follows the content blocks of a messages stream passed through as it is, so that
// the client's blocks are closed before the answer ends even when the upstream leaves one
// open: Bedrock, when max_tokens cuts a tool call, sends message_delta with the tool_use block
// never stopped, and an SDK's accumulator then holds a block that never ends. Only the events
// around blocks are read; content deltas cost a comparison of their name.
type openBlocks struct {
	open []int // indexes started and not yet stopped, in the order they started
}

// before returns the content_block_stop frames the event named name must be preceded by:
// one for each block still open when the message's end (message_delta, message_stop) comes.
func (b *openBlocks) before(name, data []byte) [][]byte {
	switch string(name) {
	case "content_block_start":
		if i, ok := blockIndex(data); ok {
			b.open = append(b.open, i)
		}
	case "content_block_stop":
		if i, ok := blockIndex(data); ok {
			for j, o := range b.open {
				if o == i {
					b.open = append(b.open[:j], b.open[j+1:]...)
					break
				}
			}
		}
	case "message_delta", "message_stop":
		if len(b.open) == 0 {
			return nil
		}
		stops := make([][]byte, len(b.open))
		for j, i := range b.open {
			stops[j] = []byte(`{"type":"content_block_stop","index":` + strconv.Itoa(i) + `}`)
		}
		b.open = b.open[:0]
		return stops
	}
	return nil
}

func blockIndex(data []byte) (int, bool) {
	var ev struct {
		Index *int `json:"index"`
	}
	if json.Unmarshal(data, &ev) != nil || ev.Index == nil {
		return 0, false
	}
	return *ev.Index, true
}

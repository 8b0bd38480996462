package responses

import (
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// TestStreamDecoderHostileEvents: events a provider should never send become events or an
// error, never a panic (a call announced only by its done event, with neither an
// output_index nor an id to find it again by, used to be a nil dereference).
func TestStreamDecoderHostileEvents(t *testing.T) {
	irtest.DecodeHostile(t, func() ir.StreamDecoder { return Format.NewStreamDecoder() }, []irtest.HostileChunk{
		{Name: "a call done with neither output_index nor id",
			Chunk: `{"type":"response.output_item.done","item":{"type":"function_call","name":"f","arguments":"{}"}}`,
			Want:  `start() tool_start(name="f" index=0) tool_args(text="{}" index=0)`},
		{Name: "the same with keys in other case",
			Chunk: `{"tYpe":"response.output_item.done","item":{"tYpe":"function_call"}}`,
			Want:  `start() tool_start(index=0)`},
	})
}

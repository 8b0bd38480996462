package simulator

import (
	"encoding/base64"
	"slices"
)

// invokeStreamFailure is how a Bedrock stream fails after HTTP 200: a modelStreamErrorException
// message carrying the model's own status and message (what was Anthropic's overloaded error
// event), after which the stream ends.
func invokeStreamFailure() []sseEvent {
	return []sseEvent{{name: "modelStreamErrorException", exception: true, data: obj{
		{"message", "The model encountered an error while streaming (simulated): Overloaded"},
		{"originalStatusCode", 529},
		{"originalMessage", "Overloaded"},
	}}}
}

// invokeStreamEvents lays out InvokeModelWithResponseStream: each event of the Messages stream
// is one "chunk" event whose payload is {"bytes": <base64 of the event's JSON>, "p": padding},
// and message_stop carries Bedrock's amazon-bedrock-invocationMetrics (input and output
// tokens, the latency to the last and to the first byte, in milliseconds).
func invokeStreamEvents(r messagesReply, b Behavior) []sseEvent {
	events := messagesStream(r, invokeStreamFailure)
	out := make([]sseEvent, 0, len(events))
	for i, ev := range events {
		if ev.exception {
			out = append(out, ev)
			continue
		}
		if ev.name == "message_stop" {
			ev.data = append(slices.Clip(ev.data.(obj)), member{"amazon-bedrock-invocationMetrics", obj{
				{"inputTokenCount", r.answer.uncachedTokens()},
				{"outputTokenCount", r.answer.outputTokens},
				{"invocationLatency", streamLatency(b, len(events)-1).Milliseconds()},
				{"firstByteLatency", b.FirstByteDelay.Milliseconds()},
			}})
		}
		data, err := marshalJSON(ev.data)
		if err != nil {
			panic("simulator: encoding a stream event: " + err.Error()) // obj of plain values: cannot fail
		}
		out = append(out, sseEvent{name: "chunk", data: obj{{"bytes", base64.StdEncoding.EncodeToString(data)}, {"p", padding(i)}}})
	}
	return out
}

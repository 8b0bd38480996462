package simulator

import "encoding/json"

// messagesOverloaded is the error event of a Messages stream that fails after HTTP 200: what
// would have been a 529. The stream ends after it, without message_stop.
func messagesOverloaded() []sseEvent {
	return []sseEvent{{name: "error", data: obj{{"type", "error"},
		{"error", obj{{"type", "overloaded_error"}, {"message", "Overloaded"}}}}}}
}

// messagesEvents lays out a Messages stream. Every event's "event:" line equals its
// JSON type: message_start (input usage, placeholder output_tokens 1), then per content block
// content_block_start, its deltas and content_block_stop, with one ping after the first
// block opens, then message_delta (stop reason, cumulative output_tokens) and message_stop.
// Text and thinking stream one word per delta; tool input streams as an empty partial_json
// followed by fragments of at most argumentFragmentBytes (none for a tool without arguments,
// whose input the client must read as {}); the thinking signature arrives in a
// signature_delta just before its block closes.
func messagesEvents(r messagesReply) []sseEvent { return messagesStream(r, messagesOverloaded) }

// messagesStream lays out the stream with failure as its mid-stream error: Anthropic's error
// event, or the exception a cloud platform sends in its place.
func messagesStream(r messagesReply, failure func() []sseEvent) []sseEvent {
	a := r.answer
	sc := newScript(a, failure)
	emit := func(typ string, fields ...member) { sc.add(typ, append(obj{{"type", typ}}, fields...)) }
	index := 0
	blockDelta := func(d obj) obj {
		return obj{{"type", "content_block_delta"}, {"index", index}, {"delta", d}}
	}
	pinged := false
	ping := func() {
		if !pinged {
			emit("ping")
			pinged = true
		}
	}
	open := func(block obj) {
		emit("content_block_start", member{"index", index}, member{"content_block", block})
		ping()
	}
	closeBlock := func() {
		emit("content_block_stop", member{"index", index})
		index++
	}

	emit("message_start", member{"message", obj{
		{"id", r.id}, {"type", "message"}, {"role", "assistant"}, {"content", []obj{}},
		{"model", r.model}, {"stop_reason", nil}, {"stop_sequence", nil}, {"usage", r.usage(1)},
	}})
	if a.reasoning != nil {
		open(obj{{"type", "thinking"}, {"thinking", ""}, {"signature", ""}})
		for i, w := range a.reasoning {
			sc.addDelta("content_block_delta", blockDelta(obj{{"type", "thinking_delta"}, {"thinking", spaced(i, w)}}))
		}
		sig := signature("thinking", a.reasoningText())
		sc.add("content_block_delta", blockDelta(obj{{"type", "signature_delta"}, {"signature", sig}}))
		closeBlock()
	}
	if len(a.words) > 0 {
		open(obj{{"type", "text"}, {"text", ""}})
		for i, w := range a.words {
			sc.addDelta("content_block_delta", blockDelta(obj{{"type", "text_delta"}, {"text", spaced(i, w)}}))
		}
		closeBlock()
	}
	for i, c := range a.calls {
		open(obj{{"type", "tool_use"}, {"id", r.toolIDs[i]}, {"name", c.name}, {"input", obj{}}})
		sc.add("content_block_delta", blockDelta(obj{{"type", "input_json_delta"}, {"partial_json", ""}}))
		if !isEmptyObject(c.arguments) {
			for _, piece := range splitUTF8(c.arguments, argumentFragmentBytes) {
				sc.addDelta("content_block_delta", blockDelta(obj{{"type", "input_json_delta"}, {"partial_json", piece}}))
			}
		}
		closeBlock()
	}
	ping() // an answer without blocks still pings once
	sc.ending()
	emit("message_delta",
		member{"delta", obj{{"stop_reason", r.stopReason()}, {"stop_sequence", r.stopSequence()}}},
		member{"usage", obj{{"output_tokens", a.outputTokens}}})
	emit("message_stop")
	return sc.events
}

// spaced is word i of a streamed text: a space before every word but the first, so the
// deltas concatenate to the words joined by spaces.
func spaced(i int, w string) string {
	if i > 0 {
		return " " + w
	}
	return w
}

// isEmptyObject reports whether a JSON object has no members.
func isEmptyObject(s string) bool {
	keys, _, err := objectMembers(json.RawMessage(s))
	return err == nil && len(keys) == 0
}

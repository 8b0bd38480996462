package simulator

// converseStreamFailure is how a ConverseStream fails after HTTP 200: the exception message
// InvokeModel's stream sends too, then the end of the stream.
func converseStreamFailure() []sseEvent { return invokeStreamFailure() }

// converseEvents lays out a ConverseStream. Every payload is the event's member content with a
// "p" padding member last: messageStart (role), then per content block its deltas and
// contentBlockStop, then messageStop (stopReason) and metadata (usage; metrics.latencyMs, the
// time to this last event). Only toolUse blocks open with a contentBlockStart (toolUseId and
// name), as Bedrock sends them; text and reasoning text stream one word per delta, the
// reasoning's signature in a delta of its own before its block stops; tool input streams in
// fragments of at most argumentFragmentBytes, none for a tool without arguments, whose input
// the client must read as {}.
func converseEvents(r converseReply, b Behavior) []sseEvent {
	a := r.answer
	sc := newScript(a, converseStreamFailure)
	event := func(fields ...member) obj { return append(obj(fields), member{"p", padding(len(sc.events))}) }
	add := func(typ string, fields ...member) { sc.add(typ, event(fields...)) }
	index := 0
	delta := func(d obj) {
		sc.addDelta("contentBlockDelta", event(member{"contentBlockIndex", index}, member{"delta", d}))
	}
	closeBlock := func() {
		add("contentBlockStop", member{"contentBlockIndex", index})
		index++
	}

	add("messageStart", member{"role", "assistant"})
	if a.reasoning != nil {
		for i, w := range a.reasoning {
			delta(obj{{"reasoningContent", obj{{"text", spaced(i, w)}}}})
		}
		add("contentBlockDelta", member{"contentBlockIndex", index},
			member{"delta", obj{{"reasoningContent", obj{{"signature", signature("thinking", a.reasoningText())}}}}})
		closeBlock()
	}
	if len(a.words) > 0 {
		for i, w := range a.words {
			delta(obj{{"text", spaced(i, w)}})
		}
		closeBlock()
	}
	for i, c := range a.calls {
		add("contentBlockStart", member{"contentBlockIndex", index},
			member{"start", obj{{"toolUse", obj{{"toolUseId", r.toolIDs[i]}, {"name", c.name}}}}})
		if !isEmptyObject(c.arguments) {
			for _, piece := range splitUTF8(c.arguments, argumentFragmentBytes) {
				delta(obj{{"toolUse", obj{{"input", piece}}}})
			}
		}
		closeBlock()
	}
	sc.ending()
	add("messageStop", member{"stopReason", r.stopReason()})
	add("metadata", member{"usage", r.usage()},
		member{"metrics", obj{{"latencyMs", streamLatency(b, len(sc.events)).Milliseconds()}}})
	return sc.events
}

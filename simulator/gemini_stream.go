package simulator

// geminiUnavailable is how a Gemini stream fails after HTTP 200: a bare JSON error object in
// place of a data chunk (go-genai turns any non-"data:" chunk into an error), then the
// connection closes.
func geminiUnavailable() []sseEvent {
	return []sseEvent{{bare: true, data: obj{{"error", obj{{"code", 503},
		{"message", "The model is overloaded. Please try again later."}, {"status", "UNAVAILABLE"}}}}}}
}

// geminiEvents lays out a streamGenerateContent stream: every chunk is a whole
// GenerateContentResponse holding only new parts. Thought summaries (when shown) and text
// stream one word per chunk, the first non-thought part carrying the thoughtSignature; the
// last text chunk carries finishReason and the full usageMetadata, earlier ones only the
// prompt count. Function calls arrive whole, all in one chunk, and the finishReason follows
// in a separate chunk with an empty text part, as Gemini 3 sends it. No
// terminator: the stream ends when the connection closes.
func geminiEvents(r geminiReply) []sseEvent {
	a := r.answer
	sc := newScript(a, geminiUnavailable)
	if r.showThoughts {
		for i, w := range a.reasoning {
			sc.addDelta("", r.response([]obj{r.thoughtPart(spaced(i, w))}, false))
		}
	}
	switch {
	case len(a.words) > 0:
		for i, w := range a.words {
			part := obj{{"text", spaced(i, w)}}
			if i == 0 {
				part = r.signed(part)
			}
			last := i == len(a.words)-1
			if last {
				sc.ending()
			}
			sc.addDelta("", r.response([]obj{part}, last))
		}
	case len(a.calls) > 0:
		sc.addDelta("", r.response(r.answerParts(), false))
		sc.ending()
		sc.add("", r.response([]obj{{{"text", ""}}}, true))
	default: // nothing to say (zero words, or the cap ran out while thinking)
		sc.ending()
		sc.add("", r.response([]obj{r.signed(obj{{"text", ""}})}, true))
	}
	return sc.events
}

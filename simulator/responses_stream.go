package simulator

import (
	"net/http"
	"strings"
)

// responsesStream lays out a Responses stream: every event has an "event:" line equal
// to its type and a sequence_number counting from 0. response.created and
// response.in_progress carry the response with no output and null usage; then per output item
// response.output_item.added, its content events and response.output_item.done; then the
// terminal response.completed or response.incomplete carrying the complete response. Text
// streams one word per response.output_text.delta, the reasoning summary one word per
// response.reasoning_summary_text.delta, function arguments in fragments of at most
// argumentFragmentBytes. A mid-stream failure is a terminal response.failed whose response
// holds the output as far as it got.
type responsesStream struct {
	r       responsesReply
	sc      *script
	seq     int
	done    []obj      // output items finished so far
	partial func() obj // the item being streamed, as it stands; nil between items
}

func responsesEvents(r responsesReply) []sseEvent {
	b := &responsesStream{r: r}
	b.sc = newScript(r.answer, b.failed)
	a := r.answer

	started := r.object("in_progress", []obj{}, nil, nil)
	b.emit("response.created", member{"response", started})
	b.emit("response.in_progress", member{"response", started})
	if a.reasoning != nil {
		b.reasoning(len(b.done))
	}
	if len(a.words) > 0 {
		b.message(len(b.done))
	}
	for i := range a.calls {
		b.call(len(b.done), i)
	}
	b.sc.ending()
	terminal := "response.completed"
	if r.status() == "incomplete" {
		terminal = "response.incomplete"
	}
	b.emit(terminal, member{"response", r.object(r.status(), r.output(), r.usage(), nil)})
	return b.sc.events
}

// event builds an event payload with the next sequence number.
func (b *responsesStream) event(typ string, fields []member) obj {
	ev := append(obj{{"type", typ}, {"sequence_number", b.seq}}, fields...)
	b.seq++
	return ev
}

func (b *responsesStream) emit(typ string, fields ...member) { b.sc.add(typ, b.event(typ, fields)) }

func (b *responsesStream) delta(typ string, fields ...member) {
	b.sc.addDelta(typ, b.event(typ, fields))
}

// finished records a completed output item.
func (b *responsesStream) finished(item obj) {
	b.done = append(b.done, item)
	b.partial = nil
	b.emit("response.output_item.done", member{"output_index", len(b.done) - 1}, member{"item", item})
}

func (b *responsesStream) reasoning(idx int) {
	r := b.r
	id := member{"item_id", r.reasoningID}
	at := member{"output_index", idx}
	b.emit("response.output_item.added", at, member{"item", r.reasoningItem("", false)})
	if r.opts.summary {
		var sofar strings.Builder
		b.partial = func() obj { return r.reasoningItem(sofar.String(), false) }
		si := member{"summary_index", 0}
		b.emit("response.reasoning_summary_part.added", id, at, si, member{"part", obj{{"type", "summary_text"}, {"text", ""}}})
		for i, w := range r.answer.reasoning {
			sofar.WriteString(spaced(i, w))
			b.delta("response.reasoning_summary_text.delta", id, at, si, member{"delta", spaced(i, w)})
		}
		text := r.answer.reasoningText()
		b.emit("response.reasoning_summary_text.done", id, at, si, member{"text", text})
		b.emit("response.reasoning_summary_part.done", id, at, si, member{"part", obj{{"type", "summary_text"}, {"text", text}}})
	}
	b.finished(r.reasoningItem(r.answer.reasoningText(), true))
}

func (b *responsesStream) message(idx int) {
	r := b.r
	id := member{"item_id", r.messageID}
	at := member{"output_index", idx}
	ci := member{"content_index", 0}
	var sofar strings.Builder
	b.partial = func() obj { return r.messageItem(sofar.String(), "incomplete") }
	b.emit("response.output_item.added", at, member{"item", obj{{"id", r.messageID}, {"type", "message"},
		{"status", "in_progress"}, {"content", []obj{}}, {"role", "assistant"}}})
	b.emit("response.content_part.added", id, at, ci, member{"part", outputText("")})
	for i, w := range r.answer.words {
		sofar.WriteString(spaced(i, w))
		b.delta("response.output_text.delta", id, at, ci, member{"delta", spaced(i, w)}, member{"logprobs", []any{}})
	}
	text := r.answer.text()
	b.emit("response.output_text.done", id, at, ci, member{"text", text}, member{"logprobs", []any{}})
	b.emit("response.content_part.done", id, at, ci, member{"part", outputText(text)})
	final := r.output()[idx]
	b.finished(final)
}

func (b *responsesStream) call(idx, i int) {
	r := b.r
	c := r.answer.calls[i]
	id := member{"item_id", r.itemIDs[i]}
	at := member{"output_index", idx}
	var sofar strings.Builder
	b.partial = func() obj { return r.callItem(i, sofar.String(), "incomplete") }
	b.emit("response.output_item.added", at, member{"item", r.callItem(i, "", "in_progress")})
	for _, piece := range splitUTF8(c.arguments, argumentFragmentBytes) {
		sofar.WriteString(piece)
		b.delta("response.function_call_arguments.delta", id, at, member{"delta", piece})
	}
	b.emit("response.function_call_arguments.done", id, at, member{"name", c.name}, member{"arguments", c.arguments})
	b.finished(r.callItem(i, c.arguments, "completed"))
}

// failed is the terminal event of a stream that fails after HTTP 200.
func (b *responsesStream) failed() []sseEvent {
	output := append([]obj{}, b.done...)
	if b.partial != nil {
		output = append(output, b.partial())
	}
	e := openAIFailure(http.StatusInternalServerError)
	resp := b.r.object("failed", output, nil, obj{{"code", "server_error"}, {"message", e.Message}})
	return []sseEvent{{name: "response.failed", data: b.event("response.failed", []member{{"response", resp}})}}
}

package responses

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

// The stream encoder as it was before its hot events were written by hand (encoding/json):
// the reference the differential test holds the hand-written one to.
func newRefStreamEncoder(out ir.Frames, req *ir.Request, model string) ir.StreamEncoder {
	return &refStreamEncoder{out: out, req: req, model: model, custom: customNames(req),
		calls: map[int]*refStreamCall{}}
}

type refItemKind uint8

const (
	refKindMessage refItemKind = iota + 1
	refKindReasoning
	refKindCall
	refKindCustom
)

// refStreamItem is one output item being streamed or already done.
type refStreamItem struct {
	kind      refItemKind
	id        string
	index     int // output_index
	status    string
	text      strings.Builder // message text, reasoning summary, call arguments
	summary   bool            // a reasoning summary part is open
	encrypted string
	callID    string
	name      string
}

// wire is the item as the output array shows it.
func (it *refStreamItem) wire() any {
	switch it.kind {
	case refKindMessage:
		content := []outputText{}
		if it.status != "in_progress" {
			content = append(content, newOutputText(it.text.String()))
		}
		return messageItem{ID: it.id, Type: "message", Status: it.status, Role: "assistant", Content: content}
	case refKindReasoning:
		r := reasoningItem{ID: it.id, Type: "reasoning", Summary: []wireText{}, EncryptedContent: it.encrypted}
		if it.summary && it.status != "in_progress" {
			r.Summary = append(r.Summary, wireText{"summary_text", it.text.String()})
		}
		return r
	case refKindCustom:
		input := ""
		if it.status != "in_progress" {
			input = customInput(it.text.String())
		}
		return customCallItem{ID: it.id, Type: "custom_tool_call", CallID: it.callID, Name: it.name, Input: input}
	}
	args := ""
	if it.status != "in_progress" {
		args = it.text.String()
	}
	return functionCallItem{ID: it.id, Type: "function_call", Status: it.status, CallID: it.callID,
		Name: it.name, Arguments: args}
}

// refStreamCall is a tool call by its IR index; item is nil until the call's turn comes.
type refStreamCall struct {
	callID, name string
	custom       bool
	buf          strings.Builder // arguments received before the item opened
	item         *refStreamItem
}

type refStreamEncoder struct {
	out    ir.Frames
	req    *ir.Request
	model  string
	custom map[string]bool

	seq      int
	resp     *wireResponse
	items    []*refStreamItem
	open     *refStreamItem
	calls    map[int]*refStreamCall
	queue    []int      // calls waiting for their item, in start order
	pending  []ir.Event // text, reasoning and signatures that came while a call was open
	usage    codec.Usage
	toolUsed bool
	ended    bool
	err      error
}

// emit writes one frame: its JSON keys in order type, sequence_number, then the pairs given.
func (e *refStreamEncoder) emit(typ string, kv ...any) {
	if e.err != nil {
		return
	}
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	t, _ := json.Marshal(typ)
	b.Write(t)
	b.WriteString(`,"sequence_number":`)
	b.WriteString(strconv.Itoa(e.seq))
	for i := 0; i+1 < len(kv); i += 2 {
		v, err := json.Marshal(kv[i+1])
		if err != nil {
			v = []byte("null")
		}
		b.WriteString(`,"` + kv[i].(string) + `":`)
		b.Write(v)
	}
	b.WriteByte('}')
	e.seq++
	e.err = e.out.Write(typ, b.Bytes())
}

func (e *refStreamEncoder) Encode(ev ir.Event) error {
	if e.ended {
		return e.err
	}
	if ev.Kind != ir.EvStart {
		e.start("")
	}
	switch ev.Kind {
	case ir.EvStart:
		e.addUsage(ev.Usage)
		e.start(ev.ID)
	case ir.EvText, ir.EvReasoning, ir.EvSignature:
		switch {
		case ev.Kind == ir.EvSignature && ev.Format != SignatureFormat:
			// A foreign signature cannot travel in a responses answer.
		case ev.Kind != ir.EvSignature && ev.Text == "":
		case e.callOpen():
			e.pending = append(e.pending, ev)
		default:
			e.content(ev)
		}
	case ir.EvToolStart:
		e.toolStart(ev)
	case ir.EvToolArgs:
		if ev.Text != "" {
			e.toolArgs(ev.Index, ev.Text)
		}
	case ir.EvUsage:
		e.addUsage(ev.Usage)
	case ir.EvFinish:
		e.addUsage(ev.Usage)
		e.finish(ev.Stop)
	case ir.EvError:
		msg := "the upstream failed"
		var ierr ir.Error
		if ev.Err != nil {
			ierr = *ev.Err
			msg = ev.Err.Message
		}
		e.fail(responseErrorCode(&ierr), msg)
	}
	return e.err
}

// Close ends a stream that never finished with response.failed.
func (e *refStreamEncoder) Close() error {
	if !e.ended {
		e.start("")
		e.fail("server_error", "the upstream stream was interrupted before the response completed")
	}
	return e.err
}

// addUsage keeps the largest count seen for each kind (later events may raise them).
// addUsage keeps the latest snapshot: every decoder reports all counts so far, and a later
// report may lower one field (gemini moves tokens from input to cache read at the end).
func (e *refStreamEncoder) addUsage(u codec.Usage) {
	if u.Known() {
		e.usage = u
	}
}

func (e *refStreamEncoder) start(id string) {
	if e.resp != nil {
		return
	}
	e.resp = newWireResponse(responseID(id), e.model, now().Unix(), e.req)
	e.emit("response.created", "response", e.resp)
	e.emit("response.in_progress", "response", e.resp)
}

func (e *refStreamEncoder) newItem(kind refItemKind, id string) *refStreamItem {
	it := &refStreamItem{kind: kind, id: id, index: len(e.items), status: "in_progress"}
	e.items = append(e.items, it)
	e.open = it
	e.emit("response.output_item.added", "output_index", it.index, "item", it.wire())
	return it
}

func (e *refStreamEncoder) content(ev ir.Event) {
	switch ev.Kind {
	case ir.EvText:
		e.text(ev.Text)
	case ir.EvReasoning:
		e.reasoning(ev.Text, ev.ID)
	case ir.EvSignature:
		e.signature(ev.Text, ev.ID)
	}
}

func (e *refStreamEncoder) callOpen() bool {
	return e.open != nil && (e.open.kind == refKindCall || e.open.kind == refKindCustom)
}

// next moves on once nothing is open: calls that were waiting first, then the content that
// waited for a call.
func (e *refStreamEncoder) next() {
	e.openQueued()
	if e.open == nil && len(e.pending) > 0 {
		pending := e.pending
		e.pending = nil
		for _, ev := range pending {
			e.content(ev)
		}
	}
}

func (e *refStreamEncoder) text(s string) {
	it := e.open
	if it == nil || it.kind != refKindMessage {
		e.closeOpen("completed")
		it = e.newItem(refKindMessage, newID("msg_"))
		e.emit("response.content_part.added", "item_id", it.id, "output_index", it.index,
			"content_index", 0, "part", newOutputText(""))
	}
	it.text.WriteString(s)
	e.emit("response.output_text.delta", "item_id", it.id, "output_index", it.index,
		"content_index", 0, "delta", s, "logprobs", []any{})
}

func (e *refStreamEncoder) reasoning(s, upstreamID string) {
	it := e.open
	if it == nil || it.kind != refKindReasoning || upstreamID != "" && upstreamID != it.id {
		e.closeOpen("completed")
		id := upstreamID
		if id == "" {
			id = newID("rs_")
		}
		it = e.newItem(refKindReasoning, id)
	}
	if !it.summary {
		it.summary = true
		e.emit("response.reasoning_summary_part.added", "item_id", it.id, "output_index", it.index,
			"summary_index", 0, "part", wireText{"summary_text", ""})
	}
	it.text.WriteString(s)
	e.emit("response.reasoning_summary_text.delta", "item_id", it.id, "output_index", it.index,
		"summary_index", 0, "delta", s)
}

// signature attaches encrypted content to the reasoning item it belongs to: the open one, or a
// reasoning item of its own (a reasoning step that streamed no summary).
func (e *refStreamEncoder) signature(encrypted, upstreamID string) {
	it := e.open
	if it == nil || it.kind != refKindReasoning || upstreamID != "" && upstreamID != it.id {
		e.closeOpen("completed")
		id := upstreamID
		if id == "" {
			id = newID("rs_")
		}
		it = e.newItem(refKindReasoning, id)
	}
	it.encrypted += encrypted
	e.closeOpen("completed")
}

func (e *refStreamEncoder) toolStart(ev ir.Event) {
	if _, dup := e.calls[ev.Index]; dup {
		return
	}
	e.toolUsed = true
	id := ev.ID
	if ev.Signature != "" && (ev.Format == "" || ev.Format == "gemini") {
		id = ir.JoinCallID(id, ev.Signature)
	}
	e.calls[ev.Index] = &refStreamCall{callID: id, name: ev.Name, custom: e.custom[ev.Name]}
	e.queue = append(e.queue, ev.Index)
	if !e.callOpen() {
		e.closeOpen("completed")
		e.openQueued()
	}
}

func (e *refStreamEncoder) toolArgs(index int, frag string) {
	c, ok := e.calls[index]
	if !ok {
		return // arguments of a call that never started cannot be placed
	}
	switch {
	case c.item == nil:
		c.buf.WriteString(frag)
		if !e.callOpen() { // content opened after this call started: the call's turn now
			e.closeOpen("completed")
			e.next()
		}
	case c.item != e.open:
		// After its arguments formed complete JSON: nothing a client could still use.
	default:
		c.item.text.WriteString(frag)
		if c.item.kind == refKindCall {
			e.emit("response.function_call_arguments.delta", "item_id", c.item.id,
				"output_index", c.item.index, "delta", frag)
		}
		if strings.Contains(frag, "}") && refCompleteJSON(c.item.text.String()) {
			e.closeOpen("completed")
			e.next()
		}
	}
}

func refCompleteJSON(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") && json.Valid([]byte(s))
}

// openQueued opens waiting calls in order while nothing else is open, sending what each has
// buffered; a call whose buffered arguments are already complete closes at once.
func (e *refStreamEncoder) openQueued() {
	for e.open == nil && len(e.queue) > 0 {
		c := e.calls[e.queue[0]]
		e.queue = e.queue[1:]
		kind, prefix := refKindCall, "fc_"
		if c.custom {
			kind, prefix = refKindCustom, "ctc_"
		}
		it := &refStreamItem{kind: kind, id: newID(prefix), callID: c.callID, name: c.name}
		it.index, it.status = len(e.items), "in_progress"
		e.items = append(e.items, it)
		e.open, c.item = it, it
		e.emit("response.output_item.added", "output_index", it.index, "item", it.wire())
		if c.buf.Len() > 0 {
			frag := c.buf.String()
			it.text.WriteString(frag)
			if kind == refKindCall {
				e.emit("response.function_call_arguments.delta", "item_id", it.id,
					"output_index", it.index, "delta", frag)
			}
			if refCompleteJSON(frag) {
				e.closeOpen("completed")
			}
		}
	}
}

// closeOpen sends the done events of the open item.
func (e *refStreamEncoder) closeOpen(status string) {
	it := e.open
	if it == nil {
		return
	}
	e.open = nil
	it.status = status
	text := it.text.String()
	switch it.kind {
	case refKindMessage:
		e.emit("response.output_text.done", "item_id", it.id, "output_index", it.index,
			"content_index", 0, "text", text, "logprobs", []any{})
		e.emit("response.content_part.done", "item_id", it.id, "output_index", it.index,
			"content_index", 0, "part", newOutputText(text))
	case refKindReasoning:
		if it.summary {
			e.emit("response.reasoning_summary_text.done", "item_id", it.id, "output_index", it.index,
				"summary_index", 0, "text", text)
			e.emit("response.reasoning_summary_part.done", "item_id", it.id, "output_index", it.index,
				"summary_index", 0, "part", wireText{"summary_text", text})
		}
	case refKindCall:
		if strings.TrimSpace(text) == "" {
			it.text.Reset()
			it.text.WriteString("{}")
			text = "{}"
		} else if !refCompleteJSON(text) {
			it.status = "incomplete" // cut off mid-arguments
		}
		e.emit("response.function_call_arguments.done", "item_id", it.id, "output_index", it.index,
			"name", it.name, "arguments", text)
	case refKindCustom:
		input := customInput(text)
		if input != "" {
			e.emit("response.custom_tool_call_input.delta", "item_id", it.id, "output_index", it.index,
				"delta", input)
		}
		e.emit("response.custom_tool_call_input.done", "item_id", it.id, "output_index", it.index,
			"input", input)
	}
	e.emit("response.output_item.done", "output_index", it.index, "item", it.wire())
}

func (e *refStreamEncoder) finish(stop ir.StopReason) {
	e.resp.finish(stop, e.toolUsed, e.usage)
	itemStatus := "completed"
	if e.resp.Status == "incomplete" {
		itemStatus = "incomplete"
	}
	e.closeOpen(itemStatus)
	for e.next(); e.open != nil; e.next() {
		e.closeOpen(itemStatus)
	}
	e.resp.Output = e.output()
	typ := "response.completed"
	if e.resp.Status == "incomplete" {
		typ = "response.incomplete"
	}
	e.emit(typ, "response", e.resp)
	e.ended = true
}

// fail ends the stream with response.failed. The item left open, and what waited for it, is
// closed first (its done events, status incomplete), so the client holds no open item.
func (e *refStreamEncoder) fail(code, message string) {
	e.closeOpen("incomplete")
	for e.next(); e.open != nil; e.next() {
		e.closeOpen("incomplete")
	}
	e.resp.Status = "failed"
	e.resp.Error = &responseErrorBody{Code: code, Message: message}
	e.resp.Output = e.output()
	if e.usage.Known() {
		e.resp.Usage = usageOf(e.usage)
	}
	e.emit("response.failed", "response", e.resp)
	e.ended = true
}

func (e *refStreamEncoder) output() []any {
	out := make([]any, len(e.items))
	for i, it := range e.items {
		out[i] = it.wire()
	}
	return out
}

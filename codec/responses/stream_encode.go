package responses

import (
	"strings"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// NewStreamEncoder renders events as Responses SSE: one output item open
// at a time, every frame named by its type, sequence_number counting from 0, and a terminal
// event carrying the whole response. Calls are never interleaved: fragments of a call other
// than the open one are buffered, and a call closes when its arguments form complete JSON (or
// at the end); text or reasoning arriving while a call is open waits for it to close. Custom
// tool calls are sent whole when they close.
func (format) NewStreamEncoder(out ir.Frames, req *ir.Request, model string) ir.StreamEncoder {
	e := &streamEncoder{out: out, req: req, model: model, custom: customNames(req)}
	e.buf = e.bufArr[:0]
	return e
}

type itemKind uint8

const (
	kindMessage itemKind = iota + 1
	kindReasoning
	kindCall
	kindCustom
)

// streamItem is one output item being streamed or already done.
type streamItem struct {
	kind      itemKind
	id        string
	index     int // output_index
	status    string
	text      strings.Builder // message text, reasoning summary, call arguments
	summary   bool            // a reasoning summary part is open
	encrypted string
	callID    string
	name      string
}

// streamCall is a tool call by its IR index; item is nil until the call's turn comes.
type streamCall struct {
	callID, name string
	custom       bool
	buf          strings.Builder // arguments received before the item opened
	item         *streamItem     // &own once opened
	own          streamItem      // allocated with the call
}

type streamEncoder struct {
	out    ir.Frames
	req    *ir.Request
	model  string
	custom map[string]bool

	seq      int
	resp     *wireResponse
	items    []*streamItem
	open     *streamItem
	calls    map[int]*streamCall
	queue    []int      // calls waiting for their item, in start order
	pending  []ir.Event // text, reasoning and signatures that came while a call was open
	usage    codec.Usage
	toolUsed bool
	ended    bool
	err      error
	buf      []byte     // the frame being written, reused
	bufArr   [1536]byte // buf's first array, allocated with the encoder: a whole response fits
	echo     []byte     // the response object's echo of the request (echoJSON)
	metadata []byte
	echoOK   bool
}

// send writes a frame the buffer holds and counts it. Every frame is appended by hand to the
// reused buffer (stream_write.go), starting with head.
func (e *streamEncoder) send(typ string, b []byte) {
	e.buf = b
	e.seq++
	e.err = e.out.Write(typ, b)
}

// responseEvent writes {type, sequence_number, response} with items as the output.
func (e *streamEncoder) responseEvent(typ string, items []*streamItem) {
	if e.err != nil {
		return
	}
	b := e.appendResponse(append(e.head(typ), `,"response":`...), items)
	e.send(typ, append(b, '}'))
}

// itemEvent writes {type, sequence_number, output_index, item}.
func (e *streamEncoder) itemEvent(typ string, it *streamItem) {
	if e.err != nil {
		return
	}
	b := jsonw.Int(append(e.head(typ), `,"output_index":`...), int64(it.index))
	b = it.appendWire(append(b, `,"item":`...))
	e.send(typ, append(b, '}'))
}

// about begins a frame about item it: {type, sequence_number, item_id, output_index
func (e *streamEncoder) about(typ string, it *streamItem) []byte {
	b := jsonw.String(append(e.head(typ), `,"item_id":`...), it.id)
	return jsonw.Int(append(b, `,"output_index":`...), int64(it.index))
}

// partEvent writes {…about, indexKey: 0, part} for a message's output text or a reasoning
// summary (summary set) holding text.
func (e *streamEncoder) partEvent(typ string, it *streamItem, summary bool, text string) {
	if e.err != nil {
		return
	}
	b := e.about(typ, it)
	if summary {
		b = appendSummaryText(append(b, `,"summary_index":0,"part":`...), text)
	} else {
		b = appendOutputText(append(b, `,"content_index":0,"part":`...), text)
	}
	e.send(typ, append(b, '}'))
}

// textEvent writes {…about, [indexKey: 0,] [name,] key: text [, logprobs: []]}: a delta or
// done event of an item's text.
func (e *streamEncoder) textEvent(typ string, it *streamItem, indexKey, name, key, text string, logprobs bool) {
	if e.err != nil {
		return
	}
	b := e.about(typ, it)
	if indexKey != "" {
		b = append(jsonw.Key(append(b, ','), indexKey), '0')
	}
	if name != "" {
		b = jsonw.String(append(b, `,"name":`...), name)
	}
	b = jsonw.String(jsonw.Key(append(b, ','), key), text)
	if logprobs {
		b = append(b, `,"logprobs":[]`...)
	}
	e.send(typ, append(b, '}'))
}

// head begins a frame in the reused buffer: {"type":typ,"sequence_number":n (typ is one of
// this file's constant event types, which need no escaping).
func (e *streamEncoder) head(typ string) []byte {
	b := append(e.buf[:0], `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","sequence_number":`...)
	return jsonw.Int(b, int64(e.seq))
}

// delta writes the frame nearly every chunk becomes, a delta of an item's text:
// {type, sequence_number, item_id, output_index, [partKey: 0,] delta [, logprobs: []]}.
func (e *streamEncoder) delta(typ string, it *streamItem, partKey, delta string, logprobs bool) {
	e.textEvent(typ, it, partKey, "", "delta", delta, logprobs)
}

func (e *streamEncoder) Encode(ev ir.Event) error {
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
func (e *streamEncoder) Close() error {
	if !e.ended {
		e.start("")
		e.fail("server_error", "the upstream stream was interrupted before the response completed")
	}
	return e.err
}

// addUsage keeps the largest count seen for each kind (later events may raise them).
// addUsage keeps the latest snapshot: every decoder reports all counts so far, and a later
// report may lower one field (gemini moves tokens from input to cache read at the end).
func (e *streamEncoder) addUsage(u codec.Usage) {
	if u.Known() {
		e.usage = u
	}
}

func (e *streamEncoder) start(id string) {
	if e.resp != nil {
		return
	}
	e.resp = newWireResponse(responseID(id), e.model, now().Unix(), e.req)
	e.echo, e.metadata, e.echoOK = e.resp.echoJSON()
	e.responseEvent("response.created", nil)
	e.responseEvent("response.in_progress", nil)
}

func (e *streamEncoder) newItem(kind itemKind, id string) *streamItem {
	it := &streamItem{kind: kind, id: id, index: len(e.items), status: "in_progress"}
	e.items = append(e.items, it)
	e.open = it
	e.itemEvent("response.output_item.added", it)
	return it
}

func (e *streamEncoder) content(ev ir.Event) {
	switch ev.Kind {
	case ir.EvText:
		e.text(ev.Text)
	case ir.EvReasoning:
		e.reasoning(ev.Text, ev.ID)
	case ir.EvSignature:
		e.signature(ev.Text, ev.ID)
	}
}

func (e *streamEncoder) callOpen() bool {
	return e.open != nil && (e.open.kind == kindCall || e.open.kind == kindCustom)
}

// next moves on once nothing is open: calls that were waiting first, then the content that
// waited for a call.
func (e *streamEncoder) next() {
	e.openQueued()
	if e.open == nil && len(e.pending) > 0 {
		pending := e.pending
		e.pending = nil
		for _, ev := range pending {
			e.content(ev)
		}
	}
}

func (e *streamEncoder) text(s string) {
	it := e.open
	if it == nil || it.kind != kindMessage {
		e.closeOpen("completed")
		it = e.newItem(kindMessage, newID("msg_"))
		e.partEvent("response.content_part.added", it, false, "")
	}
	it.text.WriteString(s)
	e.delta("response.output_text.delta", it, "content_index", s, true)
}

func (e *streamEncoder) reasoning(s, upstreamID string) {
	it := e.open
	if it == nil || it.kind != kindReasoning || upstreamID != "" && upstreamID != it.id {
		e.closeOpen("completed")
		id := upstreamID
		if id == "" {
			id = newID("rs_")
		}
		it = e.newItem(kindReasoning, id)
	}
	if !it.summary {
		it.summary = true
		e.partEvent("response.reasoning_summary_part.added", it, true, "")
	}
	it.text.WriteString(s)
	e.delta("response.reasoning_summary_text.delta", it, "summary_index", s, false)
}

// signature attaches encrypted content to the reasoning item it belongs to: the open one, or a
// reasoning item of its own (a reasoning step that streamed no summary).
func (e *streamEncoder) signature(encrypted, upstreamID string) {
	it := e.open
	if it == nil || it.kind != kindReasoning || upstreamID != "" && upstreamID != it.id {
		e.closeOpen("completed")
		id := upstreamID
		if id == "" {
			id = newID("rs_")
		}
		it = e.newItem(kindReasoning, id)
	}
	it.encrypted += encrypted
	e.closeOpen("completed")
}

func (e *streamEncoder) toolStart(ev ir.Event) {
	if _, dup := e.calls[ev.Index]; dup {
		return
	}
	e.toolUsed = true
	id := ev.ID
	if ev.Signature != "" && (ev.Format == "" || ev.Format == "gemini") {
		id = ir.JoinCallID(id, ev.Signature)
	}
	if e.calls == nil {
		e.calls = map[int]*streamCall{}
	}
	e.calls[ev.Index] = &streamCall{callID: id, name: ev.Name, custom: e.custom[ev.Name]}
	e.queue = append(e.queue, ev.Index)
	if !e.callOpen() {
		e.closeOpen("completed")
		e.openQueued()
	}
}

func (e *streamEncoder) toolArgs(index int, frag string) {
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
		if c.item.kind == kindCall {
			e.delta("response.function_call_arguments.delta", c.item, "", frag, false)
		}
		if strings.Contains(frag, "}") && completeJSON(c.item.text.String()) {
			e.closeOpen("completed")
			e.next()
		}
	}
}

func completeJSON(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") && jsonscan.Valid(bytesOf(s))
}

// openQueued opens waiting calls in order while nothing else is open, sending what each has
// buffered; a call whose buffered arguments are already complete closes at once.
func (e *streamEncoder) openQueued() {
	for e.open == nil && len(e.queue) > 0 {
		c := e.calls[e.queue[0]]
		e.queue = e.queue[1:]
		kind, prefix := kindCall, "fc_"
		if c.custom {
			kind, prefix = kindCustom, "ctc_"
		}
		it := &c.own
		*it = streamItem{kind: kind, id: newID(prefix), callID: c.callID, name: c.name}
		it.index, it.status = len(e.items), "in_progress"
		e.items = append(e.items, it)
		e.open, c.item = it, it
		e.itemEvent("response.output_item.added", it)
		if c.buf.Len() > 0 {
			frag := c.buf.String()
			it.text.WriteString(frag)
			if kind == kindCall {
				e.delta("response.function_call_arguments.delta", it, "", frag, false)
			}
			if completeJSON(frag) {
				e.closeOpen("completed")
			}
		}
	}
}

// closeOpen sends the done events of the open item.
func (e *streamEncoder) closeOpen(status string) {
	it := e.open
	if it == nil {
		return
	}
	e.open = nil
	it.status = status
	text := it.text.String()
	switch it.kind {
	case kindMessage:
		e.textEvent("response.output_text.done", it, "content_index", "", "text", text, true)
		e.partEvent("response.content_part.done", it, false, text)
	case kindReasoning:
		if it.summary {
			e.textEvent("response.reasoning_summary_text.done", it, "summary_index", "", "text", text, false)
			e.partEvent("response.reasoning_summary_part.done", it, true, text)
		}
	case kindCall:
		if strings.TrimSpace(text) == "" {
			it.text.Reset()
			it.text.WriteString("{}")
			text = "{}"
		} else if !completeJSON(text) {
			it.status = "incomplete" // cut off mid-arguments
		}
		e.textEvent("response.function_call_arguments.done", it, "", it.name, "arguments", text, false)
	case kindCustom:
		input := customInput(text)
		if input != "" {
			e.delta("response.custom_tool_call_input.delta", it, "", input, false)
		}
		e.textEvent("response.custom_tool_call_input.done", it, "", "", "input", input, false)
	}
	e.itemEvent("response.output_item.done", it)
}

func (e *streamEncoder) finish(stop ir.StopReason) {
	e.resp.finish(stop, e.toolUsed, e.usage)
	itemStatus := "completed"
	if e.resp.Status == "incomplete" {
		itemStatus = "incomplete"
	}
	e.closeOpen(itemStatus)
	for e.next(); e.open != nil; e.next() {
		e.closeOpen(itemStatus)
	}
	typ := "response.completed"
	if e.resp.Status == "incomplete" {
		typ = "response.incomplete"
	}
	e.responseEvent(typ, e.items)
	e.ended = true
}

// fail ends the stream with response.failed. The item left open, and what waited for it, is
// closed first (its done events, status incomplete), so the client holds no open item.
func (e *streamEncoder) fail(code, message string) {
	e.closeOpen("incomplete")
	for e.next(); e.open != nil; e.next() {
		e.closeOpen("incomplete")
	}
	e.resp.Status = "failed"
	e.resp.Error = &responseErrorBody{Code: code, Message: message}
	if e.usage.Known() {
		e.resp.Usage = usageOf(e.usage)
	}
	e.responseEvent("response.failed", e.items)
	e.ended = true
}

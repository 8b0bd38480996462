package messages

import (
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// NewStreamEncoder renders IR events as the messages stream: message_start and a ping, content
// blocks one at a time with indices 0, 1, 2…, then message_delta (stop reason, usage) and
// message_stop; or an error event.
//
// Blocks never overlap and tool blocks never interleave. While a tool block is open and
// its arguments are not yet a complete JSON value, every other event (another call's
// fragments, text) waits in a queue, replayed in arrival order once the block closes: when
// its arguments complete (brace and bracket depth back to 0, outside strings) or at the
// finish. A call that streamed no argument text gets one input_json_delta of "{}", which
// every SDK accumulates to the input {}.
func (format) NewStreamEncoder(out ir.Frames, req *ir.Request, model string) ir.StreamEncoder {
	e := &streamEncoder{out: out, model: model}
	e.buf = e.bufArr[:0]
	return e
}

type blockKind uint8

const (
	noBlock blockKind = iota
	textBlockKind
	thinkingBlockKind
	toolBlockKind
)

type streamEncoder struct {
	out     ir.Frames
	model   string
	started bool
	ended   bool // message_stop or error written
	err     error

	next     int // index of the next block
	open     blockKind
	openIdx  int
	openCall int // the call of an open tool block

	calls   map[int]*callState
	queue   []ir.Event // events held back while a tool block is open
	sawTool bool
	usage   codec.Usage
	buf     []byte    // the frame being written, reused
	bufArr  [512]byte // buf's first array, allocated with the encoder
}

type callState struct {
	id, name string
	opened   bool
	closed   bool
	sent     bool // some argument text was written
	scan     jsonScan
}

// jsonScan tracks whether streamed text has formed one complete JSON object or array.
type jsonScan struct {
	depth    int
	inString bool
	escaped  bool
	began    bool
	complete bool
}

func (s *jsonScan) feed(text string) {
	for i := 0; i < len(text) && !s.complete; i++ {
		c := text[i]
		if s.inString {
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
			}
			continue
		}
		switch c {
		case '"':
			s.inString = true
		case '{', '[':
			s.depth++
			s.began = true
		case '}', ']':
			s.depth--
			if s.began && s.depth <= 0 {
				s.complete = true
			}
		}
	}
}

func (e *streamEncoder) Encode(ev ir.Event) error {
	if e.ended || e.err != nil {
		return e.err
	}
	switch ev.Kind {
	case ir.EvStart:
		e.addUsage(ev.Usage)
		e.start(ev.ID)
	case ir.EvUsage:
		e.addUsage(ev.Usage)
	case ir.EvFinish:
		e.start("")
		e.addUsage(ev.Usage)
		e.finish(ev)
	case ir.EvError:
		e.fail(ev.Err)
	default:
		e.start("")
		e.content(ev)
	}
	return e.err
}

// Close ends a stream that saw neither finish nor error with the error event: the client
// must not take a cut answer for a whole one.
func (e *streamEncoder) Close() error {
	if !e.ended && e.err == nil {
		e.failWith(interruptedFrame)
	}
	return e.err
}

// interruptedFrame is the error Close writes, the same for every stream.
var interruptedFrame = errorBody(&ir.Error{Status: 502, Kind: ir.ErrServer, Code: "stream_interrupted",
	Message: "the upstream stream ended before the answer was complete"})

// addUsage keeps the latest snapshot: every decoder reports all counts so far, and a later
// report may lower one field (gemini moves tokens from input to cache read at the end).
func (e *streamEncoder) addUsage(u codec.Usage) {
	if u.Known() {
		e.usage = u
	}
}

func (e *streamEncoder) start(id string) {
	if e.started {
		return
	}
	e.started = true
	b := jsonw.String(append(e.buf[:0], `{"type":"message_start","message":{"id":`...), messageID(id))
	b = jsonw.String(append(b, `,"type":"message","role":"assistant","model":`...), e.model)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
	b = appendUsage(b, usageOut(codec.Usage{Input: e.usage.Input, CacheRead: e.usage.CacheRead, CacheWrite: e.usage.CacheWrite}))
	e.send("message_start", append(b, "}}"...))
	e.send("ping", append(e.buf[:0], `{"type":"ping"}`...))
}

func (e *streamEncoder) content(ev ir.Event) {
	if e.open == toolBlockKind && (ev.Kind != ir.EvToolArgs || ev.Index != e.openCall) {
		e.queue = append(e.queue, ev)
		return
	}
	switch ev.Kind {
	case ir.EvText:
		if ev.Text != "" {
			e.ensure(textBlockKind)
			e.delta("text_delta", "text", ev.Text)
		}
	case ir.EvReasoning:
		if ev.Text != "" {
			e.ensure(thinkingBlockKind)
			e.delta("thinking_delta", "thinking", ev.Text)
		}
	case ir.EvSignature:
		// Only signatures this format issued are valid for a messages client; others
		// leave the thinking display-only.
		if ev.Text != "" && ev.Format == SignatureFormat {
			e.ensure(thinkingBlockKind)
			e.delta("signature_delta", "signature", ev.Text)
		}
	case ir.EvRedacted:
		if ev.Text != "" && (ev.Format == "" || ev.Format == SignatureFormat) {
			e.closeBlock()
			b := e.blockStart(e.next, "redacted_thinking")
			b = jsonw.String(append(b, `,"data":`...), ev.Text)
			e.send("content_block_start", append(b, "}}"...))
			e.blockStop(e.next)
			e.next++
		}
	case ir.EvToolStart:
		c := e.call(ev.Index, ev.ID, ev.Signature, ev.Format)
		if c.name == "" {
			c.name = ev.Name
		}
		if !c.opened {
			e.openTool(ev.Index, c)
		}
	case ir.EvToolArgs:
		if ev.Text == "" {
			return
		}
		c := e.call(ev.Index, "", "", "")
		if c.closed {
			return // after a complete value: nothing a client could parse
		}
		if !c.opened {
			e.openTool(ev.Index, c)
		}
		e.delta("input_json_delta", "partial_json", ev.Text)
		c.sent = true
		c.scan.feed(ev.Text)
		if c.scan.complete {
			e.closeBlock()
			e.drain()
		}
	}
}

// call returns the state of tool call i, creating it (with a minted id when the upstream
// gave none) the first time.
func (e *streamEncoder) call(i int, id, sig, sigFormat string) *callState {
	if c, ok := e.calls[i]; ok {
		return c
	}
	if id == "" {
		id = codec.RandomID("toolu_")
	}
	if sig != "" && sigFormat != SignatureFormat {
		id = ir.JoinCallID(id, sig)
	}
	c := &callState{id: id}
	if e.calls == nil {
		e.calls = map[int]*callState{}
	}
	e.calls[i] = c
	e.sawTool = true
	return c
}

func (e *streamEncoder) openTool(i int, c *callState) {
	e.closeBlock()
	c.opened = true
	e.open, e.openIdx, e.openCall = toolBlockKind, e.next, i
	e.next++
	b := jsonw.String(append(e.blockStart(e.openIdx, "tool_use"), `,"id":`...), c.id)
	b = jsonw.String(append(b, `,"name":`...), c.name)
	e.send("content_block_start", append(b, `,"input":{}}}`...))
}

// ensure opens a text or thinking block unless one of that kind is open.
func (e *streamEncoder) ensure(k blockKind) {
	if e.open == k {
		return
	}
	e.closeBlock()
	e.open, e.openIdx = k, e.next
	e.next++
	if k == thinkingBlockKind {
		e.send("content_block_start", append(e.blockStart(e.openIdx, "thinking"), `,"thinking":"","signature":""}}`...))
		return
	}
	e.send("content_block_start", append(e.blockStart(e.openIdx, "text"), `,"text":""}}`...))
}

// The block events, appended by hand to one reused buffer (ir.Frames copies what it keeps):
// they are nearly every frame of a stream.

// send writes one frame of the buffer b (e.buf grown).
func (e *streamEncoder) send(name string, b []byte) {
	e.buf = b
	if e.err == nil {
		e.err = e.out.Write(name, b)
	}
}

// blockStart begins a content_block_start of a block of the given type, left open after the
// type for the block's other members.
func (e *streamEncoder) blockStart(index int, typ string) []byte {
	b := append(e.buf[:0], `{"type":"content_block_start","index":`...)
	b = jsonw.Int(b, int64(index))
	b = append(b, `,"content_block":{"type":"`...)
	b = append(b, typ...)
	return append(b, '"')
}

// delta writes a content_block_delta of the open block: {"type":typ,key:text}.
func (e *streamEncoder) delta(typ, key, text string) {
	b := append(e.buf[:0], `{"type":"content_block_delta","index":`...)
	b = jsonw.Int(b, int64(e.openIdx))
	b = append(b, `,"delta":{"type":"`...)
	b = append(b, typ...)
	b = append(b, `",`...)
	b = jsonw.String(jsonw.Key(b, key), text)
	e.send("content_block_delta", append(b, "}}"...))
}

func (e *streamEncoder) blockStop(index int) {
	b := append(e.buf[:0], `{"type":"content_block_stop","index":`...)
	b = jsonw.Int(b, int64(index))
	e.send("content_block_stop", append(b, '}'))
}

func (e *streamEncoder) closeBlock() {
	if e.open == noBlock {
		return
	}
	if e.open == toolBlockKind {
		c := e.calls[e.openCall]
		if !c.sent {
			e.delta("input_json_delta", "partial_json", "{}")
		}
		c.closed = true
	}
	e.blockStop(e.openIdx)
	e.open = noBlock
}

// drain replays held-back events in arrival order; a tool block that opens and stays
// incomplete holds the rest back again.
func (e *streamEncoder) drain() {
	for len(e.queue) > 0 && e.open != toolBlockKind {
		q := e.queue
		e.queue = nil
		for _, ev := range q {
			e.content(ev)
		}
	}
}

// closeAll closes the open block and replays and closes everything that waited for it.
func (e *streamEncoder) closeAll() {
	for {
		if e.open == toolBlockKind {
			e.closeBlock() // incomplete arguments: the end closes them as they are
		}
		if len(e.queue) == 0 {
			break
		}
		e.drain()
	}
	e.closeBlock()
}

func (e *streamEncoder) finish(ev ir.Event) {
	e.closeAll()
	stop := withTools(ev.Stop, e.sawTool)
	b := jsonw.String(append(e.buf[:0], `{"type":"message_delta","delta":{"stop_reason":`...), stopReason(stop))
	b = append(b, `,"stop_sequence":`...)
	if seq := stopSequence(stop, ev.StopSequence); seq != nil {
		b = jsonw.String(b, *seq)
	} else {
		b = append(b, "null"...)
	}
	b = appendUsage(append(b, `},"usage":`...), usageOut(e.usage))
	e.send("message_delta", append(b, '}'))
	e.send("message_stop", append(e.buf[:0], `{"type":"message_stop"}`...))
	e.ended = true
}

// fail closes what is open, so the client holds well-formed blocks (a thinking block that
// was streaming, a tool call cut off), then writes the in-band error; nothing follows it.
func (e *streamEncoder) fail(err *ir.Error) {
	if err == nil {
		err = &ir.Error{Kind: ir.ErrServer, Message: "the upstream failed"}
	}
	e.failWith(errorBody(err))
}

// failWith closes what is open and writes the error event frame.
func (e *streamEncoder) failWith(frame []byte) {
	e.closeAll()
	if e.err == nil {
		e.err = e.out.Write("error", frame)
	}
	e.ended = true
}

// appendUsage writes outUsage as encoding/json writes it.
func appendUsage(b []byte, u outUsage) []byte {
	b = jsonw.Int(append(b, `{"input_tokens":`...), u.InputTokens)
	b = jsonw.Int(append(b, `,"cache_creation_input_tokens":`...), u.CacheCreationInputTokens)
	b = jsonw.Int(append(b, `,"cache_read_input_tokens":`...), u.CacheReadInputTokens)
	b = jsonw.Int(append(b, `,"output_tokens":`...), u.OutputTokens)
	return append(b, '}')
}

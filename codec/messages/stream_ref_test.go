package messages

import (
	"encoding/json"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

// The stream encoder as it was before it wrote its JSON by hand (encoding/json over structs):
// the reference the differential test holds the hand-written one to.
func newRefStreamEncoder(out ir.Frames, req *ir.Request, model string) ir.StreamEncoder {
	return &refStreamEncoder{out: out, model: model, calls: map[int]*refCallState{}}
}

type refBlockKind uint8

const (
	refNoBlock refBlockKind = iota
	refTextBlockKind
	refThinkingBlockKind
	refToolBlockKind
)

type refStreamEncoder struct {
	out     ir.Frames
	model   string
	started bool
	ended   bool // message_stop or error written
	err     error

	next     int // index of the next block
	open     refBlockKind
	openIdx  int
	openCall int // the call of an open tool block

	calls   map[int]*refCallState
	queue   []ir.Event // events held back while a tool block is open
	sawTool bool
	usage   codec.Usage
}

type refCallState struct {
	id, name string
	opened   bool
	closed   bool
	sent     bool // some argument text was written
	scan     refJsonScan
}

// refJsonScan tracks whether streamed text has formed one complete JSON object or array.
type refJsonScan struct {
	depth    int
	inString bool
	escaped  bool
	began    bool
	complete bool
}

func (s *refJsonScan) feed(text string) {
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

// Wire shapes of the stream's events.
type (
	refEvMessageStart struct {
		Type    string            `json:"type"`
		Message refEvStartMessage `json:"message"`
	}
	refEvStartMessage struct {
		ID           string     `json:"id"`
		Type         string     `json:"type"`
		Role         string     `json:"role"`
		Model        string     `json:"model"`
		Content      []outBlock `json:"content"`
		StopReason   *string    `json:"stop_reason"`
		StopSequence *string    `json:"stop_sequence"`
		Usage        outUsage   `json:"usage"`
	}
	refEvBlockStart struct {
		Type         string `json:"type"`
		Index        int    `json:"index"`
		ContentBlock any    `json:"content_block"`
	}
	refEvBlockDelta struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
		Delta any    `json:"delta"`
	}
	refEvBlockStop struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	}
	refEvMessageDelta struct {
		Type  string `json:"type"`
		Delta struct {
			StopReason   string  `json:"stop_reason"`
			StopSequence *string `json:"stop_sequence"`
		} `json:"delta"`
		Usage outUsage `json:"usage"`
	}
	refTextStart struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	refThinkingStart struct {
		Type      string `json:"type"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
	}
	refRedactedStart struct {
		Type string `json:"type"`
		Data string `json:"data"`
	}
	refToolStart struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	refTextDelta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	refThinkingDelta struct {
		Type     string `json:"type"`
		Thinking string `json:"thinking"`
	}
	refSignatureDelta struct {
		Type      string `json:"type"`
		Signature string `json:"signature"`
	}
	refJsonDelta struct {
		Type        string `json:"type"`
		PartialJSON string `json:"partial_json"`
	}
)

func (e *refStreamEncoder) write(name string, v any) {
	if e.err != nil {
		return
	}
	e.err = e.out.Write(name, marshal(v))
}

func (e *refStreamEncoder) Encode(ev ir.Event) error {
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
func (e *refStreamEncoder) Close() error {
	if !e.ended && e.err == nil {
		e.fail(&ir.Error{Status: 502, Kind: ir.ErrServer, Code: "stream_interrupted",
			Message: "the upstream stream ended before the answer was complete"})
	}
	return e.err
}

// addUsage keeps the latest snapshot: every decoder reports all counts so far, and a later
// report may lower one field (gemini moves tokens from input to cache read at the end).
func (e *refStreamEncoder) addUsage(u codec.Usage) {
	if u.Known() {
		e.usage = u
	}
}

func (e *refStreamEncoder) start(id string) {
	if e.started {
		return
	}
	e.started = true
	u := usageOut(codec.Usage{Input: e.usage.Input, CacheRead: e.usage.CacheRead, CacheWrite: e.usage.CacheWrite})
	e.write("message_start", refEvMessageStart{Type: "message_start", Message: refEvStartMessage{
		ID: messageID(id), Type: "message", Role: "assistant", Model: e.model, Content: []outBlock{}, Usage: u}})
	e.write("ping", struct {
		Type string `json:"type"`
	}{"ping"})
}

func (e *refStreamEncoder) content(ev ir.Event) {
	if e.open == refToolBlockKind && (ev.Kind != ir.EvToolArgs || ev.Index != e.openCall) {
		e.queue = append(e.queue, ev)
		return
	}
	switch ev.Kind {
	case ir.EvText:
		if ev.Text != "" {
			e.ensure(refTextBlockKind)
			e.delta(refTextDelta{Type: "text_delta", Text: ev.Text})
		}
	case ir.EvReasoning:
		if ev.Text != "" {
			e.ensure(refThinkingBlockKind)
			e.delta(refThinkingDelta{Type: "thinking_delta", Thinking: ev.Text})
		}
	case ir.EvSignature:
		// Only signatures this format issued are valid for a messages client; others
		// leave the thinking display-only.
		if ev.Text != "" && ev.Format == SignatureFormat {
			e.ensure(refThinkingBlockKind)
			e.delta(refSignatureDelta{Type: "signature_delta", Signature: ev.Text})
		}
	case ir.EvRedacted:
		if ev.Text != "" && (ev.Format == "" || ev.Format == SignatureFormat) {
			e.closeBlock()
			e.write("content_block_start", refEvBlockStart{Type: "content_block_start", Index: e.next,
				ContentBlock: refRedactedStart{Type: "redacted_thinking", Data: ev.Text}})
			e.write("content_block_stop", refEvBlockStop{Type: "content_block_stop", Index: e.next})
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
		e.delta(refJsonDelta{Type: "input_json_delta", PartialJSON: ev.Text})
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
func (e *refStreamEncoder) call(i int, id, sig, sigFormat string) *refCallState {
	if c, ok := e.calls[i]; ok {
		return c
	}
	if id == "" {
		id = codec.RandomID("toolu_")
	}
	if sig != "" && sigFormat != SignatureFormat {
		id = ir.JoinCallID(id, sig)
	}
	c := &refCallState{id: id}
	e.calls[i] = c
	e.sawTool = true
	return c
}

func (e *refStreamEncoder) openTool(i int, c *refCallState) {
	e.closeBlock()
	c.opened = true
	e.open, e.openIdx, e.openCall = refToolBlockKind, e.next, i
	e.next++
	e.write("content_block_start", refEvBlockStart{Type: "content_block_start", Index: e.openIdx,
		ContentBlock: refToolStart{Type: "tool_use", ID: c.id, Name: c.name, Input: json.RawMessage("{}")}})
}

// ensure opens a text or thinking block unless one of that kind is open.
func (e *refStreamEncoder) ensure(k refBlockKind) {
	if e.open == k {
		return
	}
	e.closeBlock()
	e.open, e.openIdx = k, e.next
	e.next++
	var block any = refTextStart{Type: "text"}
	if k == refThinkingBlockKind {
		block = refThinkingStart{Type: "thinking"}
	}
	e.write("content_block_start", refEvBlockStart{Type: "content_block_start", Index: e.openIdx, ContentBlock: block})
}

func (e *refStreamEncoder) delta(d any) {
	e.write("content_block_delta", refEvBlockDelta{Type: "content_block_delta", Index: e.openIdx, Delta: d})
}

func (e *refStreamEncoder) closeBlock() {
	if e.open == refNoBlock {
		return
	}
	if e.open == refToolBlockKind {
		c := e.calls[e.openCall]
		if !c.sent {
			e.delta(refJsonDelta{Type: "input_json_delta", PartialJSON: "{}"})
		}
		c.closed = true
	}
	e.write("content_block_stop", refEvBlockStop{Type: "content_block_stop", Index: e.openIdx})
	e.open = refNoBlock
}

// drain replays held-back events in arrival order; a tool block that opens and stays
// incomplete holds the rest back again.
func (e *refStreamEncoder) drain() {
	for len(e.queue) > 0 && e.open != refToolBlockKind {
		q := e.queue
		e.queue = nil
		for _, ev := range q {
			e.content(ev)
		}
	}
}

// closeAll closes the open block and replays and closes everything that waited for it.
func (e *refStreamEncoder) closeAll() {
	for {
		if e.open == refToolBlockKind {
			e.closeBlock() // incomplete arguments: the end closes them as they are
		}
		if len(e.queue) == 0 {
			break
		}
		e.drain()
	}
	e.closeBlock()
}

func (e *refStreamEncoder) finish(ev ir.Event) {
	e.closeAll()
	stop := withTools(ev.Stop, e.sawTool)
	var d refEvMessageDelta
	d.Type = "message_delta"
	d.Delta.StopReason = stopReason(stop)
	d.Delta.StopSequence = stopSequence(stop, ev.StopSequence)
	d.Usage = usageOut(e.usage)
	e.write("message_delta", d)
	e.write("message_stop", struct {
		Type string `json:"type"`
	}{"message_stop"})
	e.ended = true
}

// fail closes what is open, so the client holds well-formed blocks (a thinking block that
// was streaming, a tool call cut off), then writes the in-band error; nothing follows it.
func (e *refStreamEncoder) fail(err *ir.Error) {
	if err == nil {
		err = &ir.Error{Kind: ir.ErrServer, Message: "the upstream failed"}
	}
	e.closeAll()
	if e.err == nil {
		e.err = e.out.Write("error", errorBody(err))
	}
	e.ended = true
}

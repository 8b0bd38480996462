package chat

import (
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// streamEncoder writes IR events as chat chunks. Every chunk has the same fixed shape, so it
// is appended by hand to one reused buffer (ir.Frames copies what it keeps) that keeps the
// part before the choice, written once per stream, at its start.
type streamEncoder struct {
	out          ir.Frames
	model        string
	includeUsage bool
	sawTool      bool
	started      bool
	ended        bool
	usage        codec.Usage
	noArgs       []int     // calls that have not had an argument fragment yet
	buf          []byte    // the frame being written, reused
	head         int       // buf[:head] is {"id":…,"object":"chat.completion.chunk","created":…,"model":…,"choices":[
	bufArr       [384]byte // buf's first array, allocated with the encoder
}

func (e *streamEncoder) gotArgs(idx int) {
	for i, n := range e.noArgs {
		if n == idx {
			e.noArgs = append(e.noArgs[:i], e.noArgs[i+1:]...)
			return
		}
	}
}

// NewStreamEncoder renders events for a chat client.
func NewStreamEncoder(out ir.Frames, req *ir.Request, model string) ir.StreamEncoder {
	e := &streamEncoder{out: out, model: model, includeUsage: req != nil && req.IncludeUsage}
	e.buf = e.bufArr[:0]
	return e
}

// delta starts a chunk of one choice and its delta object, left open for the delta's members.
func (e *streamEncoder) delta() []byte {
	return append(e.buf[:e.head], `{"index":0,"delta":{`...)
}

// send closes the delta and the chunk and writes it; finish is the finish_reason, "" for null.
func (e *streamEncoder) send(b []byte, finish string) error {
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = jsonw.String(b, finish)
	}
	b = append(b, "}]}"...)
	e.buf = b
	return e.out.Write("", b)
}

// appendToolCall appends a tool_calls delta member of one call.
func appendToolCall(b []byte, index int, start bool, id, name, args string) []byte {
	b = append(b, `"tool_calls":[{"index":`...)
	b = jsonw.Int(b, int64(index))
	if id != "" {
		b = append(b, `,"id":`...)
		b = jsonw.String(b, id)
	}
	if start {
		b = append(b, `,"type":"function"`...)
	}
	b = append(b, `,"function":{`...)
	if name != "" {
		b = append(b, `"name":`...)
		b = jsonw.String(b, name)
		b = append(b, ',')
	}
	b = append(b, `"arguments":`...)
	b = jsonw.String(b, args)
	return append(b, "}}]"...)
}

// appendThinkingBlock appends a thinking_blocks delta member of one block; key is "signature" or
// "data".
func appendThinkingBlock(b []byte, typ, key, value string) []byte {
	b = append(b, `"thinking_blocks":[{"type":`...)
	b = jsonw.String(b, typ)
	if value != "" {
		b = append(b, ',')
		b = jsonw.Key(b, key)
		b = jsonw.String(b, value)
	}
	return append(b, "}]"...)
}

func (e *streamEncoder) start(ev ir.Event) error {
	e.started = true
	b := append(e.buf[:0], `{"id":`...)
	b = jsonw.String(b, chatID(ev.ID))
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = jsonw.Int(b, created(0))
	b = append(b, `,"model":`...)
	b = jsonw.String(b, e.model)
	b = append(b, `,"choices":[`...)
	e.buf, e.head = b, len(b)
	return e.send(append(e.delta(), `"role":"assistant","content":""`...), "")
}

func (e *streamEncoder) Encode(ev ir.Event) error {
	if e.ended {
		return nil
	}
	if !e.started && ev.Kind != ir.EvError {
		if err := e.start(ev); err != nil {
			return err
		}
	}
	switch ev.Kind {
	case ir.EvText:
		if ev.Text == "" {
			return nil // a part that only carried a (gemini) signature: nothing to show
		}
		return e.send(jsonw.String(append(e.delta(), `"content":`...), ev.Text), "")
	case ir.EvReasoning:
		b := e.delta()
		if ev.Text != "" {
			b = jsonw.String(append(b, `"reasoning_content":`...), ev.Text)
		}
		return e.send(b, "")
	case ir.EvSignature:
		if ev.Format == "messages" {
			return e.send(appendThinkingBlock(e.delta(), "thinking", "signature", ev.Text), "")
		}
	case ir.EvRedacted:
		return e.send(appendThinkingBlock(e.delta(), "redacted_thinking", "data", ev.Text), "")
	case ir.EvToolStart:
		e.sawTool = true
		e.noArgs = append(e.noArgs, ev.Index)
		id := ev.ID
		if ev.Format == "gemini" {
			id = ir.JoinCallID(id, ev.Signature)
		}
		return e.send(appendToolCall(e.delta(), ev.Index, true, id, ev.Name, ""), "")
	case ir.EvToolArgs:
		e.gotArgs(ev.Index)
		return e.send(appendToolCall(e.delta(), ev.Index, false, "", "", ev.Text), "")
	case ir.EvUsage:
		e.usage = ev.Usage
	case ir.EvFinish:
		return e.finish(ev)
	case ir.EvError:
		e.ended = true
		return e.out.Write("", EncodeError(ev.Err))
	}
	return nil
}

func (e *streamEncoder) finish(ev ir.Event) error {
	e.ended = true
	if ev.Usage.Known() {
		e.usage = ev.Usage
	}
	for _, idx := range e.noArgs { // a call streamed without arguments has "{}", not ""
		if err := e.send(appendToolCall(e.delta(), idx, false, "", "", "{}"), ""); err != nil {
			return err
		}
	}
	stop := ev.Stop
	if e.sawTool && stop != ir.StopLength { // a call cut by the token cap stays "length"
		stop = ir.StopToolUse
	}
	if err := e.send(e.delta(), finishReason(stop)); err != nil {
		return err
	}
	if e.includeUsage {
		b := append(e.buf[:e.head], `],"usage":`...)
		b = appendUsage(b, e.usage)
		e.buf = append(b, '}')
		if err := e.out.Write("", e.buf); err != nil {
			return err
		}
	}
	return e.out.Write("", doneFrame)
}

var doneFrame = []byte(doneMarker)

// appendUsage writes usageJSON's object as encoding/json writes that map (keys sorted).
func appendUsage(b []byte, u codec.Usage) []byte {
	prompt := u.Input + u.CacheRead + u.CacheWrite
	completion := u.Output + u.Reasoning
	b = append(b, `{"completion_tokens":`...)
	b = jsonw.Int(b, completion)
	b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
	b = jsonw.Int(b, u.Reasoning)
	b = append(b, `},"prompt_tokens":`...)
	b = jsonw.Int(b, prompt)
	b = append(b, `,"prompt_tokens_details":{`...)
	if u.CacheWrite > 0 {
		b = append(b, `"cache_write_tokens":`...)
		b = jsonw.Int(b, u.CacheWrite)
		b = append(b, ',')
	}
	b = append(b, `"cached_tokens":`...)
	b = jsonw.Int(b, u.CacheRead)
	b = append(b, `},"total_tokens":`...)
	b = jsonw.Int(b, prompt+completion)
	return append(b, '}')
}

// Close ends a stream that got neither a finish nor an error: the client must not take a
// cut stream for a whole one.
func (e *streamEncoder) Close() error {
	if e.ended {
		return nil
	}
	e.ended = true
	return e.out.Write("", interruptedFrame)
}

// interruptedFrame is the error Close writes, the same for every stream.
var interruptedFrame = EncodeError(&ir.Error{Status: 502, Kind: ir.ErrServer, Code: "stream_interrupted",
	Message: "the upstream stream broke before it finished; the answer is incomplete"})

package chat

import (
	"encoding/json"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

// The stream encoder as it was before it wrote its JSON by hand (encoding/json over structs):
// the reference the differential test holds the hand-written one to.

// refStreamEncoder writes IR events as chat chunks.
type refStreamEncoder struct {
	out          ir.Frames
	id, model    string
	created      int64
	includeUsage bool
	sawTool      bool
	started      bool
	ended        bool
	usage        codec.Usage
	noArgs       []int // calls that have not had an argument fragment yet
}

func (e *refStreamEncoder) gotArgs(idx int) {
	for i, n := range e.noArgs {
		if n == idx {
			e.noArgs = append(e.noArgs[:i], e.noArgs[i+1:]...)
			return
		}
	}
}

// newRefStreamEncoder renders events for a chat client.
func newRefStreamEncoder(out ir.Frames, req *ir.Request, model string) ir.StreamEncoder {
	return &refStreamEncoder{out: out, model: model, includeUsage: req != nil && req.IncludeUsage}
}

type refChunkDelta struct {
	Role             string              `json:"role,omitempty"`
	Content          *string             `json:"content,omitempty"`
	ReasoningContent string              `json:"reasoning_content,omitempty"`
	ThinkingBlocks   []wireThinkingBlock `json:"thinking_blocks,omitempty"`
	ToolCalls        []refChunkToolCall  `json:"tool_calls,omitempty"`
}

type refChunkToolCall struct {
	Index    int              `json:"index"`
	ID       string           `json:"id,omitempty"`
	Type     string           `json:"type,omitempty"`
	Function refChunkFunction `json:"function"`
}

type refChunkFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type refChunk struct {
	ID      string           `json:"id"`
	Object  string           `json:"object"`
	Created int64            `json:"created"`
	Model   string           `json:"model"`
	Choices []refChunkChoice `json:"choices"`
	Usage   any              `json:"usage,omitempty"`
}

type refChunkChoice struct {
	Index        int           `json:"index"`
	Delta        refChunkDelta `json:"delta"`
	Logprobs     any           `json:"logprobs"`
	FinishReason *string       `json:"finish_reason"`
}

func (e *refStreamEncoder) write(d refChunkDelta, finish *string) error {
	c := refChunk{ID: e.id, Object: "chat.completion.chunk", Created: e.created, Model: e.model,
		Choices: []refChunkChoice{{Delta: d, FinishReason: finish}}}
	b, _ := json.Marshal(c)
	return e.out.Write("", b)
}

func (e *refStreamEncoder) Encode(ev ir.Event) error {
	if e.ended {
		return nil
	}
	if !e.started && ev.Kind != ir.EvError {
		e.started = true
		e.id, e.created = chatID(ev.ID), created(0)
		empty := ""
		if err := e.write(refChunkDelta{Role: "assistant", Content: &empty}, nil); err != nil {
			return err
		}
	}
	switch ev.Kind {
	case ir.EvText:
		if ev.Text == "" {
			return nil // a part that only carried a (gemini) signature: nothing to show
		}
		t := ev.Text
		return e.write(refChunkDelta{Content: &t}, nil)
	case ir.EvReasoning:
		return e.write(refChunkDelta{ReasoningContent: ev.Text}, nil)
	case ir.EvSignature:
		if ev.Format == "messages" {
			return e.write(refChunkDelta{ThinkingBlocks: []wireThinkingBlock{{Type: "thinking", Signature: ev.Text}}}, nil)
		}
	case ir.EvRedacted:
		return e.write(refChunkDelta{ThinkingBlocks: []wireThinkingBlock{{Type: "redacted_thinking", Data: ev.Text}}}, nil)
	case ir.EvToolStart:
		e.sawTool = true
		e.noArgs = append(e.noArgs, ev.Index)
		id := ev.ID
		if ev.Format == "gemini" {
			id = ir.JoinCallID(id, ev.Signature)
		}
		return e.write(refChunkDelta{ToolCalls: []refChunkToolCall{{Index: ev.Index, ID: id, Type: "function", Function: refChunkFunction{Name: ev.Name}}}}, nil)
	case ir.EvToolArgs:
		e.gotArgs(ev.Index)
		return e.write(refChunkDelta{ToolCalls: []refChunkToolCall{{Index: ev.Index, Function: refChunkFunction{Arguments: ev.Text}}}}, nil)
	case ir.EvUsage:
		e.usage = ev.Usage
	case ir.EvFinish:
		e.ended = true
		if ev.Usage.Known() {
			e.usage = ev.Usage
		}
		for _, idx := range e.noArgs { // a call streamed without arguments has "{}", not ""
			if err := e.write(refChunkDelta{ToolCalls: []refChunkToolCall{{Index: idx, Function: refChunkFunction{Arguments: "{}"}}}}, nil); err != nil {
				return err
			}
		}
		stop := ev.Stop
		if e.sawTool && stop != ir.StopLength {
			stop = ir.StopToolUse
		}
		fr := finishReason(stop)
		if err := e.write(refChunkDelta{}, &fr); err != nil {
			return err
		}
		if e.includeUsage {
			c := refChunk{ID: e.id, Object: "chat.completion.chunk", Created: e.created, Model: e.model, Choices: []refChunkChoice{}, Usage: usageJSON(e.usage)}
			b, _ := json.Marshal(c)
			if err := e.out.Write("", b); err != nil {
				return err
			}
		}
		return e.out.Write("", []byte("[DONE]"))
	case ir.EvError:
		e.ended = true
		return e.out.Write("", EncodeError(ev.Err))
	}
	return nil
}

// Close ends a stream that got neither a finish nor an error: the client must not take a
// cut stream for a whole one.
func (e *refStreamEncoder) Close() error {
	if e.ended {
		return nil
	}
	e.ended = true
	return e.out.Write("", EncodeError(&ir.Error{Status: 502, Kind: ir.ErrServer, Code: "stream_interrupted",
		Message: "the upstream stream broke before it finished; the answer is incomplete"}))
}

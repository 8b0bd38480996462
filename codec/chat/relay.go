package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

// Relay passes a chat-format route's stream to a chat client chunk by chunk, changing only
// what the client must see differently: the model it asked for, tool-call indexes counted 0,
// 1, 2… per choice in order of first appearance, the chat convention where the provider
// strays from it (convention.go: usage, content arrays), no usage chunk the client did not ask
// for (the gateway always asks for one, to bill), and no chunk that carries nothing a chat
// client reads (Azure's preamble and its content-filter annotations after the finish; their
// members are named in the loss). Every other byte is the upstream's. On the side it reads the
// usage, whether the answer finished, and an in-band error.
type Relay struct {
	model        []byte // the client's model as a JSON string
	includeUsage bool
	loss         *ir.Loss
	calls        map[int]*toolIndexes // by choice index
	finished     bool
	content      bool // a chunk carried content, reasoning, a tool call or a finish
	usage        codec.Usage
	hasUsage     bool
	err          *ir.Error
	edits        []jsonscan.Edit // reused by every chunk
	out          []byte          // the rewritten chunk, reused by every chunk
}

// NewRelay relays a stream for a client that asked for model (and for the usage chunk, when
// includeUsage). What the client does not get is named in loss (nil: not reported).
func NewRelay(model string, includeUsage bool, loss *ir.Loss) *Relay {
	return &Relay{model: quote(model), includeUsage: includeUsage, loss: loss}
}

// ErrNotChunk reports an event whose data is neither a JSON object nor data: [DONE]: a cut or
// garbled event, never relayed.
var ErrNotChunk = errors.New("chat stream: an event that is not a chunk")

// Chunk takes one upstream event's data and returns what the client gets (nil: nothing),
// valid until the next call. done reports the end of the stream: data: [DONE], or an error
// chunk (see Err).
func (r *Relay) Chunk(data []byte) (out []byte, done bool, err error) {
	switch {
	case IsDone(data):
		return data, true, nil
	case len(data) == 0:
		return nil, false, nil // an empty data line: a keep-alive
	}
	edits := r.edits[:0]
	defer func() { r.edits = edits[:0] }()
	var usage, elsewhere, wireErr, choiceList jsonscan.Span
	choices, carrying, idle := -1, 0, 0 // choices absent; choices with a delta or a finish; idle ones
	wasFinished := r.finished
	err = jsonscan.Members(data, func(k []byte, v jsonscan.Span) bool {
		val := data[v.Start:v.End]
		switch {
		case jsonscan.KeyIs(k, "model"):
			if string(val) != string(r.model) {
				edits = append(edits, jsonscan.Edit{Span: v, New: r.model})
			}
		case jsonscan.KeyIs(k, "choices"):
			choices, choiceList = 0, v
			_ = jsonscan.Elements(val, func(c jsonscan.Span) bool {
				choices++
				var carries, still bool
				var in jsonscan.Span
				edits, carries, still, in = r.choice(data, v.Start+c.Start, v.Start+c.End, edits)
				if carries {
					carrying++
				}
				if still {
					idle++
				}
				if in.End > 0 && elsewhere.End == 0 {
					elsewhere = in
				}
				return true
			})
		case jsonscan.KeyIs(k, "usage") && string(val) != "null":
			usage = v
		case jsonscan.KeyIs(k, "x_groq") && val[0] == '{':
			if u, ok := jsonscan.Member(val, "usage"); ok && string(val[u.Start:u.End]) != "null" {
				elsewhere = jsonscan.Span{Start: v.Start + u.Start, End: v.Start + u.End}
			}
		case jsonscan.KeyIs(k, "error") && string(val) != "null":
			wireErr = v
		}
		return true
	})
	if err != nil {
		return nil, false, ErrNotChunk
	}
	if wireErr.End > 0 {
		var w wireError
		_ = json.Unmarshal(data[wireErr.Start:wireErr.End], &w)
		r.err = errorFromWire(0, &w)
		return data, true, nil
	}
	if wasFinished && choices > 0 && idle == choices && (usage.End > 0 || elsewhere.End > 0) {
		// A usage chunk after the finish whose choices say nothing (OpenRouter's carries a
		// null finish_reason): the chat usage chunk's own shape, choices [].
		edits = append(edits, jsonscan.Edit{Span: choiceList, New: []byte("[]")})
		choices = 0
	}
	if usage.End == 0 && elsewhere.End > 0 {
		// Usage where the provider put it (Groq's x_groq, Moonshot's finishing choice): the
		// chat convention's place is the top level.
		raw := data[elsewhere.Start:elsewhere.End]
		var w wireUsage
		if json.Unmarshal(raw, &w) == nil {
			r.usage, r.hasUsage = w.normalize(), true
			if r.includeUsage {
				whole := jsonscan.Span{Start: 0, End: len(raw)}
				top := append([]byte(`,"usage":`), applySorted(raw, usageEdit(raw, whole, w, nil))...)
				end := bytes.LastIndexByte(data, '}')
				edits = append(edits, jsonscan.Edit{Span: jsonscan.Span{Start: end, End: end}, New: top})
			}
		}
	}
	if usage.End > 0 {
		var w wireUsage
		if json.Unmarshal(data[usage.Start:usage.End], &w) == nil {
			r.usage, r.hasUsage = w.normalize(), true
			edits = usageEdit(data, usage, w, edits)
		}
		if choices <= 0 && !r.includeUsage {
			return nil, false, nil // asked for by the gateway for billing, not by the client
		}
	} else if carrying == 0 {
		reportUnread(data, r.loss)
		return nil, false, nil
	}
	if len(edits) == 0 {
		return data, false, nil
	}
	sortEdits(edits)
	r.out = jsonscan.AppendApply(r.out[:0], data, edits)
	return r.out, false, nil
}

// choice reads one element of choices (data[start:end]): its finish_reason, and the indexes of
// its tool-call fragments, which it renumbers. carries reports a delta or a finish_reason: an
// element with neither (Azure's content-filter annotations) has nothing a chat client reads.
// idle reports an element with no finish and a delta without content (only a role, an empty
// content): after the finish, such an element (OpenRouter's usage chunk) would make an SDK
// accumulator forget the finish_reason. usage is the span of a usage member inside the
// element (Moonshot), in data.
func (r *Relay) choice(data []byte, start, end int, edits []jsonscan.Edit) (_ []jsonscan.Edit, carries, idle bool, usage jsonscan.Span) {
	elem := data[start:end]
	n, delta, finished := 0, jsonscan.Span{}, false
	_ = jsonscan.Members(elem, func(k []byte, v jsonscan.Span) bool {
		val := elem[v.Start:v.End]
		switch {
		case jsonscan.KeyIs(k, "index"):
			n, _ = strconv.Atoi(string(val))
		case jsonscan.KeyIs(k, "delta"):
			delta = v
		case jsonscan.KeyIs(k, "usage") && string(val) != "null":
			usage = jsonscan.Span{Start: start + v.Start, End: start + v.End}
		case jsonscan.KeyIs(k, "finish_reason"):
			// Some providers send "" on every chunk before the last.
			if string(val) != "null" && string(val) != `""` {
				r.finished, r.content, carries, finished = true, true, true, true
			}
		}
		return true
	})
	if delta.End == 0 || elem[delta.Start] != '{' {
		return edits, carries, !finished, usage
	}
	body := elem[delta.Start:delta.End]
	base := start + delta.Start
	var calls, reasoningKey jsonscan.Span
	contentArray, content, hasReasoningContent := false, false, false
	_ = jsonscan.MemberSpans(body, func(k []byte, ks, v jsonscan.Span) bool {
		val := body[v.Start:v.End]
		switch {
		case jsonscan.KeyIs(k, "tool_calls"):
			calls = v
			content = content || val[0] == '[' && v.End-v.Start > 2
		case jsonscan.KeyIs(k, "content"):
			contentArray = val[0] == '['
			content = content || contentArray || nonEmptyString(val)
		case jsonscan.KeyIs(k, "reasoning_content"):
			hasReasoningContent = true
			content = content || nonEmptyString(val)
		case jsonscan.KeyIs(k, "reasoning"):
			if nonEmptyString(val) {
				reasoningKey, content = ks, true
			}
		case jsonscan.KeyIs(k, "refusal"):
			content = content || nonEmptyString(val)
		}
		return true
	})
	r.content = r.content || content
	if reasoningKey.End > 0 && !hasReasoningContent {
		// OpenRouter's name for reasoning; chat clients of the gateway read reasoning_content.
		edits = append(edits, jsonscan.Edit{Span: jsonscan.Span{Start: base + reasoningKey.Start, End: base + reasoningKey.End},
			New: []byte("reasoning_content")})
	}
	if contentArray {
		edits = contentEdits(data, base, start+delta.End, r.loss, edits)
	}
	idle = !finished && !content
	if calls.End == 0 || body[calls.Start] != '[' {
		return edits, true, idle, usage
	}
	if r.calls == nil {
		r.calls = map[int]*toolIndexes{}
	}
	x := r.calls[n]
	if x == nil {
		x = &toolIndexes{}
		r.calls[n] = x
	}
	list := body[calls.Start:calls.End]
	_ = jsonscan.Elements(list, func(c jsonscan.Span) bool {
		edits = renumber(x, data, base+calls.Start+c.Start, base+calls.Start+c.End, edits)
		return true
	})
	return edits, true, idle, usage
}

// chunkMembers and choiceMembers are the chunk's own members; anything else in a chunk that
// is left out is a provider's addition, named in the loss.
var (
	chunkMembers  = []string{"id", "object", "created", "model", "choices", "usage", "system_fingerprint", "service_tier", "obfuscation"}
	choiceMembers = []string{"index", "delta", "finish_reason", "logprobs"}
)

// reportUnread names in loss what a chunk that is left out carried (Azure:
// prompt_filter_results, choices[].content_filter_offsets).
func reportUnread(data []byte, loss *ir.Loss) {
	if loss == nil {
		return
	}
	_ = jsonscan.Members(data, func(k []byte, v jsonscan.Span) bool {
		name := jsonscan.Key(k)
		if !slices.Contains(chunkMembers, name) {
			loss.Drop("answer." + name)
		}
		if name == "choices" && data[v.Start] == '[' {
			list := data[v.Start:v.End]
			_ = jsonscan.Elements(list, func(c jsonscan.Span) bool {
				_ = jsonscan.Members(list[c.Start:c.End], func(k []byte, _ jsonscan.Span) bool {
					if name := jsonscan.Key(k); !slices.Contains(choiceMembers, name) {
						loss.Drop("answer.choices[]." + name)
					}
					return true
				})
				return true
			})
		}
		return true
	})
}

// renumber gives one tool-call fragment (data[start:end]) our index: in place of the
// upstream's, or added when the upstream left it out.
func renumber(x *toolIndexes, data []byte, start, end int, edits []jsonscan.Edit) []jsonscan.Edit {
	elem := data[start:end]
	if elem[0] != '{' {
		return edits
	}
	up, id := 0, ""
	var at jsonscan.Span
	has, members := false, 0
	_ = jsonscan.Members(elem, func(k []byte, v jsonscan.Span) bool {
		val := elem[v.Start:v.End]
		members++
		switch {
		case jsonscan.KeyIs(k, "index"):
			up, _ = strconv.Atoi(string(val))
			at, has = v, true
		case jsonscan.KeyIs(k, "id"):
			_ = json.Unmarshal(val, &id)
		}
		return true
	})
	idx, _ := x.index(up, id)
	ours := strconv.AppendInt(nil, int64(idx), 10)
	switch {
	case !has:
		ins := append([]byte(`"index":`), ours...)
		if members > 0 {
			ins = append(ins, ',')
		}
		return append(edits, jsonscan.Edit{Span: jsonscan.Span{Start: start + 1, End: start + 1}, New: ins})
	case string(elem[at.Start:at.End]) != string(ours):
		return append(edits, jsonscan.Edit{Span: jsonscan.Span{Start: start + at.Start, End: start + at.End}, New: ours})
	}
	return edits
}

// Finished reports that a choice gave its finish_reason: the answer is complete even if the
// stream then stops without data: [DONE].
func (r *Relay) Finished() bool { return r.finished }

// Content reports that the answer has begun: some chunk carried text, reasoning, a refusal, a
// tool call or a finish — not only the role, an empty content or usage.
func (r *Relay) Content() bool { return r.content }

// nonEmptyString reports a JSON string value with at least one character.
func nonEmptyString(v []byte) bool { return len(v) > 2 && v[0] == '"' }

// Usage is the latest usage the stream reported, normalized.
func (r *Relay) Usage() (codec.Usage, bool) { return r.usage, r.hasUsage }

// Err is the error an error chunk reported (nil if none came).
func (r *Relay) Err() *ir.Error { return r.err }

package replay

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
)

// runChat drives /v1/chat/completions with openai-go: streaming with its accumulator for
// stream recordings, a plain call otherwise.
func runChat(t *testing.T, h *harness, c cell) result {
	p := openai.ChatCompletionNewParams{Model: c.model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)}}
	for _, name := range c.rec.Meta.Tools {
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: name, Parameters: shared.FunctionParameters{"type": "object"}}))
	}
	var r result
	if !c.rec.Meta.Stream {
		comp, err := h.oai.Chat.Completions.New(ctx(t), p)
		r.fill(h.tap.take())
		if err != nil {
			r.openaiError(err)
			return r
		}
		v, _ := decode([]byte(comp.RawJSON()))
		r.answer, _ = chatWhole([]byte(comp.RawJSON()))
		r.Usage = chatClientUsage(&r, get(v, "usage"))
		r.chatSignatures(get(v, "choices"))
		return r
	}
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := h.oai.Chat.Completions.NewStreaming(ctx(t), p)
	var acc openai.ChatCompletionAccumulator
	n := 0
	for s.Next() {
		n++
		if ch := s.Current(); !acc.AddChunk(ch) {
			r.violate("chunk %d rejected by openai-go's ChatCompletionAccumulator: %s", n, ch.RawJSON())
		}
	}
	err := s.Err()
	s.Close()
	r.fill(h.tap.take())
	if err != nil {
		r.openaiError(err)
		r.InStream = r.Status == 200
	}
	if len(acc.Choices) > 0 {
		ch := acc.Choices[0]
		r.Text, r.Finish, r.NativeStop = ch.Message.Content, chatFinish[ch.FinishReason], ch.FinishReason
		for _, tc := range ch.Message.ToolCalls {
			r.Calls = append(r.Calls, toolCall{ID: tc.ID, Name: tc.Function.Name, Args: canonicalJSON(tc.Function.Arguments)})
		}
	}
	r.chatStreamRaw()
	return r
}

// openaiError reads an openai-go error.
func (r *result) openaiError(err error) {
	r.Err = &upstreamError{Status: r.Status}
	var e *openai.Error
	if errors.As(err, &e) {
		r.Err.Status, r.ErrType, r.ErrMessage = e.StatusCode, e.Type, e.Message
		if e.Code != "" {
			r.Err.Code = e.Code
		}
		return
	}
	r.ErrMessage = err.Error()
}

// chatClientUsage reads the gateway's chat usage as it is: completion_tokens must already
// include reasoning, and total_tokens must add up.
func chatClientUsage(r *result, u any) *usage {
	if u == nil {
		return nil
	}
	if t, in, out := num(u, "total_tokens"), num(u, "prompt_tokens"), num(u, "completion_tokens"); t != in+out {
		r.violate("usage total_tokens = %d, want prompt_tokens %d + completion_tokens %d", t, in, out)
	}
	return &usage{Input: num(u, "prompt_tokens"), CacheRead: num(u, "prompt_tokens_details", "cached_tokens"),
		CacheWrite: num(u, "prompt_tokens_details", "cache_write_tokens"), Output: num(u, "completion_tokens"),
		Reasoning: num(u, "completion_tokens_details", "reasoning_tokens")}
}

// chatSignatures collects thinking_blocks signatures of whole-answer choices.
func (r *result) chatSignatures(choices any) {
	for _, c := range choices.([]any) {
		for _, b := range arr(c, "message", "thinking_blocks") {
			if s := str(b, "signature") + str(b, "data"); s != "" {
				r.Signatures = append(r.Signatures, s)
			}
		}
	}
}

// chatStreamRaw reads what openai-go hides: reasoning, thinking_blocks, usage, and the
// grammar (role first, tool indexes 0..n-1 in order, no null ids or names, [DONE] last).
func (r *result) chatStreamRaw() {
	frames := parseFrames(r.Raw)
	var reasoning strings.Builder
	sigs := map[int64]string{}
	roleSeen, done := false, false
	indexes := map[int64]bool{}
	models := map[string]bool{}
	for i, f := range frames {
		if done {
			r.violate("frame %d after data: [DONE]: %s", i, f.Data)
			continue
		}
		if f.Data == "[DONE]" {
			done = true
			continue
		}
		v, err := decode([]byte(f.Data))
		if err != nil {
			r.violate("frame %d is not JSON: %s", i, f.Data)
			continue
		}
		if has(v, "error") {
			continue
		}
		if str(v, "id") == "" {
			r.violate("chunk %d has no id: %s", i, f.Data)
		}
		if u := get(v, "usage"); u != nil {
			r.Usage = chatClientUsage(r, u)
		}
		models[str(v, "model")] = true
		for _, c := range arr(v, "choices") {
			d := get(c, "delta")
			if !roleSeen {
				roleSeen = true
				if str(d, "role") != "assistant" {
					r.violate("first chunk with a choice has role %q, want assistant: %s", str(d, "role"), f.Data)
				}
			}
			reasoning.WriteString(str(d, "reasoning_content"))
			for j, b := range arr(d, "thinking_blocks") {
				sigs[int64(j)] += str(b, "signature") + str(b, "data")
			}
			for _, tc := range arr(d, "tool_calls") {
				idx := num(tc, "index")
				if !indexes[idx] && idx != int64(len(indexes)) {
					r.violate("tool call index %d appears after %d calls, want %d: %s", idx, len(indexes), len(indexes), f.Data)
				}
				indexes[idx] = true
				for _, k := range []string{"id", "type"} {
					if m, _ := tc.(obj); m != nil {
						if x, ok := m[k]; ok && x == nil {
							r.violate("tool call delta has %q: null: %s", k, f.Data)
						}
					}
				}
				if fn, _ := get(tc, "function").(obj); fn != nil {
					if x, ok := fn["name"]; ok && x == nil {
						r.violate("tool call delta has \"name\": null: %s", f.Data)
					}
				}
			}
		}
	}
	if r.Err == nil && !done {
		r.violate("the stream does not end with data: [DONE]")
	}
	r.Reasoning = reasoning.String()
	r.Model = oneModel(r, models)
	for j := int64(0); j < int64(len(sigs)); j++ {
		if sigs[j] != "" {
			r.Signatures = append(r.Signatures, sigs[j])
		}
	}
}

// oneModel is the model every chunk or event names; differing names are a violation.
func oneModel(r *result, models map[string]bool) string {
	var names []string
	for m := range models {
		names = append(names, m)
	}
	if len(names) > 1 {
		sort.Strings(names)
		r.violate("the stream names several models: %q", names)
		return strings.Join(names, "|")
	}
	if len(names) == 1 {
		return names[0]
	}
	return ""
}

package replay

import (
	"fmt"
	"strconv"
	"strings"
)

// reference derives the answer a recording holds, read by the suite's own reader for its
// upstream format, so a recording the suite has never seen is checked just as well.
func reference(rec recording) (answer, error) {
	m := rec.Meta
	if m.Status != 200 {
		return answer{Err: httpError(rec)}, nil
	}
	var a answer
	var err error
	switch {
	case m.Provider == "bedrock" && m.Stream:
		var events []bedrockEvent
		if events, err = bedrockEvents(rec); err != nil {
			return a, err
		}
		if m.Format == "converse" {
			a, err = converseStream(events)
		} else {
			a, err = messagesStream(invokeSSE(events))
		}
	case m.Format == "converse":
		a, err = converseWhole(rec.Body)
	case m.Format == "chat" && m.Stream:
		a, err = chatStream(rec.Body)
	case m.Format == "chat":
		a, err = chatWhole(rec.Body)
	case m.Format == "messages" && m.Stream:
		a, err = messagesStream(rec.Body)
	case m.Format == "messages":
		a, err = messagesWhole(rec.Body)
	case m.Format == "responses" && m.Stream:
		a, err = responsesStream(rec.Body)
	case m.Format == "responses":
		v, e := decode(rec.Body)
		if e != nil {
			return a, e
		}
		a = responsesObject(v)
	case m.Format == "gemini":
		a, err = geminiAnswer(rec.Body, m.Stream)
	default:
		err = fmt.Errorf("unknown format %q", m.Format)
	}
	if len(a.Calls) > 0 && a.Err == nil && (a.Finish == "stop" || a.Finish == "") {
		a.Finish = "tool_calls" // any call makes the stop a tool stop
	}
	return a, err
}

// httpError reads a refused call: the provider's message and retry hint.
func httpError(rec recording) *upstreamError {
	e := &upstreamError{Status: rec.Meta.Status}
	v, _ := decode(rec.Body)
	e.Message = str(v, "error", "message")
	e.Code = str(v, "error", "code")
	if e.Code == "" {
		e.Code = str(v, "error", "type")
	}
	if str(v, "error", "status") != "" { // gemini: code is a number, status the name
		e.Code = str(v, "error", "status")
	}
	e.Billing = str(v, "error", "type") == "insufficient_quota" || str(v, "error", "code") == "insufficient_quota"
	if ra, err := strconv.ParseFloat(rec.Meta.Headers["Retry-After"], 64); err == nil {
		e.RetryAfter = ra
	}
	for _, d := range arr(v, "error", "details") {
		if strings.HasSuffix(str(d, "@type"), "google.rpc.RetryInfo") {
			if s, err := strconv.ParseFloat(strings.TrimSuffix(str(d, "retryDelay"), "s"), 64); err == nil {
				e.RetryAfter = s
			}
		}
	}
	return e
}

// chatUsage normalizes a chat usage object. Providers that count reasoning outside
// completion_tokens (xAI) are told by their totals: prompt + completion + reasoning.
func chatUsage(u any) *usage {
	if u == nil {
		return nil
	}
	r := num(u, "completion_tokens_details", "reasoning_tokens")
	out := &usage{Input: num(u, "prompt_tokens"), CacheRead: num(u, "prompt_tokens_details", "cached_tokens"),
		CacheWrite: num(u, "prompt_tokens_details", "cache_write_tokens"), Output: num(u, "completion_tokens"), Reasoning: r}
	if out.CacheRead == 0 {
		out.CacheRead = num(u, "prompt_cache_hit_tokens")
	}
	if t := num(u, "total_tokens"); r > 0 && t == out.Input+out.Output+r {
		out.Output += r
	}
	return out
}

var chatFinish = map[string]string{"stop": "stop", "length": "length", "tool_calls": "tool_calls",
	"function_call": "tool_calls", "content_filter": "content_filter"}

// chatContent splits a chat content value (a string, or Mistral's array of text and
// thinking parts) into text and reasoning.
func chatContent(c any) (text, reasoning string) {
	switch c := c.(type) {
	case string:
		return c, ""
	case []any:
		for _, p := range c {
			switch str(p, "type") {
			case "text":
				text += str(p, "text")
			case "thinking":
				for _, t := range arr(p, "thinking") {
					reasoning += str(t, "text")
				}
			}
		}
	}
	return text, reasoning
}

func chatStream(b []byte) (answer, error) {
	var a answer
	type acc struct{ id, name, args string }
	calls := map[int64]*acc{}
	var order []int64 // upstream indexes in order of first appearance
	var text, reasoning strings.Builder
	for _, f := range parseFrames(b) {
		if f.Data == "[DONE]" {
			break
		}
		v, err := decode([]byte(f.Data))
		if err != nil {
			return a, fmt.Errorf("chunk %q: %v", f.Data, err)
		}
		if has(v, "error") {
			a.Err = &upstreamError{Message: str(v, "error", "message"), Code: str(v, "error", "code")}
			break
		}
		if a.Model == "" {
			a.Model = str(v, "model")
		}
		if u := get(v, "usage"); u != nil {
			a.Usage = chatUsage(u)
		}
		for _, c := range arr(v, "choices") {
			if u := get(c, "usage"); u != nil { // Moonshot puts it in the finishing choice
				a.Usage = chatUsage(u)
			}
			d := get(c, "delta")
			t, r := chatContent(get(d, "content"))
			text.WriteString(t)
			reasoning.WriteString(r + str(d, "reasoning_content") + str(d, "reasoning"))
			for _, tc := range arr(d, "tool_calls") {
				i := num(tc, "index")
				c := calls[i]
				if c == nil {
					c = &acc{}
					calls[i] = c
					order = append(order, i)
				}
				if id := str(tc, "id"); id != "" {
					c.id = id
				}
				if n := str(tc, "function", "name"); n != "" {
					c.name = n
				}
				c.args += str(tc, "function", "arguments")
			}
			if fr := str(c, "finish_reason"); fr != "" {
				a.Finish, a.NativeStop = chatFinish[fr], fr
			}
		}
	}
	for _, i := range order {
		c := calls[i]
		a.Calls = append(a.Calls, toolCall{ID: c.id, Name: c.name, Args: canonicalJSON(c.args)})
	}
	a.Text, a.Reasoning = text.String(), reasoning.String()
	return a, nil
}

func chatWhole(b []byte) (answer, error) {
	v, err := decode(b)
	if err != nil {
		return answer{}, err
	}
	a := answer{Model: str(v, "model"), Usage: chatUsage(get(v, "usage"))}
	for _, c := range arr(v, "choices") {
		msg := get(c, "message")
		t, r := chatContent(get(msg, "content"))
		a.Text += t
		a.Reasoning += r + str(msg, "reasoning_content") + str(msg, "reasoning")
		for _, tc := range arr(msg, "tool_calls") {
			a.Calls = append(a.Calls, toolCall{ID: str(tc, "id"), Name: str(tc, "function", "name"),
				Args: canonicalJSON(str(tc, "function", "arguments"))})
		}
		fr := str(c, "finish_reason")
		a.Finish, a.NativeStop = chatFinish[fr], fr
	}
	return a, nil
}

var messagesFinish = map[string]string{"end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop",
	"max_tokens": "length", "model_context_window_exceeded": "length", "tool_use": "tool_calls", "refusal": "content_filter"}

// messagesUsage normalizes a messages usage object (input_tokens excludes the cache).
func messagesUsage(u any) *usage {
	cr, cw := num(u, "cache_read_input_tokens"), num(u, "cache_creation_input_tokens")
	return &usage{Input: num(u, "input_tokens") + cr + cw, CacheRead: cr, CacheWrite: cw,
		Output: num(u, "output_tokens"), Reasoning: num(u, "output_tokens_details", "thinking_tokens")}
}

// messagesBlock adds one finished content block to the answer.
func (a *answer) messagesBlock(b any, input string) {
	switch str(b, "type") {
	case "text":
		a.Text += str(b, "text")
	case "thinking":
		a.Reasoning += str(b, "thinking")
		if s := str(b, "signature"); s != "" {
			a.Signatures, a.SigFormat = append(a.Signatures, s), "messages"
		}
	case "redacted_thinking":
		a.Signatures, a.SigFormat = append(a.Signatures, str(b, "data")), "messages"
	case "tool_use":
		a.Calls = append(a.Calls, toolCall{ID: str(b, "id"), Name: str(b, "name"), Args: canonicalJSON(input)})
	}
}

func messagesWhole(b []byte) (answer, error) {
	v, err := decode(b)
	if err != nil {
		return answer{}, err
	}
	a := answer{Model: str(v, "model"), Usage: messagesUsage(get(v, "usage"))}
	for _, blk := range arr(v, "content") {
		a.messagesBlock(blk, canonicalValue(get(blk, "input")))
	}
	a.NativeStop = str(v, "stop_reason")
	a.Finish = messagesFinish[a.NativeStop]
	return a, nil
}

func messagesStream(b []byte) (answer, error) {
	var a answer
	blocks := map[int64]obj{}
	inputs := map[int64]string{}
	var u obj
	for _, f := range parseFrames(b) {
		v, err := decode([]byte(f.Data))
		if err != nil {
			return a, fmt.Errorf("event %q: %v", f.Data, err)
		}
		i := num(v, "index")
		switch str(v, "type") {
		case "message_start":
			a.Model = str(v, "message", "model")
			u, _ = get(v, "message", "usage").(obj)
		case "content_block_start":
			blocks[i], _ = get(v, "content_block").(obj)
		case "content_block_delta":
			d, blk := get(v, "delta"), blocks[i]
			switch str(d, "type") {
			case "text_delta":
				blk["text"] = str(blk, "text") + str(d, "text")
			case "thinking_delta":
				blk["thinking"] = str(blk, "thinking") + str(d, "thinking")
			case "signature_delta":
				blk["signature"] = str(blk, "signature") + str(d, "signature")
			case "input_json_delta":
				inputs[i] += str(d, "partial_json")
			}
		case "content_block_stop":
			a.messagesBlock(blocks[i], inputs[i])
			delete(blocks, i)
		case "message_delta":
			a.NativeStop = str(v, "delta", "stop_reason")
			a.Finish = messagesFinish[a.NativeStop]
			for k, x := range get(v, "usage").(obj) { // cumulative counts replace
				if u == nil {
					u = obj{}
				}
				u[k] = x
			}
		case "error":
			a.Err = &upstreamError{Message: str(v, "error", "message"), Code: str(v, "error", "type")}
		}
	}
	for i := int64(0); len(blocks) > 0; i++ { // blocks a failure left open still showed their text
		if b, ok := blocks[i]; ok {
			a.messagesBlock(b, inputs[i])
			delete(blocks, i)
		}
	}
	if u != nil {
		a.Usage = messagesUsage(u)
	}
	return a, nil
}

// responsesObject reads a whole Response object (a whole answer or a terminal event's).
func responsesObject(v any) answer {
	a := answer{Model: str(v, "model")}
	for _, it := range arr(v, "output") {
		switch str(it, "type") {
		case "message":
			for _, c := range arr(it, "content") {
				a.Text += str(c, "text")
			}
		case "reasoning":
			for _, s := range arr(it, "summary") {
				a.Reasoning += str(s, "text")
			}
			for _, c := range arr(it, "content") {
				a.Reasoning += str(c, "text")
			}
			if s := str(it, "encrypted_content"); s != "" {
				a.Signatures, a.SigFormat = append(a.Signatures, s), "responses"
			}
		case "function_call":
			a.Calls = append(a.Calls, toolCall{ID: str(it, "call_id"), Name: str(it, "name"), Args: canonicalJSON(str(it, "arguments"))})
		}
	}
	switch a.NativeStop = str(v, "status"); a.NativeStop {
	case "completed":
		a.Finish = "stop"
	case "incomplete":
		a.Finish = "length"
		if str(v, "incomplete_details", "reason") == "content_filter" {
			a.Finish = "content_filter"
		}
	case "failed":
		a.Err = &upstreamError{Message: str(v, "error", "message"), Code: str(v, "error", "code")}
	}
	if u := get(v, "usage"); u != nil {
		a.Usage = &usage{Input: num(u, "input_tokens"), CacheRead: num(u, "input_tokens_details", "cached_tokens"),
			CacheWrite: num(u, "input_tokens_details", "cache_write_tokens"), Output: num(u, "output_tokens"),
			Reasoning: num(u, "output_tokens_details", "reasoning_tokens")}
	}
	return a
}

// responsesStream keys everything by output_index: some endpoints change item_id on every
// event. Text and reasoning come from the deltas; calls, status and usage from the
// terminal event.
func responsesStream(b []byte) (answer, error) {
	var a answer
	var text, reasoning strings.Builder
	for _, f := range parseFrames(b) {
		v, err := decode([]byte(f.Data))
		if err != nil {
			return a, fmt.Errorf("event %q: %v", f.Data, err)
		}
		switch str(v, "type") {
		case "response.created":
			a.Model = str(v, "response", "model")
		case "response.output_text.delta":
			text.WriteString(str(v, "delta"))
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			reasoning.WriteString(str(v, "delta"))
		case "response.completed", "response.incomplete", "response.failed", "response.done":
			fin := responsesObject(get(v, "response"))
			fin.Text, fin.Reasoning = text.String(), reasoning.String()
			if a.Err != nil && fin.Err == nil {
				fin.Err = a.Err
			}
			return fin, nil
		case "error":
			a.Err = &upstreamError{Message: str(v, "error", "message"), Code: str(v, "error", "code")}
			if a.Err.Message == "" { // the documented flat shape
				a.Err = &upstreamError{Message: str(v, "message"), Code: str(v, "code")}
			}
		}
	}
	a.Text, a.Reasoning = text.String(), reasoning.String()
	return a, nil
}

var geminiFinish = map[string]string{"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter",
	"RECITATION": "content_filter", "BLOCKLIST": "content_filter", "PROHIBITED_CONTENT": "content_filter",
	"SPII": "content_filter", "IMAGE_SAFETY": "content_filter", "IMAGE_PROHIBITED_CONTENT": "content_filter",
	"IMAGE_RECITATION": "content_filter"}

// geminiAnswer reads a whole GenerateContentResponse or a stream of them (each holding
// only its new parts; the last usageMetadata counts).
func geminiAnswer(b []byte, stream bool) (answer, error) {
	var chunks []any
	if stream {
		for _, f := range parseFrames(b) {
			v, err := decode([]byte(f.Data))
			if err != nil {
				return answer{}, fmt.Errorf("chunk %q: %v", f.Data, err)
			}
			chunks = append(chunks, v)
		}
	} else {
		v, err := decode(b)
		if err != nil {
			return answer{}, err
		}
		chunks = []any{v}
	}
	var a answer
	var open *streamedCall // a call whose arguments stream as partialArgs
	for _, v := range chunks {
		if a.Model == "" {
			a.Model = str(v, "modelVersion")
		}
		if str(v, "promptFeedback", "blockReason") != "" {
			a.Finish = "content_filter"
		}
		if u := get(v, "usageMetadata"); u != nil {
			th := num(u, "thoughtsTokenCount")
			a.Usage = &usage{Input: num(u, "promptTokenCount") + num(u, "toolUsePromptTokenCount"),
				CacheRead: num(u, "cachedContentTokenCount"), Output: num(u, "candidatesTokenCount") + th, Reasoning: th}
		}
		for _, c := range arr(v, "candidates") {
			for _, p := range arr(c, "content", "parts") {
				sig := str(p, "thoughtSignature")
				switch fc := get(p, "functionCall"); {
				case fc != nil && (open != nil || get(fc, "willContinue") == true):
					open = open.add(fc, sig)
					if open.done {
						a.Calls = append(a.Calls, open.call())
						open = nil
					}
					continue
				case fc != nil:
					a.Calls = append(a.Calls, toolCall{ID: str(fc, "id"), Name: str(fc, "name"),
						Args: canonicalValue(orEmpty(get(fc, "args"))), Signature: sig})
					continue
				case get(p, "thought") == true:
					a.Reasoning += str(p, "text")
				default:
					a.Text += str(p, "text")
				}
				if sig != "" {
					a.Signatures, a.SigFormat = append(a.Signatures, sig), "gemini"
				}
			}
			if fr := str(c, "finishReason"); fr != "" {
				a.NativeStop = fr
				if a.Finish = geminiFinish[fr]; a.Finish == "" {
					a.Finish = "stop"
				}
			}
		}
	}
	return a, nil
}

func orEmpty(v any) any {
	if v == nil {
		return obj{}
	}
	return v
}

// streamedCall gathers a Gemini call streamed with streamFunctionCallArguments: the name
// first (willContinue), then partialArgs by JSON path, then an empty functionCall.
type streamedCall struct {
	toolCall
	args obj
	done bool
}

func (c *streamedCall) add(fc any, sig string) *streamedCall {
	if c == nil {
		c = &streamedCall{toolCall: toolCall{ID: str(fc, "id"), Name: str(fc, "name"), Signature: sig}, args: obj{}}
		if a, ok := get(fc, "args").(obj); ok {
			c.args = a
		}
		return c
	}
	for _, pa := range arr(fc, "partialArgs") {
		path := str(pa, "jsonPath")
		switch {
		case has(pa, "stringValue"): // a string's fragments share its path
			setAt(c.args, path, func(old any) any { s, _ := old.(string); return s + str(pa, "stringValue") })
		case has(pa, "numberValue"):
			setAt(c.args, path, func(any) any { return get(pa, "numberValue") })
		case has(pa, "boolValue"):
			setAt(c.args, path, func(any) any { return get(pa, "boolValue") })
		case has(pa, "nullValue"):
			setAt(c.args, path, func(any) any { return nil })
		}
		// No value at all: the piece only ends its path's string. (go-genai re-encodes an
		// empty stringValue this way: its StringValue is a plain string with omitempty.)
	}
	c.done = get(fc, "willContinue") != true && len(arr(fc, "partialArgs")) == 0
	return c
}

// setAt replaces the value at a JSON path of the simple shape $.a.b[0].c with f of the
// value there, making the objects and arrays on the way.
func setAt(root obj, path string, f func(old any) any) {
	var steps []any // string member names and int indexes
	for _, seg := range strings.Split(strings.TrimPrefix(path, "$."), ".") {
		name, idx, _ := strings.Cut(seg, "[")
		steps = append(steps, name)
		for idx != "" {
			n, rest, _ := strings.Cut(idx, "]")
			i, _ := strconv.Atoi(n)
			steps = append(steps, i)
			idx = strings.TrimPrefix(rest, "[")
		}
	}
	var walk func(v any, steps []any) any
	walk = func(v any, steps []any) any {
		if len(steps) == 0 {
			return f(v)
		}
		if i, ok := steps[0].(int); ok {
			a, _ := v.([]any)
			for len(a) <= i {
				a = append(a, nil)
			}
			a[i] = walk(a[i], steps[1:])
			return a
		}
		m, ok := v.(obj)
		if !ok {
			m = obj{}
		}
		m[steps[0].(string)] = walk(m[steps[0].(string)], steps[1:])
		return m
	}
	walk(root, steps)
}

func (c *streamedCall) call() toolCall {
	t := c.toolCall
	t.Args = canonicalValue(c.args)
	return t
}

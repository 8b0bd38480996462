package replay

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// The reference reader for Bedrock's Converse API: whole answers and ConverseStream events
// (messageStart, contentBlockStart, contentBlockDelta, contentBlockStop, messageStop,
// metadata, and exceptions by name).

var converseFinish = map[string]string{"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls",
	"max_tokens": "length", "model_context_window_exceeded": "length",
	"guardrail_intervened": "content_filter", "content_filtered": "content_filter"}

// converseUsage normalizes Converse usage: inputTokens leaves out the cache, as Anthropic's
// input_tokens does.
func converseUsage(u any) *usage {
	if u == nil {
		return nil
	}
	cr, cw := num(u, "cacheReadInputTokens"), num(u, "cacheWriteInputTokens")
	return &usage{Input: num(u, "inputTokens") + cr + cw, CacheRead: cr, CacheWrite: cw, Output: num(u, "outputTokens")}
}

// converseReasoning adds a reasoning block's parts: text, the signature, or redacted
// content. Redacted content is base64 of Anthropic's redacted_thinking data, which is what
// a client that can carry it gets; a signature is Anthropic's thinking signature.
// Claude signs its reasoning in Converse with the signatures it gives on every platform: they
// are the messages format's (codec/converse.SignatureFormat).
func (a *answer) converseReasoning(r any) {
	a.Reasoning += str(r, "text") + str(r, "reasoningText", "text")
	sig := str(r, "signature") + str(r, "reasoningText", "signature")
	if red := str(r, "redactedContent"); red != "" {
		data, err := base64.StdEncoding.DecodeString(red)
		if err != nil {
			data = []byte(red)
		}
		sig = string(data)
	}
	if sig != "" {
		a.Signatures, a.SigFormat = append(a.Signatures, sig), "messages"
	}
}

func converseWhole(b []byte) (answer, error) {
	v, err := decode(b)
	if err != nil {
		return answer{}, err
	}
	a := answer{Usage: converseUsage(get(v, "usage"))}
	for _, c := range arr(v, "output", "message", "content") {
		switch {
		case has(c, "text"):
			a.Text += str(c, "text")
		case has(c, "toolUse"):
			tu := get(c, "toolUse")
			a.Calls = append(a.Calls, toolCall{ID: str(tu, "toolUseId"), Name: str(tu, "name"), Args: canonicalValue(orEmpty(get(tu, "input")))})
		case has(c, "reasoningContent"):
			a.converseReasoning(get(c, "reasoningContent"))
		}
	}
	a.NativeStop = str(v, "stopReason")
	a.Finish = converseFinish[a.NativeStop]
	return a, nil
}

// converseStream reads ConverseStream events. A block's kind shows in its deltas (text and
// reasoning blocks have no contentBlockStart); a tool call is finished by its
// contentBlockStop, or by the end of the stream.
func converseStream(events []bedrockEvent) (answer, error) {
	var a answer
	type call struct {
		toolCall
		input strings.Builder
	}
	calls := map[int64]*call{}
	var order []int64
	finish := func(i int64) {
		if c := calls[i]; c != nil {
			c.Args = canonicalJSON(c.input.String())
			a.Calls = append(a.Calls, c.toolCall)
			delete(calls, i)
		}
	}
	for _, ev := range events {
		v, err := decode(ev.JSON)
		if err != nil {
			return a, fmt.Errorf("%s event %q: %v", ev.Type, ev.JSON, err)
		}
		if ev.Exception {
			a.Err = &upstreamError{Message: str(v, "message"), Code: ev.Type}
			break
		}
		i := num(v, "contentBlockIndex")
		switch ev.Type {
		case "contentBlockStart":
			if tu := get(v, "start", "toolUse"); tu != nil {
				calls[i] = &call{toolCall: toolCall{ID: str(tu, "toolUseId"), Name: str(tu, "name")}}
				order = append(order, i)
			}
		case "contentBlockDelta":
			d := get(v, "delta")
			switch {
			case has(d, "text"):
				a.Text += str(d, "text")
			case has(d, "toolUse") && calls[i] != nil:
				calls[i].input.WriteString(str(d, "toolUse", "input"))
			case has(d, "reasoningContent"):
				a.converseReasoning(get(d, "reasoningContent"))
			}
		case "contentBlockStop":
			finish(i)
		case "messageStop":
			a.NativeStop = str(v, "stopReason")
			a.Finish = converseFinish[a.NativeStop]
		case "metadata":
			a.Usage = converseUsage(get(v, "usage"))
		}
	}
	for _, i := range order { // calls a cut stream left open
		finish(i)
	}
	return a, nil
}

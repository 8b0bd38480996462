package converse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

func (w *wireUsage) normalize() codec.Usage {
	if w == nil {
		return codec.Usage{}
	}
	return codec.Usage{Input: w.InputTokens, CacheRead: w.CacheReadInputTokens,
		CacheWrite: w.CacheWriteInputTokens, Output: w.OutputTokens}
}

// stopFrom maps a stopReason; any tool call makes an end-like stop tool_use. A guardrail or
// a content filter that stopped the answer is the IR's content filter; a malformed output
// ends the answer as it is.
func stopFrom(reason string, sawTool bool) ir.StopReason {
	var s ir.StopReason
	switch reason {
	case "max_tokens", "model_context_window_exceeded":
		s = ir.StopLength
	case "stop_sequence":
		s = ir.StopSequence
	case "tool_use":
		s = ir.StopToolUse
	case "guardrail_intervened", "content_filtered":
		s = ir.StopContentFilter
	default: // end_turn, malformed_model_output, malformed_tool_use
		s = ir.StopEnd
	}
	if sawTool && (s == ir.StopEnd || s == ir.StopSequence) {
		return ir.StopToolUse
	}
	return s
}

// matchedSequence is Claude's stop_sequence from additionalModelResponseFields, which the
// encoder asks for when the request has stop sequences ("" if absent).
func matchedSequence(fields []byte) string {
	at, ok := jsonscan.Member(fields, "stop_sequence")
	if !ok {
		return ""
	}
	var s string
	json.Unmarshal(fields[at.Start:at.End], &s)
	return s
}

// DecodeResponse reads a whole 2xx Converse answer: output.message.content in order (text,
// reasoning, tool calls; citationsContent as its text), stopReason, usage. Converse answers
// carry no id and no model: the client's encoder mints the id and names the client's model.
func (format) DecodeResponse(body []byte) (*ir.Response, error) {
	var w response
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("converse: undecodable answer: %w", err)
	}
	if w.Output == nil || w.Output.Message == nil {
		return nil, errors.New("converse: the answer has no output.message")
	}
	r := &ir.Response{Usage: w.Usage.normalize()}
	sawTool := false
	for _, b := range w.Output.Message.Content {
		switch {
		case b.Text != nil:
			if *b.Text != "" {
				r.Parts = append(r.Parts, ir.Part{Kind: ir.PartText, Text: *b.Text})
			}
		case b.CitationsContent != nil:
			for _, c := range b.CitationsContent.Content {
				if c.Text != "" {
					r.Parts = append(r.Parts, ir.Part{Kind: ir.PartText, Text: c.Text})
				}
			}
		case b.ReasoningContent != nil:
			if p, ok := reasoningPart(b.ReasoningContent); ok {
				r.Parts = append(r.Parts, p)
			}
		case b.ToolUse != nil:
			sawTool = true
			args, ok := compactObject(b.ToolUse.Input)
			if !ok {
				args = "{}"
			}
			r.Parts = append(r.Parts, ir.Part{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{
				ID: b.ToolUse.ToolUseID, Name: b.ToolUse.Name, Arguments: args}})
		}
	}
	r.Stop = stopFrom(w.StopReason, sawTool)
	if r.Stop == ir.StopSequence {
		r.StopSequence = matchedSequence(w.AdditionalModelResponseFields)
	}
	return r, nil
}

func reasoningPart(rc *reasoningContent) (ir.Part, bool) {
	switch {
	case rc.RedactedContent != "":
		return ir.Part{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Redacted: redactedData(rc.RedactedContent), SignatureFormat: SignatureFormat}}, true
	case rc.ReasoningText != nil && (rc.ReasoningText.Text != "" || rc.ReasoningText.Signature != ""):
		return ir.Part{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Text: rc.ReasoningText.Text,
			Signature: rc.ReasoningText.Signature, SignatureFormat: SignatureFormat}}, true
	}
	return ir.Part{}, false
}

// compactObject is a toolUse input as arguments text: a JSON object compacted, null or
// absent as {}; anything else is not (ok false).
func compactObject(raw json.RawMessage) (string, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return "{}", true
	}
	if t[0] != '{' {
		return "", false
	}
	var b bytes.Buffer
	if json.Compact(&b, t) != nil {
		return "", false
	}
	return b.String(), true
}

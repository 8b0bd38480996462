package messages

import (
	"encoding/base64"
	"encoding/json"
	"sort"
	"strings"

	"github.com/modelgate/modelgate/codec/claude"
	"github.com/modelgate/modelgate/codec/ir"
)

// outBlock is a content block as this package writes it, in requests and answers.
type outBlock struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text,omitempty"`
	Source       *outSource      `json:"source,omitempty"`
	Title        string          `json:"title,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      any             `json:"content,omitempty"` // string or []outBlock
	IsError      bool            `json:"is_error,omitempty"`
	Thinking     *string         `json:"thinking,omitempty"`
	Signature    *string         `json:"signature,omitempty"`
	Data         string          `json:"data,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

type outSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type outMessage struct {
	Role    string     `json:"role"`
	Content []outBlock `json:"content"`
}

func textBlock(s string, cc json.RawMessage) outBlock {
	return outBlock{Type: "text", Text: &s, CacheControl: cc}
}

// defaultMaxTokens is max_tokens when the gateway did not fill it (the format requires one).
const defaultMaxTokens = 4096

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// customSchema declares a free-form (custom) tool as a function of one string, as the chat
// codec does.
var customSchema = json.RawMessage(`{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`)

// EncodeRequest renders r for a messages route (docs/conversion.md). Extra is re-emitted as it
// is: the gateway hands an encoder only Extra that came from a client of the same format.
func (format) EncodeRequest(r *ir.Request, upstreamModel string, loss *ir.Loss) ([]byte, error) {
	out := map[string]any{}
	for k, v := range r.Extra {
		switch {
		case strings.HasPrefix(k, extraBlocks):
			loss.Drop(k)
		case strings.HasPrefix(k, extraTools), k == "output_config": // merged below
		default:
			out[k] = v
		}
	}
	out["model"] = upstreamModel
	system, msgs := encodeMessages(r.Messages, loss)
	if len(msgs) == 0 {
		return nil, bad("messages", "nothing to send: every message was empty after conversion")
	}
	if len(system) > 0 {
		out["system"] = system
	}
	out["messages"] = msgs

	plan := claude.PlanThinking(r.Thinking)
	if plan.On() && !toolLoopHasThinking(msgs) {
		// A tool loop whose assistant turn has no thinking block (it came from another
		// model) cannot continue with thinking on: the API wants that turn to start with one.
		loss.Drop("thinking")
		plan = claude.Plan{}
	}
	thinking := plan.Thinking
	if thinking != nil {
		out["thinking"] = thinking
	}
	maxTokens := r.MaxTokens
	if maxTokens <= 0 {
		maxTokens = defaultMaxTokens
	}
	out["max_tokens"] = plan.MaxTokens(maxTokens)
	if oc := outputConfig(r, plan.Effort, loss); oc != nil {
		out["output_config"] = oc
	}

	if t := r.Temperature; t != nil {
		v := min(max(*t, 0), 1)
		switch {
		case thinking != nil && v != 1:
			loss.Drop("temperature")
		default:
			if v != *t {
				loss.Drop("temperature")
			}
			out["temperature"] = v
		}
	}
	if r.TopP != nil {
		if thinking != nil && *r.TopP < 0.95 {
			loss.Drop("top_p")
		} else {
			out["top_p"] = *r.TopP
		}
	}
	if r.TopK != nil {
		if thinking != nil {
			loss.Drop("top_k")
		} else {
			out["top_k"] = *r.TopK
		}
	}
	if len(r.Stop) > 0 {
		out["stop_sequences"] = r.Stop
	}
	if r.Stream {
		out["stream"] = true
	}

	tools := encodeTools(r, loss)
	if len(tools) > 0 {
		out["tools"] = tools
		if tc := encodeToolChoice(r.ToolChoice, r.Parallel, thinking != nil, loss); tc != nil {
			out["tool_choice"] = tc
		}
	}
	if meta := metadata(r); meta != nil {
		out["metadata"] = meta
	}
	if r.PreviousResponseID != "" {
		loss.Drop("previous_response_id")
	}
	return marshal(out), nil
}

// encodeMessages hoists system messages and turns the rest into alternating turns: tool
// results and user content merge into one user turn with the results first, consecutive
// same-role turns merge, and turns left empty are skipped.
func encodeMessages(in []ir.Message, loss *ir.Loss) ([]outBlock, []outMessage) {
	var system []outBlock
	var msgs []outMessage
	begun := false // a turn other than system came already
	for _, m := range in {
		if m.Name != "" {
			loss.Drop("messages[].name")
		}
		switch m.Role {
		case ir.RoleSystem:
			if begun {
				loss.Drop(ir.LossSystemPosition)
			}
			for _, p := range m.Parts {
				if p.Kind != ir.PartText {
					loss.Drop("system.content")
				} else if strings.TrimSpace(p.Text) != "" {
					system = append(system, textBlock(p.Text, p.CacheControl))
				}
			}
			continue
		case ir.RoleAssistant:
			begun = true
			msgs = appendTurn(msgs, "assistant", assistantBlocks(m.Parts, loss))
		default: // user and tool
			begun = true
			msgs = appendTurn(msgs, "user", userBlocks(m.Parts, loss))
		}
	}
	return system, msgs
}

func appendTurn(msgs []outMessage, role string, blocks []outBlock) []outMessage {
	if len(blocks) == 0 {
		return msgs
	}
	n := len(msgs)
	if n == 0 || msgs[n-1].Role != role {
		return append(msgs, outMessage{Role: role, Content: blocks})
	}
	merged := append(msgs[n-1].Content, blocks...)
	if role == "user" { // tool_result blocks come first in a user turn
		sort.SliceStable(merged, func(i, j int) bool {
			return merged[i].Type == "tool_result" && merged[j].Type != "tool_result"
		})
	}
	msgs[n-1].Content = merged
	return msgs
}

func userBlocks(parts []ir.Part, loss *ir.Loss) []outBlock {
	var blocks []outBlock
	for _, p := range parts {
		switch p.Kind {
		case ir.PartToolResult:
			blocks = append(blocks, toolResultBlock(p, loss))
		case ir.PartText, ir.PartImage, ir.PartFile:
			if b, ok := contentBlock(p, loss); ok {
				blocks = append(blocks, b)
			}
		default:
			loss.Drop("messages[].content")
		}
	}
	sort.SliceStable(blocks, func(i, j int) bool {
		return blocks[i].Type == "tool_result" && blocks[j].Type != "tool_result"
	})
	return blocks
}

func assistantBlocks(parts []ir.Part, loss *ir.Loss) []outBlock {
	var blocks []outBlock
	for _, p := range parts {
		switch p.Kind {
		case ir.PartReasoning:
			if b, ok := historyThinking(p.Reasoning); ok {
				blocks = append(blocks, b)
			} else {
				loss.Drop("messages[].reasoning")
			}
		case ir.PartToolCall:
			c := p.ToolCall
			input, ok := objectArgs(c.Arguments)
			if !ok {
				loss.Drop("messages[].tool_calls[].arguments")
			}
			blocks = append(blocks, outBlock{Type: "tool_use", ID: sanitizeID(c.ID), Name: c.Name,
				Input: input, CacheControl: p.CacheControl})
		case ir.PartText:
			if b, ok := contentBlock(p, loss); ok {
				blocks = append(blocks, b)
			}
		default:
			loss.Drop("messages[].content")
		}
	}
	return blocks
}

// historyThinking sends back reasoning this format issued, as it was; other reasoning has
// no valid signature for a messages upstream.
func historyThinking(r *ir.Reasoning) (outBlock, bool) {
	if r.SignatureFormat != SignatureFormat {
		return outBlock{}, false
	}
	if r.Redacted != "" {
		return outBlock{Type: "redacted_thinking", Data: r.Redacted}, true
	}
	if r.Signature == "" {
		return outBlock{}, false
	}
	text, sig := r.Text, r.Signature
	return outBlock{Type: "thinking", Thinking: &text, Signature: &sig}, true
}

// contentBlock renders text, image and file parts; empty text is dropped (the API rejects it).
func contentBlock(p ir.Part, loss *ir.Loss) (outBlock, bool) {
	switch p.Kind {
	case ir.PartText:
		if strings.TrimSpace(p.Text) == "" {
			return outBlock{}, false
		}
		return textBlock(p.Text, p.CacheControl), true
	case ir.PartImage:
		img := p.Image
		if img.Detail != "" {
			loss.Drop("messages[].image.detail")
		}
		src := &outSource{Type: "url", URL: img.URL}
		if img.Data != "" {
			src = &outSource{Type: "base64", MediaType: img.MediaType, Data: img.Data}
		}
		return outBlock{Type: "image", Source: src, CacheControl: p.CacheControl}, true
	case ir.PartFile:
		src, ok := documentSource(p.File)
		if !ok {
			loss.Drop("messages[].file")
			return outBlock{}, false
		}
		return outBlock{Type: "document", Source: src, Title: p.File.Name, CacheControl: p.CacheControl}, true
	}
	loss.Drop("messages[].content")
	return outBlock{}, false
}

// documentSource: PDFs as base64 or URL, plain text as a text source; nothing else (audio,
// office files) is a document the messages API reads.
func documentSource(f *ir.File) (*outSource, bool) {
	switch {
	case f.MediaType == "text/plain" && f.Data != "":
		text, err := base64.StdEncoding.DecodeString(f.Data)
		if err != nil {
			return nil, false
		}
		return &outSource{Type: "text", MediaType: "text/plain", Data: string(text)}, true
	case f.MediaType != "application/pdf" && f.MediaType != "":
		return nil, false
	case f.Data != "":
		return &outSource{Type: "base64", MediaType: "application/pdf", Data: f.Data}, true
	case f.URL != "":
		return &outSource{Type: "url", URL: f.URL}, true
	}
	return nil, false
}

func toolResultBlock(p ir.Part, loss *ir.Loss) outBlock {
	res := p.ToolResult
	b := outBlock{Type: "tool_result", ToolUseID: sanitizeID(res.CallID), IsError: res.IsError, CacheControl: p.CacheControl}
	c := res.Content
	if len(c) == 1 && c[0].Kind == ir.PartText && c[0].CacheControl == nil {
		if strings.TrimSpace(c[0].Text) != "" {
			b.Content = c[0].Text
		}
		return b
	}
	var blocks []outBlock
	for _, part := range c {
		switch part.Kind {
		case ir.PartText, ir.PartImage, ir.PartFile:
			if cb, ok := contentBlock(part, loss); ok {
				blocks = append(blocks, cb)
			}
		default:
			loss.Drop("messages[].tool_result.content")
		}
	}
	if len(blocks) > 0 {
		b.Content = blocks
	}
	return b
}

// encodeTools renders function tools (merging back per-tool members a messages client sent)
// and then the server tools it sent, by type name order.
func encodeTools(r *ir.Request, loss *ir.Loss) []any {
	allowed := map[string]bool{}
	for _, n := range r.ToolChoice.Allowed {
		allowed[n] = true
	}
	perField := map[string]map[string]json.RawMessage{}
	var serverTypes []string
	for k, v := range r.Extra {
		name, ok := strings.CutPrefix(k, extraTools)
		if !ok {
			continue
		}
		var byTool map[string]json.RawMessage
		if json.Unmarshal(v, &byTool) == nil {
			perField[name] = byTool
		} else {
			serverTypes = append(serverTypes, k)
		}
	}
	sort.Strings(serverTypes)
	var tools []any
	for _, t := range r.Tools {
		if len(allowed) > 0 && !allowed[t.Name] {
			continue
		}
		schema := t.Parameters
		if isNull(schema) {
			schema = emptySchema
			if t.Custom {
				schema = customSchema
			}
		}
		m := map[string]any{"name": t.Name, "input_schema": schema}
		if t.Description != "" {
			m["description"] = t.Description
		}
		if t.Deferred {
			m["defer_loading"] = true
		}
		if t.Strict != nil {
			m["strict"] = *t.Strict
		}
		for field, byTool := range perField {
			if v, ok := byTool[t.Name]; ok {
				m[field] = v
			}
		}
		tools = append(tools, m)
	}
	for _, k := range serverTypes {
		var list []json.RawMessage
		if json.Unmarshal(r.Extra[k], &list) != nil {
			loss.Drop(k)
			continue
		}
		for _, raw := range list {
			tools = append(tools, raw)
		}
	}
	return tools
}

// encodeToolChoice maps the mode (required → any, named → tool), carries parallel=false as
// disable_parallel_tool_use, and degrades a forced choice to auto when thinking is on.
func encodeToolChoice(tc ir.ToolChoice, parallel *bool, thinking bool, loss *ir.Loss) map[string]any {
	mode := tc.Mode
	if thinking && (mode == ir.ToolRequired || mode == ir.ToolNamed) {
		loss.Drop("tool_choice")
		mode = ir.ToolAuto
	}
	noParallel := parallel != nil && !*parallel
	var out map[string]any
	switch mode {
	case ir.ToolNone:
		return map[string]any{"type": "none"}
	case ir.ToolRequired:
		out = map[string]any{"type": "any"}
	case ir.ToolNamed:
		out = map[string]any{"type": "tool", "name": tc.Name}
	case ir.ToolAuto:
		out = map[string]any{"type": "auto"}
	default:
		if !noParallel {
			return nil
		}
		out = map[string]any{"type": "auto"}
	}
	if noParallel {
		out["disable_parallel_tool_use"] = true
	}
	return out
}

// metadata is the client's metadata members (from a messages client) plus user_id.
func metadata(r *ir.Request) map[string]json.RawMessage {
	var meta map[string]json.RawMessage
	if raw, ok := r.Extra["metadata"]; ok {
		json.Unmarshal(raw, &meta)
	}
	if r.User != "" {
		if meta == nil {
			meta = map[string]json.RawMessage{}
		}
		meta["user_id"] = marshal(r.User)
	}
	return meta
}

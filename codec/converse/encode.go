package converse

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/claude"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

// EncodeRequest renders r as a Converse body (docs/conversion.md). The model is in the path.
// Extra only ever comes from a client of another format (no client speaks converse), so each
// of its members is reported and dropped.
func (format) EncodeRequest(r *ir.Request, upstreamModel string, loss *ir.Loss) ([]byte, error) {
	fam := familyOf(upstreamModel)
	for k := range r.Extra {
		loss.Drop(k)
	}
	enc := encoder{fam: fam, loss: loss}
	system, msgs := enc.messages(r.Messages)
	if len(msgs) == 0 {
		return nil, check.Bad("messages", "nothing to send: every message was empty after conversion")
	}
	out := request{Messages: msgs, System: system}

	plan := claude.PlanThinking(r.Thinking)
	if plan.On() && !fam.anthropic {
		loss.Drop("thinking") // only Claude's thinking has a Converse spelling here
		plan = claude.Plan{}
	}
	if plan.On() && !toolLoopHasThinking(msgs) {
		// A tool loop whose assistant turn has no reasoning block (it came from another
		// model) cannot continue with thinking on: Claude wants that turn to start with one.
		loss.Drop("thinking")
		plan = claude.Plan{}
	}
	extra := map[string]any{}
	writeThinking(plan, extra)
	out.InferenceConfig = inference(r, plan, fam, extra, loss)
	if len(r.Stop) > 0 && fam.anthropic {
		// Converse does not say which sequence stopped the answer; Claude's own field does.
		out.AdditionalModelResponseFieldPaths = []string{"/stop_sequence"}
	}
	out.ToolConfig = enc.tools(r, plan.On(), hasToolBlocks(msgs))
	out.OutputConfig = structuredOutput(r.ResponseFormat, loss)
	if len(extra) > 0 {
		out.AdditionalModelRequestFields = extra
	}
	if r.Parallel != nil && !*r.Parallel && out.ToolConfig != nil {
		loss.Drop("parallel_tool_calls") // Converse has no switch for it
	}
	if r.User != "" {
		loss.Drop("user")
	}
	if r.PreviousResponseID != "" {
		loss.Drop("previous_response_id")
	}
	return marshal(out), nil
}

// encoder renders IR messages for one route's model family.
type encoder struct {
	fam  family
	loss *ir.Loss
	docs map[string]bool // document names given so far: Converse wants them unique
}

// item is one content block as it is built: a cache point, if any, follows it wherever the
// block goes (tool results move to the front of a user turn).
type item struct {
	b      block
	cache  *cachePoint
	result bool
}

type turn struct {
	role  string
	items []item
}

// messages hoists system messages into system and turns the rest into alternating user and
// assistant turns: consecutive same-role turns merge (tool results first in a user turn), and
// turns left empty are skipped.
func (e *encoder) messages(in []ir.Message) ([]block, []message) {
	var system []item
	var turns []turn
	begun := false // a turn other than system came already
	for _, m := range in {
		if m.Name != "" {
			e.loss.Drop("messages[].name")
		}
		switch m.Role {
		case ir.RoleSystem:
			if begun {
				e.loss.Drop(ir.LossSystemPosition)
			}
			for _, p := range m.Parts {
				switch {
				case p.Kind != ir.PartText:
					e.loss.Drop("system.content")
				case strings.TrimSpace(p.Text) != "":
					system = append(system, item{b: textBlock(p.Text), cache: e.cachePoint(p.CacheControl)})
				}
			}
			continue
		case ir.RoleAssistant:
			begun = true
			turns = appendTurn(turns, "assistant", e.assistantItems(m.Parts))
		default: // user and tool
			begun = true
			turns = appendTurn(turns, "user", e.userItems(m.Parts))
		}
	}
	msgs := make([]message, 0, len(turns))
	for _, t := range turns {
		msgs = append(msgs, message{Role: t.role, Content: flatten(t.items)})
	}
	return flatten(system), msgs
}

func appendTurn(turns []turn, role string, items []item) []turn {
	if len(items) == 0 {
		return turns
	}
	n := len(turns)
	if n == 0 || turns[n-1].role != role {
		return append(turns, turn{role: role, items: resultsFirst(items)})
	}
	turns[n-1].items = resultsFirst(append(turns[n-1].items, items...))
	return turns
}

// resultsFirst puts a user turn's tool results before its other content, as Claude wants.
func resultsFirst(items []item) []item {
	sort.SliceStable(items, func(i, j int) bool { return items[i].result && !items[j].result })
	return items
}

func flatten(items []item) []block {
	out := make([]block, 0, len(items))
	for _, it := range items {
		out = append(out, it.b)
		if it.cache != nil {
			out = append(out, block{CachePoint: it.cache})
		}
	}
	return out
}

func (e *encoder) userItems(parts []ir.Part) []item {
	var items []item
	for _, p := range parts {
		switch p.Kind {
		case ir.PartToolResult:
			if p.ToolResult != nil {
				items = append(items, item{b: e.toolResult(p.ToolResult), cache: e.cachePoint(p.CacheControl), result: true})
			}
		case ir.PartText, ir.PartImage, ir.PartFile:
			if b, ok := e.content(p); ok {
				items = append(items, item{b: b, cache: e.cachePoint(p.CacheControl)})
			}
		default:
			e.loss.Drop("messages[].content")
		}
	}
	return items
}

func (e *encoder) assistantItems(parts []ir.Part) []item {
	var items []item
	for _, p := range parts {
		switch p.Kind {
		case ir.PartReasoning:
			if b, ok := e.reasoning(p.Reasoning); ok {
				items = append(items, item{b: b})
			}
		case ir.PartToolCall:
			if c := p.ToolCall; c != nil {
				items = append(items, item{b: e.toolUse(c), cache: e.cachePoint(p.CacheControl)})
			}
		case ir.PartText:
			if b, ok := e.content(p); ok {
				items = append(items, item{b: b, cache: e.cachePoint(p.CacheControl)})
			}
		default:
			e.loss.Drop("messages[].content")
		}
	}
	return items
}

// reasoning sends Claude's signed reasoning back to a Claude model, as it came: signed text,
// or redacted content. Its own unsigned reasoning (DeepSeek-R1's, say) is not model input and is left out,
// as the model's provider asks; reasoning another format issued has no signature Bedrock
// would accept and is reported.
func (e *encoder) reasoning(r *ir.Reasoning) (block, bool) {
	if r == nil {
		return block{}, false
	}
	if r.SignatureFormat != SignatureFormat || !e.fam.anthropic {
		if r.Text != "" || r.Signature != "" || r.Redacted != "" || r.Encrypted != "" {
			e.loss.Drop("messages[].reasoning")
		}
		return block{}, false
	}
	switch {
	case r.Redacted != "":
		return block{ReasoningContent: &reasoningContent{RedactedContent: redactedBlob(r.Redacted)}}, true
	case r.Signature != "":
		return block{ReasoningContent: &reasoningContent{ReasoningText: &reasoningText{Text: r.Text, Signature: r.Signature}}}, true
	}
	return block{}, false
}

func (e *encoder) toolUse(c *ir.ToolCall) block {
	input, ok := objectArgs(c.Arguments)
	if !ok {
		e.loss.Drop("messages[].tool_calls[].arguments")
	}
	return block{ToolUse: &toolUse{ToolUseID: toolUseID(c.ID), Name: c.Name, Input: input}}
}

// toolResult renders a result's text, images and documents. Converse has no place for an
// error flag but on Claude and Nova (status), where it is sent; elsewhere it is reported.
func (e *encoder) toolResult(res *ir.ToolResult) block {
	tr := &toolResult{ToolUseID: toolUseID(res.CallID), Content: []block{}}
	if res.IsError {
		if e.fam.caching {
			tr.Status = "error"
		} else {
			e.loss.Drop("messages[].tool_result.is_error")
		}
	}
	for _, p := range res.Content {
		if p.CacheControl != nil {
			e.loss.Drop("messages[].tool_result.cache_control") // a cache point cannot sit inside a result
		}
		switch p.Kind {
		case ir.PartText, ir.PartImage, ir.PartFile:
			if b, ok := e.content(p); ok {
				tr.Content = append(tr.Content, b)
			}
		default:
			e.loss.Drop("messages[].tool_result.content")
		}
	}
	return block{ToolResult: tr}
}

// content renders text, image and file parts; blank text is left out (Converse refuses it).
func (e *encoder) content(p ir.Part) (block, bool) {
	switch p.Kind {
	case ir.PartText:
		if strings.TrimSpace(p.Text) == "" {
			return block{}, false
		}
		return textBlock(p.Text), true
	case ir.PartImage:
		if p.Image == nil {
			return block{}, false
		}
		return e.image(p.Image)
	case ir.PartFile:
		if p.File == nil {
			return block{}, false
		}
		return e.file(p.File)
	}
	e.loss.Drop("messages[].content")
	return block{}, false
}

// cachePoint is the Converse cache point for a messages cache_control marker
// ({"type":"ephemeral","ttl"?}): it follows the block the marker was on, which ends the cached
// prefix in both formats. Models without prompt caching on Bedrock get none, reported.
func (e *encoder) cachePoint(cc json.RawMessage) *cachePoint {
	if len(bytes.TrimSpace(cc)) == 0 || bytes.Equal(bytes.TrimSpace(cc), []byte("null")) {
		return nil
	}
	var m struct {
		Type string `json:"type"`
		TTL  string `json:"ttl"`
	}
	if !e.fam.caching || json.Unmarshal(cc, &m) != nil || m.Type != "ephemeral" {
		e.loss.Drop("messages[].cache_control")
		return nil
	}
	switch m.TTL {
	case "", "5m", "1h":
	default:
		e.loss.Drop("messages[].cache_control.ttl")
		m.TTL = ""
	}
	return &cachePoint{Type: "default", TTL: m.TTL}
}

// maxToolUseID is the longest toolUseId Converse takes.
const maxToolUseID = 64

// toolUseID makes a tool-call id valid for Converse (^[a-zA-Z0-9_-]+$, at most 64
// characters) the same way every time, so a toolUse and its toolResult keep matching: other
// bytes become '_', and a longer id keeps its head and a hash of the whole.
func toolUseID(id string) string {
	if id == "" {
		id = "call"
	}
	b := []byte(id)
	for i, c := range b {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	if len(b) <= maxToolUseID {
		return string(b)
	}
	sum := sha256.Sum256([]byte(id))
	h := hex.EncodeToString(sum[:8])
	return string(b[:maxToolUseID-len(h)-1]) + "_" + h
}

// objectArgs turns tool-call arguments text into the toolUse input object: blank arguments
// are {}; anything that is not a JSON object is {} too (ok false).
func objectArgs(args string) (json.RawMessage, bool) {
	t := bytes.TrimSpace([]byte(args))
	if len(t) == 0 {
		return json.RawMessage("{}"), true
	}
	if t[0] != '{' || !jsonscan.Valid(t) {
		return json.RawMessage("{}"), false
	}
	return jsonscan.Compact(t), true
}

// hasToolBlocks reports a toolUse or toolResult anywhere in the conversation: Converse then
// wants a toolConfig, even on a turn that offers no tool.
func hasToolBlocks(msgs []message) bool {
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.ToolUse != nil || b.ToolResult != nil {
				return true
			}
		}
	}
	return false
}

// toolLoopHasThinking reports whether thinking may stay on: false when the conversation is in
// a tool loop (the last assistant turn called tools and the next user turn answers them) and
// that assistant turn does not start with a reasoning block.
func toolLoopHasThinking(msgs []message) bool {
	a := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" {
			a = i
			break
		}
	}
	if a < 0 || a == len(msgs)-1 || msgs[a+1].Content[0].ToolResult == nil {
		return true
	}
	if msgs[a].Content[0].ReasoningContent != nil {
		return true
	}
	for _, b := range msgs[a].Content {
		if b.ToolUse != nil {
			return false
		}
	}
	return true
}

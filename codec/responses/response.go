package responses

import (
	"encoding/json"
	"strings"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

// wireUsage is the Responses usage object: input_tokens includes cached and cache-write
// tokens, output_tokens includes reasoning tokens (a provider that counts them beside it says
// so in total_tokens: codec.VisibleOutput).
type wireUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens     int64 `json:"cached_tokens"`
		CacheWriteTokens int64 `json:"cache_write_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int64 `json:"total_tokens"`
}

func (w wireUsage) normalize() codec.Usage {
	return codec.InclusiveUsage(w.InputTokens, w.InputTokensDetails.CachedTokens, w.InputTokensDetails.CacheWriteTokens,
		w.OutputTokens, w.OutputTokensDetails.ReasoningTokens, w.TotalTokens)
}

func usageOf(u codec.Usage) *wireUsage {
	w := &wireUsage{
		InputTokens:  u.Input + u.CacheRead + u.CacheWrite,
		OutputTokens: u.Output + u.Reasoning,
	}
	w.InputTokensDetails.CachedTokens = u.CacheRead
	w.InputTokensDetails.CacheWriteTokens = u.CacheWrite
	w.OutputTokensDetails.ReasoningTokens = u.Reasoning
	w.TotalTokens = w.InputTokens + w.OutputTokens
	return w
}

// Output items as this package writes them (field order as OpenAI's).

type outputText struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs"`
}

func newOutputText(text string) outputText {
	return outputText{Type: "output_text", Text: text, Annotations: []any{}, Logprobs: []any{}}
}

type messageItem struct {
	ID      string       `json:"id"`
	Type    string       `json:"type"`
	Status  string       `json:"status"`
	Role    string       `json:"role"`
	Content []outputText `json:"content"`
}

type reasoningItem struct {
	ID               string     `json:"id"`
	Type             string     `json:"type"`
	Summary          []wireText `json:"summary"`
	EncryptedContent string     `json:"encrypted_content,omitempty"`
}

type functionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type customCallItem struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	Input  string `json:"input"`
}

type incompleteDetails struct {
	Reason string `json:"reason"`
}

type responseErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type reasoningConfig struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

// wireResponse is the Response object with every property the spec requires.
type wireResponse struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	CreatedAt         int64              `json:"created_at"`
	Status            string             `json:"status"`
	CompletedAt       *int64             `json:"completed_at"`
	Error             *responseErrorBody `json:"error"`
	IncompleteDetails *incompleteDetails `json:"incomplete_details"`
	Instructions      *string            `json:"instructions"`
	MaxOutputTokens   *int               `json:"max_output_tokens"`
	Model             string             `json:"model"`
	Output            []any              `json:"output"`
	responseEcho                         // parallel_tool_calls … truncation
	Usage             *wireUsage         `json:"usage,omitempty"` // not nullable: absent until known
	Metadata          json.RawMessage    `json:"metadata"`
}

// The defaults of a response's text and metadata, shared by every response (never written:
// a request's own replace them).
var (
	defaultText = map[string]any{"format": json.RawMessage(`{"type":"text"}`)}
	emptyObject = json.RawMessage(`{}`)
)

// newWireResponse fills the echoed request fields from req (nil: the API's defaults). The
// gateway keeps no responses, so store is false; instructions are not echoed (IR does not say
// which system messages were instructions).
func newWireResponse(id, model string, created int64, req *ir.Request) *wireResponse {
	w := &wireResponse{
		ID: id, Object: "response", CreatedAt: created, Status: "in_progress", Model: model,
		Output: []any{}, Metadata: emptyObject,
		responseEcho: responseEcho{ParallelToolCalls: true, Temperature: 1, TopP: 1, Text: defaultText,
			ToolChoice: "auto", Tools: []json.RawMessage{}, Truncation: "disabled"},
	}
	if req == nil {
		return w
	}
	if req.MaxTokens > 0 {
		n := req.MaxTokens
		w.MaxOutputTokens = &n
	}
	if req.Parallel != nil {
		w.ParallelToolCalls = *req.Parallel
	}
	if req.PreviousResponseID != "" {
		s := req.PreviousResponseID
		w.PreviousResponseID = &s
	}
	if req.Thinking.Effort != "" {
		s := req.Thinking.Effort
		w.Reasoning.Effort = &s
	}
	if req.Thinking.Summary != "" {
		s := req.Thinking.Summary
		w.Reasoning.Summary = &s
	}
	if req.Temperature != nil {
		w.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		w.TopP = *req.TopP
	}
	if t := encodeText(req); t != nil {
		if _, ok := t["format"]; !ok {
			t["format"] = w.Text["format"]
		}
		w.Text = t
	}
	tools, kinds := encodeTools(req, nil)
	w.Tools = tools
	if tc := encodeToolChoice(req, kinds, nil); tc != nil {
		w.ToolChoice = tc
	}
	if raw, ok := req.Extra["metadata"]; ok && strings.HasPrefix(strings.TrimSpace(string(raw)), "{") {
		w.Metadata = raw
	}
	return w
}

// finish sets the terminal status from the stop reason: a tool call completes the answer,
// unless the token cap cut it (its arguments are then incomplete, and no call to run).
func (w *wireResponse) finish(stop ir.StopReason, toolCalled bool, usage codec.Usage) {
	w.Usage = usageOf(usage)
	switch {
	case stop == ir.StopLength:
		w.Status = "incomplete"
		w.IncompleteDetails = &incompleteDetails{"max_output_tokens"}
	case stop == ir.StopContentFilter && !toolCalled:
		w.Status = "incomplete"
		w.IncompleteDetails = &incompleteDetails{"content_filter"}
	default:
		w.Status = "completed"
		t := now().Unix()
		w.CompletedAt = &t
	}
}

// EncodeResponse renders a whole answer. Without the request it cannot tell custom tools from
// functions (every call is a function_call) and echoes the API's default parameters; the
// gateway can call EncodeResponseFor instead.
func (f format) EncodeResponse(r *ir.Response, model string) []byte {
	return f.EncodeResponseFor(r, nil, model)
}

// EncodeResponseFor renders a whole answer to req (which may be nil): calls of req's custom
// tools become custom_tool_call items and req's parameters are echoed.
func (format) EncodeResponseFor(r *ir.Response, req *ir.Request, model string) []byte {
	created := r.Created
	if created == 0 {
		created = now().Unix()
	}
	w := newWireResponse(responseID(r.ID), model, created, req)
	custom := customNames(req)
	toolCalled := false
	var text strings.Builder
	inText := false
	flush := func() {
		if inText {
			w.Output = append(w.Output, messageItem{ID: newID("msg_"), Type: "message",
				Status: "completed", Role: "assistant", Content: []outputText{newOutputText(text.String())}})
			text.Reset()
			inText = false
		}
	}
	for _, p := range r.Parts {
		switch p.Kind {
		case ir.PartText:
			text.WriteString(p.Text)
			inText = true
		case ir.PartReasoning:
			flush()
			if it, ok := reasoningOutput(p.Reasoning); ok {
				w.Output = append(w.Output, it)
			}
		case ir.PartToolCall:
			flush()
			toolCalled = true
			w.Output = append(w.Output, callOutput(p.ToolCall.ID, p.ToolCall.Signature,
				p.ToolCall.SignatureFormat, p.ToolCall.Name, p.ToolCall.Arguments, custom))
		}
	}
	w.finish(r.Stop, toolCalled, r.Usage)
	if w.Status == "incomplete" && inText { // the text that was cut off
		flush()
		last := len(w.Output) - 1
		w.Output[last] = withStatus(w.Output[last], "incomplete")
	}
	flush()
	b, _ := json.Marshal(w)
	return b
}

func withStatus(item any, status string) any {
	if m, ok := item.(messageItem); ok {
		m.Status = status
		return m
	}
	return item
}

func customNames(req *ir.Request) map[string]bool {
	var out map[string]bool // nil (read as empty) without custom tools
	if req != nil {
		for _, t := range req.Tools {
			if t.Custom {
				if out == nil {
					out = map[string]bool{}
				}
				out[t.Name] = true
			}
		}
	}
	return out
}

// reasoningOutput is a reasoning item; encrypted content and the item id are this format's
// own only. A foreign reasoning part without text has nothing to show.
func reasoningOutput(r *ir.Reasoning) (reasoningItem, bool) {
	own := r.SignatureFormat == SignatureFormat
	if !own && r.Text == "" {
		return reasoningItem{}, false
	}
	it := reasoningItem{ID: r.ID, Type: "reasoning", Summary: []wireText{}}
	if own {
		it.EncryptedContent = r.Encrypted
	}
	if !own || it.ID == "" {
		it.ID = newID("rs_")
	}
	if r.Text != "" {
		it.Summary = append(it.Summary, wireText{"summary_text", r.Text})
	}
	return it, true
}

// callOutput is a function_call item (or custom_tool_call for a custom tool); a gemini
// signature rides in the call id.
func callOutput(id, sig, sigFormat, name, args string, custom map[string]bool) any {
	if sig != "" && (sigFormat == "" || sigFormat == "gemini") {
		id = ir.JoinCallID(id, sig)
	}
	if custom[name] {
		return customCallItem{ID: newID("ctc_"), Type: "custom_tool_call", CallID: id, Name: name,
			Input: customInput(args)}
	}
	return functionCallItem{ID: newID("fc_"), Type: "function_call", Status: "completed",
		CallID: id, Name: name, Arguments: args}
}

// readResponse is a Response as an upstream sends it.
type readResponse struct {
	ID                string  `json:"id"`
	CreatedAt         float64 `json:"created_at"`
	Model             string  `json:"model"`
	Status            string  `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Type    string `json:"type"`
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Output []readItem `json:"output"`
	Usage  *wireUsage `json:"usage"`
}

// readItem is an output item's fields.
type readItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Content          json.RawMessage `json:"content"`
	Summary          []wireText      `json:"summary"`
	EncryptedContent string          `json:"encrypted_content"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        string          `json:"arguments"`
	Input            string          `json:"input"`
}

type readContent struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Refusal string `json:"refusal"`
}

// DecodeResponse reads a route's whole answer. Refusals become text; output items of hosted
// tools (web_search_call, …) have no IR equivalent and are skipped.
func (format) DecodeResponse(body []byte) (*ir.Response, error) {
	var w readResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, &ir.Error{Status: 502, Kind: ir.ErrServer,
			Message: "the upstream answer is not a Responses object: " + err.Error()}
	}
	if w.Status == "failed" {
		return nil, failedError(&w)
	}
	r := &ir.Response{ID: w.ID, Model: w.Model, Created: int64(w.CreatedAt)}
	toolCalled := false
	for _, it := range w.Output {
		parts, tool := itemParts(it)
		r.Parts = append(r.Parts, parts...)
		toolCalled = toolCalled || tool
	}
	var reason string
	if w.IncompleteDetails != nil {
		reason = w.IncompleteDetails.Reason
	}
	r.Stop = stopReason(w.Status, reason, toolCalled)
	if w.Usage != nil {
		r.Usage = w.Usage.normalize()
	}
	return r, nil
}

func itemParts(it readItem) ([]ir.Part, bool) {
	switch it.Type {
	case "reasoning":
		return []ir.Part{{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{
			Text: reasoningText(it), Encrypted: it.EncryptedContent, ID: it.ID,
			SignatureFormat: SignatureFormat}}}, false
	case "message":
		var content []readContent
		_ = json.Unmarshal(it.Content, &content)
		var parts []ir.Part
		for _, c := range content {
			switch {
			case c.Type == "output_text" && c.Text != "":
				parts = append(parts, ir.Part{Kind: ir.PartText, Text: c.Text})
			case c.Type == "refusal" && c.Refusal != "":
				parts = append(parts, ir.Part{Kind: ir.PartText, Text: c.Refusal})
			}
		}
		return parts, false
	case "function_call":
		return []ir.Part{{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: it.CallID,
			Name: it.Name, Arguments: objectText(it.Arguments)}}}, true
	case "custom_tool_call":
		return []ir.Part{{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: it.CallID,
			Name: it.Name, Arguments: customArgs(it.Input)}}}, true
	}
	return nil, false
}

// reasoningText is the summary, or the raw reasoning text when there is no summary.
func reasoningText(it readItem) string {
	var texts []string
	for _, s := range it.Summary {
		if s.Text != "" {
			texts = append(texts, s.Text)
		}
	}
	if len(texts) == 0 {
		var content []readContent
		_ = json.Unmarshal(it.Content, &content)
		for _, c := range content {
			if c.Text != "" {
				texts = append(texts, c.Text)
			}
		}
	}
	return strings.Join(texts, "\n\n")
}

// stopReason maps status and incomplete_details.reason.
func stopReason(status, reason string, toolCalled bool) ir.StopReason {
	switch {
	case toolCalled:
		return ir.StopToolUse
	case status == "incomplete" && reason == "content_filter":
		return ir.StopContentFilter
	case status == "incomplete":
		return ir.StopLength
	}
	return ir.StopEnd
}

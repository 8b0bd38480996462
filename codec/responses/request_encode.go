package responses

import (
	"encoding/json"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
)

// minOutputTokens is the smallest max_output_tokens the Responses API accepts.
const minOutputTokens = 16

const includeEncrypted = "reasoning.encrypted_content"

// EncodeRequest renders r as a Responses request for a route. The gateway keeps no responses,
// so `store` is always false and reasoning state travels in encrypted_content instead.
func (format) EncodeRequest(r *ir.Request, upstreamModel string, loss *ir.Loss) ([]byte, error) {
	body := make(map[string]any, len(r.Extra)+16)
	for k, v := range r.Extra {
		switch k {
		case "tools", "tool_choice", "text", "reasoning", "include": // merged below
		default:
			body[k] = v
		}
	}
	body["model"] = upstreamModel
	tools, kinds := encodeTools(r, loss)
	carried := carriedTurn(r)
	instructions, input, replays := encodeInput(r.Messages, kinds, carried, loss)
	if instructions != nil {
		body["instructions"] = *instructions
	}
	switch {
	case len(input) > 0:
		body["input"] = input
	case !carried:
		// The API refuses a request without input (instructions alone included).
		return nil, check.Bad("input", "nothing in this conversation can be sent to a Responses API route: "+
			"it holds no message, call or call output this format carries")
	}
	if len(tools) > 0 {
		body["tools"] = tools
	}
	if tc := encodeToolChoice(r, kinds, loss); tc != nil {
		body["tool_choice"] = tc
	}
	if r.Parallel != nil {
		body["parallel_tool_calls"] = *r.Parallel
	}
	if r.MaxTokens > 0 {
		n := r.MaxTokens
		if n < minOutputTokens {
			n = minOutputTokens
			loss.Drop("max_tokens")
		}
		body["max_output_tokens"] = n
	}
	if r.Temperature != nil {
		body["temperature"] = *r.Temperature
	}
	if r.TopP != nil {
		body["top_p"] = *r.TopP
	}
	if r.TopK != nil {
		loss.Drop("top_k")
	}
	if len(r.Stop) > 0 {
		loss.Drop("stop")
	}
	reasoning, wantsEncrypted := encodeReasoning(r)
	if reasoning != nil {
		body["reasoning"] = reasoning
	}
	if include := encodeInclude(r.Extra["include"], wantsEncrypted || replays); include != nil {
		body["include"] = include
	}
	if text := encodeText(r); text != nil {
		body["text"] = text
	}
	if r.User != "" {
		body["user"] = r.User
	}
	if r.PreviousResponseID != "" {
		body["previous_response_id"] = r.PreviousResponseID
	}
	if r.Stream {
		body["stream"] = true
	} else {
		delete(body, "stream")
	}
	body["store"] = false
	return json.Marshal(body)
}

// toolKinds says which tool names are custom (free-form) tools.
type toolKinds map[string]bool

// encodeTools renders the IR tools flat (function tools) or as their raw definitions (custom
// tools that came from a responses client), then the hosted tools kept in Extra.
func encodeTools(r *ir.Request, loss *ir.Loss) ([]json.RawMessage, toolKinds) {
	var raws []json.RawMessage
	if raw, ok := r.Extra["tools"]; ok {
		_ = json.Unmarshal(raw, &raws)
	}
	rawCustom := map[string]json.RawMessage{}
	var hosted []json.RawMessage
	for _, raw := range raws {
		var t struct{ Type, Name string }
		_ = json.Unmarshal(raw, &t)
		if t.Type == "custom" {
			rawCustom[t.Name] = raw
		} else {
			hosted = append(hosted, raw)
		}
	}
	var kinds toolKinds // nil (read as empty) without tools
	loaded := r.LoadedTools(loss)
	out := make([]json.RawMessage, 0, len(loaded)+len(hosted))
	for _, t := range loaded {
		if kinds == nil {
			kinds = toolKinds{}
		}
		kinds[t.Name] = t.Custom
		if t.Custom {
			if raw, ok := rawCustom[t.Name]; ok {
				out = append(out, raw)
				continue
			}
			b, _ := json.Marshal(struct {
				Type        string `json:"type"`
				Name        string `json:"name"`
				Description string `json:"description,omitempty"`
			}{"custom", t.Name, t.Description})
			out = append(out, b)
			continue
		}
		params := t.Parameters
		if isNull(params) {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		// The Responses API makes strict the default; chat's default (and IR nil) is off.
		strict := t.Strict != nil && *t.Strict
		b, _ := json.Marshal(struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      bool            `json:"strict"`
		}{"function", t.Name, t.Description, params, strict})
		out = append(out, b)
	}
	return append(out, hosted...), kinds
}

// encodeToolChoice renders the tool choice, or a hosted one kept raw. A choice naming a tool
// that is not in tools would be refused upstream: it is dropped and reported.
func encodeToolChoice(r *ir.Request, kinds toolKinds, loss *ir.Loss) any {
	if raw, ok := r.Extra["tool_choice"]; ok {
		return raw
	}
	tc := r.ToolChoice
	ref := func(name string) any {
		typ := "function"
		if kinds[name] {
			typ = "custom"
		}
		return map[string]string{"type": typ, "name": name}
	}
	if len(tc.Allowed) > 0 && (tc.Mode == "" || tc.Mode == ir.ToolAuto || tc.Mode == ir.ToolRequired) {
		var refs []any
		for _, n := range tc.Allowed {
			if _, ok := kinds[n]; ok {
				refs = append(refs, ref(n))
			} else {
				loss.Drop("tool_choice.allowed_tools")
			}
		}
		mode := string(tc.Mode)
		if mode == "" {
			mode = string(ir.ToolAuto)
		}
		if len(refs) > 0 {
			return map[string]any{"type": "allowed_tools", "mode": mode, "tools": refs}
		}
		return mode
	}
	switch tc.Mode {
	case ir.ToolAuto, ir.ToolNone, ir.ToolRequired:
		return string(tc.Mode)
	case ir.ToolNamed:
		if _, ok := kinds[tc.Name]; !ok {
			loss.Drop("tool_choice")
			return nil
		}
		return ref(tc.Name)
	}
	return nil
}

// encodeReasoning renders reasoning{effort, summary}, merged over any other reasoning fields
// the client sent; wantsEncrypted reports a reasoning request (so encrypted_content is asked
// for: with store false it is the only way the chain survives to the next turn).
func encodeReasoning(r *ir.Request) (map[string]any, bool) {
	th := r.Thinking
	effort := nativeEffort(th)
	summary := th.Summary
	if summary == "" && th.IncludeText {
		summary = "auto"
	}
	out := map[string]any{}
	if raw, ok := r.Extra["reasoning"]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil {
			for k, v := range m {
				out[k] = v
			}
		}
	}
	if effort != "" {
		out["effort"] = effort
	}
	if summary != "" {
		out["summary"] = summary
	}
	if len(out) == 0 {
		return nil, false
	}
	return out, effort != "none" && (effort != "" || th.Enabled != nil && *th.Enabled)
}

// nativeEffort is reasoning.effort for a resolved thinking request: the effort, "none" when
// off, a budget's effort; "" leaves the model's default.
func nativeEffort(th ir.Thinking) string {
	switch {
	case th.Effort != "":
		return th.Effort
	case th.Enabled != nil && !*th.Enabled:
		return "none"
	case th.BudgetTokens > 0:
		return effortForBudget(th.BudgetTokens)
	}
	return ""
}

// effortForBudget maps a token budget back to the effort it stands for.
func effortForBudget(n int) string {
	switch {
	case n <= 1024:
		return "low"
	case n <= 4096:
		return "medium"
	}
	return "high"
}

func encodeInclude(raw json.RawMessage, encrypted bool) []string {
	var include []string
	if raw != nil {
		_ = json.Unmarshal(raw, &include)
	}
	if encrypted {
		for _, v := range include {
			if v == includeEncrypted {
				return include
			}
		}
		include = append(include, includeEncrypted)
	}
	return include
}

// encodeText renders text{format} from ResponseFormat, merged over the client's other text
// fields (verbosity).
func encodeText(r *ir.Request) map[string]any {
	raw, ok := r.Extra["text"]
	if !ok && isNull(r.ResponseFormat) {
		return nil
	}
	out := map[string]any{}
	if ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil {
			for k, v := range m {
				out[k] = v
			}
		}
	}
	if f := textFormat(r.ResponseFormat); f != nil {
		out["format"] = f
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// textFormat converts chat's response_format shape to text.format.
func textFormat(rf json.RawMessage) json.RawMessage {
	if isNull(rf) {
		return nil
	}
	var f struct {
		Type       string           `json:"type"`
		JSONSchema jsonSchemaFormat `json:"json_schema"`
	}
	if json.Unmarshal(rf, &f) != nil {
		return nil
	}
	if f.Type != "json_schema" {
		b, _ := json.Marshal(map[string]string{"type": f.Type})
		return b
	}
	b, _ := json.Marshal(struct {
		Type string `json:"type"`
		jsonSchemaFormat
	}{"json_schema", f.JSONSchema})
	return b
}

// inputBuilder turns IR messages into input items.
type inputBuilder struct {
	items       []any
	kinds       toolKinds
	customCalls map[string]bool // ids of calls to custom tools
	loss        *ir.Loss
	replays     bool // reasoning items with encrypted content were replayed
}

type inputMessage struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// carriedTurn reports a request whose turn something other than input carries: a previous
// response, or a stored prompt or conversation the client named.
func carriedTurn(r *ir.Request) bool {
	return r.PreviousResponseID != "" || !isNull(r.Extra["prompt"]) || !isNull(r.Extra["conversation"])
}

// encodeInput hoists leading system messages into instructions when no system message comes
// later (otherwise every system message stays in place as a system-role item), and when some
// input is left or carried: the API refuses instructions without input.
func encodeInput(msgs []ir.Message, kinds toolKinds, carried bool, loss *ir.Loss) (*string, []any, bool) {
	b := &inputBuilder{items: []any{}, kinds: kinds, customCalls: map[string]bool{}, loss: loss}
	lead := 0
	for lead < len(msgs) && msgs[lead].Role == ir.RoleSystem {
		lead++
	}
	hoist := lead > 0
	for _, m := range msgs[lead:] {
		if m.Role == ir.RoleSystem {
			hoist = false
		}
	}
	if hoist && !carried && !b.rendersItems(msgs[lead:]) {
		hoist = false
	}
	var instructions *string
	if hoist {
		texts := make([]string, 0, lead)
		for _, m := range msgs[:lead] {
			b.notes(m)
			for _, p := range m.Parts {
				if p.Kind != ir.PartText {
					loss.Drop("messages[].content")
				}
			}
			texts = append(texts, m.Text())
		}
		s := strings.Join(texts, "\n\n")
		instructions = &s
		msgs = msgs[lead:]
	}
	for _, m := range msgs {
		b.message(m)
	}
	return instructions, b.items, b.replays
}

// rendersItems reports whether msgs make at least one input item, without recording anything.
func (b *inputBuilder) rendersItems(msgs []ir.Message) bool {
	probe := &inputBuilder{items: []any{}, kinds: b.kinds, customCalls: map[string]bool{}} // no loss: nothing is recorded
	for _, m := range msgs {
		probe.message(m)
	}
	return len(probe.items) > 0
}

// notes reports what no item can carry.
func (b *inputBuilder) notes(m ir.Message) {
	if m.Name != "" {
		b.loss.Drop("messages[].name")
	}
	for _, p := range m.Parts {
		if p.CacheControl != nil {
			b.loss.Drop("messages[].cache_control")
		}
	}
}

func (b *inputBuilder) message(m ir.Message) {
	b.notes(m)
	role := "user"
	switch m.Role {
	case ir.RoleSystem:
		role = "system"
	case ir.RoleAssistant:
		role = "assistant"
	}
	var content []any // the open message item's parts
	var text strings.Builder
	flush := func() {
		if m.Role == ir.RoleAssistant {
			if text.Len() > 0 {
				b.items = append(b.items, inputMessage{"message", role, text.String()})
				text.Reset()
			}
			return
		}
		if len(content) > 0 {
			b.items = append(b.items, inputMessage{"message", role, content})
			content = nil
		}
	}
	for _, p := range m.Parts {
		switch p.Kind {
		case ir.PartText:
			if m.Role == ir.RoleAssistant {
				text.WriteString(p.Text)
			} else {
				content = append(content, map[string]string{"type": "input_text", "text": p.Text})
			}
		case ir.PartImage, ir.PartFile:
			if m.Role == ir.RoleAssistant {
				b.loss.Drop("messages[].content")
				continue
			}
			if c := b.media(p); c != nil {
				content = append(content, c)
			}
		case ir.PartToolCall:
			flush()
			b.call(p.ToolCall)
		case ir.PartToolResult:
			flush()
			b.result(p.ToolResult)
		case ir.PartReasoning:
			flush()
			b.reasoning(p.Reasoning)
		}
	}
	flush()
}

// media renders an image or a file as an input content part (nil when it cannot be sent).
func (b *inputBuilder) media(p ir.Part) any {
	if p.Kind == ir.PartImage {
		url := p.Image.URL
		if url == "" {
			url = "data:" + p.Image.MediaType + ";base64," + p.Image.Data
		}
		detail := p.Image.Detail
		if detail == "" {
			detail = "auto"
		}
		return map[string]string{"type": "input_image", "image_url": url, "detail": detail}
	}
	f := p.File
	if strings.HasPrefix(f.MediaType, "audio/") {
		b.loss.Drop("messages[].content.audio")
		return nil
	}
	part := map[string]string{"type": "input_file"}
	name := f.Name
	if name == "" {
		name = "file"
		if f.MediaType == "application/pdf" {
			name = "file.pdf"
		}
	}
	if f.URL != "" {
		part["file_url"] = f.URL
		if f.Name != "" {
			part["filename"] = f.Name
		}
	} else {
		part["file_data"] = "data:" + f.MediaType + ";base64," + f.Data
		part["filename"] = name
	}
	return part
}

func (b *inputBuilder) call(tc *ir.ToolCall) {
	// A signature of another format (gemini's thoughtSignature) is never forwarded.
	if b.kinds[tc.Name] {
		b.customCalls[tc.ID] = true
		b.items = append(b.items, map[string]string{"type": "custom_tool_call",
			"call_id": tc.ID, "name": tc.Name, "input": customInput(tc.Arguments)})
		return
	}
	args := tc.Arguments
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	b.items = append(b.items, map[string]string{"type": "function_call",
		"call_id": tc.ID, "name": tc.Name, "arguments": args})
}

func (b *inputBuilder) result(res *ir.ToolResult) {
	if res.IsError {
		b.loss.Drop("messages[].tool_result.is_error")
	}
	typ := "function_call_output"
	if b.customCalls[res.CallID] || res.Name != "" && b.kinds[res.Name] {
		typ = "custom_tool_call_output"
	}
	var output any
	allText := true
	for _, p := range res.Content {
		allText = allText && p.Kind == ir.PartText
	}
	if allText {
		var s strings.Builder
		for _, p := range res.Content {
			s.WriteString(p.Text)
		}
		output = s.String()
	} else {
		parts := make([]any, 0, len(res.Content))
		for _, p := range res.Content {
			switch p.Kind {
			case ir.PartText:
				parts = append(parts, map[string]string{"type": "input_text", "text": p.Text})
			case ir.PartImage, ir.PartFile:
				if c := b.media(p); c != nil {
					parts = append(parts, c)
				}
			default:
				b.loss.Drop("messages[].tool_result.content")
			}
		}
		output = parts
	}
	b.items = append(b.items, map[string]any{"type": typ, "call_id": res.CallID, "output": output})
}

// reasoning replays a reasoning item this format issued; anything else is dropped (a foreign
// signature is never forwarded, and with store false an item without encrypted content cannot
// be resolved upstream).
func (b *inputBuilder) reasoning(r *ir.Reasoning) {
	if r.SignatureFormat != SignatureFormat || r.Encrypted == "" || r.ID == "" {
		b.loss.Drop("messages[].reasoning")
		return
	}
	summary := []wireText{}
	if r.Text != "" {
		summary = append(summary, wireText{"summary_text", r.Text})
	}
	b.replays = true
	b.items = append(b.items, struct {
		Type             string     `json:"type"`
		ID               string     `json:"id"`
		Summary          []wireText `json:"summary"`
		EncryptedContent string     `json:"encrypted_content"`
	}{"reasoning", r.ID, summary, r.Encrypted})
}

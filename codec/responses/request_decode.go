package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
)

func invalid(param, format string, args ...any) error { return check.Bad(param, format, args...) }

// ranges are the numeric members the Responses API bounds.
var ranges = []check.Range{
	{Param: "max_output_tokens", Min: 16, Max: check.Unbounded, Integer: true},
	{Param: "temperature", Min: 0, Max: 2},
	{Param: "top_p", Min: 0, Max: 1},
	{Param: "top_logprobs", Min: 0, Max: 20, Integer: true},
}

// mapped are the top-level fields DecodeRequest translates; every other field goes to Extra.
var mapped = map[string]bool{
	"model": true, "input": true, "instructions": true, "tools": true, "tool_choice": true,
	"parallel_tool_calls": true, "max_output_tokens": true, "temperature": true, "top_p": true,
	"reasoning": true, "text": true, "stream": true, "user": true, "previous_response_id": true,
}

// DecodeRequest parses and checks a client's Responses request.
func (format) DecodeRequest(body []byte) (*ir.Request, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, invalid("", "the request body must be a JSON object")
	}
	d := &reqDecoder{fields: fields, r: &ir.Request{}, callNames: map[string]string{}, names: check.NewTools(check.OpenAINames)}
	if err := d.decode(); err != nil {
		return nil, err
	}
	return d.r, nil
}

type reqDecoder struct {
	fields    map[string]json.RawMessage
	r         *ir.Request
	callNames map[string]string // call_id → name, for tool results
	names     *check.Tools      // the function and custom tools' names, for tool_choice
	anyTools  bool              // any tool offered, hosted ones included
	// answerable: the request holds instructions, or its input a message with content, a
	// call or a call output, not only reasoning items and empty messages.
	answerable bool
}

func isNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// field unmarshals a top-level field; absent and null leave v untouched.
func (d *reqDecoder) field(name string, v any, want string) (bool, error) {
	raw, ok := d.fields[name]
	if !ok || isNull(raw) {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, invalid(name, "%s must be %s", name, want)
	}
	return true, nil
}

func (d *reqDecoder) extra(name string, raw json.RawMessage) {
	if d.r.Extra == nil {
		d.r.Extra = map[string]json.RawMessage{}
	}
	d.r.Extra[name] = raw
}

func (d *reqDecoder) decode() error {
	r := d.r
	if _, err := d.field("model", &r.Model, "a string"); err != nil || r.Model == "" {
		return invalid("model", "model is required and must be a string")
	}
	if e := check.Ranges(d.fields, ranges); e != nil {
		return e
	}
	if err := d.enums(); err != nil {
		return err
	}
	var instructions string
	if _, err := d.field("instructions", &instructions, "a string"); err != nil {
		return err
	}
	if instructions != "" {
		d.answerable = true // the model answers instructions, even beside an empty message
		r.Messages = append(r.Messages, ir.Message{Role: ir.RoleSystem,
			Parts: []ir.Part{{Kind: ir.PartText, Text: instructions}}})
	}
	if raw, ok := d.fields["input"]; ok && !isNull(raw) {
		if err := d.input(raw); err != nil {
			return err
		}
	} else if !d.carried() {
		return invalid("input", "input is required")
	}
	if err := d.tools(); err != nil {
		return err
	}
	if err := d.toolChoice(); err != nil {
		return err
	}
	var parallel bool
	if ok, err := d.field("parallel_tool_calls", &parallel, "a boolean"); err != nil {
		return err
	} else if ok {
		r.Parallel = &parallel
	}
	if _, err := d.field("max_output_tokens", &r.MaxTokens, "an integer"); err != nil {
		return err
	}
	var temperature, topP float64
	if ok, err := d.field("temperature", &temperature, "a number"); err != nil {
		return err
	} else if ok {
		r.Temperature = &temperature
	}
	if ok, err := d.field("top_p", &topP, "a number"); err != nil {
		return err
	} else if ok {
		r.TopP = &topP
	}
	if err := d.reasoning(); err != nil {
		return err
	}
	if err := d.text(); err != nil {
		return err
	}
	if _, err := d.field("stream", &r.Stream, "a boolean"); err != nil {
		return err
	}
	if _, err := d.field("user", &r.User, "a string"); err != nil {
		return err
	}
	if _, err := d.field("previous_response_id", &r.PreviousResponseID, "a string"); err != nil {
		return err
	}
	for name, raw := range d.fields {
		if !mapped[name] {
			d.extra(name, raw)
		}
	}
	return nil
}

func (d *reqDecoder) has(name string) bool {
	raw, ok := d.fields[name]
	return ok && !isNull(raw)
}

// carried reports a turn carried by something other than input: a previous response (its
// id a non-empty string: "" names none) or a stored prompt or conversation.
func (d *reqDecoder) carried() bool {
	var id string
	return json.Unmarshal(d.fields["previous_response_id"], &id) == nil && id != "" || d.has("prompt") || d.has("conversation")
}

// input reads a string (one user message) or a list of items; an empty one is the client's
// 400 here, not an upstream's complaint about a field the client never sent.
func (d *reqDecoder) input(raw json.RawMessage) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return invalid("input", `input must not be empty: send a string or an array of input items`)
		}
		d.r.Messages = append(d.r.Messages, ir.Message{Role: ir.RoleUser,
			Parts: []ir.Part{{Kind: ir.PartText, Text: s}}})
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return invalid("input", "input must be a string or an array of input items")
	}
	if len(items) == 0 {
		return invalid("input", `input must not be empty: send a string or an array of input items`)
	}
	for i, item := range items {
		if err := d.item(fmt.Sprintf("input[%d]", i), item); err != nil {
			return err
		}
	}
	if !d.answerable {
		return invalid("input", "input holds nothing to answer: send at least one message with content, "+
			"function call or function call output (reasoning items and empty messages only accompany them)")
	}
	return nil
}

// wireItem is every input item's fields; Type says which are meaningful.
type wireItem struct {
	Type             string          `json:"type"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ID               string          `json:"id"`
	CallID           *string         `json:"call_id"`
	Name             *string         `json:"name"`
	Arguments        json.RawMessage `json:"arguments"`
	Input            *string         `json:"input"`
	Output           json.RawMessage `json:"output"`
	Summary          []wireText      `json:"summary"`
	EncryptedContent *string         `json:"encrypted_content"`
}

type wireText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// unmarshalAt decodes raw into v, naming the offending field under param on failure.
func unmarshalAt(param string, raw json.RawMessage, v any, want string) error {
	err := json.Unmarshal(raw, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return invalid(param+"."+te.Field, "%s.%s must be %s", param, te.Field, check.Kind(te.Type.Kind().String()))
	}
	return invalid(param, "%s must be %s", param, want)
}

// failed is e as an error, nil when there is none (a nil *ir.Error is not a nil error).
func failed(e *ir.Error) error {
	if e == nil {
		return nil
	}
	return e
}

func (d *reqDecoder) item(param string, raw json.RawMessage) error {
	var it wireItem
	if err := unmarshalAt(param, raw, &it, "an input item object"); err != nil {
		return err
	}
	if err := exactMembers(param, raw, itemMembers); err != nil {
		return err
	}
	typ := it.Type
	if typ == "" && it.Role != "" {
		typ = "message"
	}
	switch typ {
	case "message":
		return d.message(param, &it)
	case "function_call", "custom_tool_call":
		return d.toolCall(param, &it)
	case "function_call_output", "custom_tool_call_output":
		return d.toolOutput(param, &it)
	case "reasoning":
		d.reasoningItem(&it)
		return nil
	case "":
		return invalid(param+".type", "%s.type is required", param)
	}
	return invalid(param+".type", "%s.type %q is not supported by this gateway", param, typ)
}

func (d *reqDecoder) message(param string, it *wireItem) error {
	var role ir.Role
	switch it.Role {
	case "user":
		role = ir.RoleUser
	case "assistant":
		role = ir.RoleAssistant
	case "system", "developer":
		role = ir.RoleSystem
	case "":
		return invalid(param+".role", "%s.role is required", param)
	default:
		return failed(check.OneOf(param+".role", it.Role, "user", "assistant", "system", "developer"))
	}
	if isNull(it.Content) {
		return invalid(param+".content", "%s.content is required", param)
	}
	parts, err := d.content(param+".content", it.Content)
	if err != nil {
		return err
	}
	d.answerable = d.answerable || hasContent(parts)
	if role == ir.RoleAssistant {
		d.assistant(parts...)
		return nil
	}
	d.r.Messages = append(d.r.Messages, ir.Message{Role: role, Parts: parts})
	return nil
}

// assistant appends parts to the assistant turn in progress: consecutive assistant-side items
// (messages, reasoning, calls) form one assistant message.
func (d *reqDecoder) assistant(parts ...ir.Part) {
	msgs := d.r.Messages
	if n := len(msgs); n > 0 && msgs[n-1].Role == ir.RoleAssistant {
		msgs[n-1].Parts = append(msgs[n-1].Parts, parts...)
		return
	}
	d.r.Messages = append(msgs, ir.Message{Role: ir.RoleAssistant, Parts: parts})
}

// wirePart is every content part's fields.
type wirePart struct {
	Type       string  `json:"type"`
	Text       *string `json:"text"`
	Refusal    *string `json:"refusal"`
	ImageURL   *string `json:"image_url"`
	Detail     string  `json:"detail"`
	FileID     *string `json:"file_id"`
	FileData   *string `json:"file_data"`
	FileURL    *string `json:"file_url"`
	Filename   string  `json:"filename"`
	InputAudio *struct {
		Data   string `json:"data"`
		Format string `json:"format"`
	} `json:"input_audio"`
}

// content reads a string or a list of content parts.
func (d *reqDecoder) content(param string, raw json.RawMessage) ([]ir.Part, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []ir.Part{{Kind: ir.PartText, Text: s}}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, invalid(param, "%s must be a string or an array of content parts", param)
	}
	parts := make([]ir.Part, 0, len(list))
	for j, raw := range list {
		p, err := contentPart(fmt.Sprintf("%s[%d]", param, j), raw)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// hasContent reports parts with something in them: not only empty texts.
func hasContent(parts []ir.Part) bool {
	for _, p := range parts {
		if p.Kind != ir.PartText || p.Text != "" {
			return true
		}
	}
	return false
}

func contentPart(param string, raw json.RawMessage) (ir.Part, error) {
	var w wirePart
	if err := unmarshalAt(param, raw, &w, "a content part object"); err != nil {
		return ir.Part{}, err
	}
	if err := exactMembers(param, raw, partMembers); err != nil {
		return ir.Part{}, err
	}
	switch w.Type {
	case "input_text", "output_text", "text":
		if w.Text == nil {
			return ir.Part{}, invalid(param+".text", "%s.text is required", param)
		}
		return ir.Part{Kind: ir.PartText, Text: *w.Text}, nil
	case "refusal":
		if w.Refusal == nil {
			return ir.Part{}, invalid(param+".refusal", "%s.refusal is required", param)
		}
		return ir.Part{Kind: ir.PartText, Text: *w.Refusal}, nil
	case "input_image":
		if w.ImageURL == nil || *w.ImageURL == "" {
			if w.FileID != nil {
				return ir.Part{}, invalid(param+".file_id", "%s.file_id: uploaded files are not supported by this gateway; send image_url", param)
			}
			return ir.Part{}, invalid(param+".image_url", "%s.image_url is required", param)
		}
		if e := check.MediaURL(param+".image_url", *w.ImageURL, check.Image); e != nil {
			return ir.Part{}, e
		}
		img := &ir.Image{Detail: w.Detail}
		if mime, data, ok := check.DataURL(*w.ImageURL); ok {
			img.MediaType, img.Data = mime, data
		} else {
			img.URL = *w.ImageURL
		}
		return ir.Part{Kind: ir.PartImage, Image: img}, nil
	case "input_file":
		f := &ir.File{Name: w.Filename}
		switch {
		case w.FileData != nil && *w.FileData != "":
			if e := fileData(param+".file_data", *w.FileData); e != nil {
				return ir.Part{}, e
			}
			if mime, data, ok := check.DataURL(*w.FileData); ok {
				f.MediaType, f.Data = mime, data
			} else {
				f.MediaType, f.Data = mimeFromName(w.Filename), *w.FileData
			}
		case w.FileURL != nil && *w.FileURL != "":
			if e := check.MediaURL(param+".file_url", *w.FileURL, check.File); e != nil {
				return ir.Part{}, e
			}
			f.URL = *w.FileURL
		case w.FileID != nil:
			return ir.Part{}, invalid(param+".file_id", "%s.file_id: uploaded files are not supported by this gateway; send file_data or file_url", param)
		default:
			return ir.Part{}, invalid(param+".file_data", "%s needs file_data or file_url", param)
		}
		return ir.Part{Kind: ir.PartFile, File: f}, nil
	case "input_audio":
		if w.InputAudio == nil || w.InputAudio.Data == "" {
			return ir.Part{}, invalid(param+".input_audio", "%s.input_audio.data is required", param)
		}
		if e := check.Inline("", "", param+".input_audio.data", w.InputAudio.Data, check.Audio); e != nil {
			return ir.Part{}, e
		}
		return ir.Part{Kind: ir.PartFile, File: &ir.File{MediaType: "audio/" + w.InputAudio.Format,
			Data: w.InputAudio.Data}}, nil
	case "":
		return ir.Part{}, invalid(param+".type", "%s.type is required", param)
	}
	return ir.Part{}, invalid(param+".type", "%s.type %q is not supported", param, w.Type)
}

// fileData checks an input_file's file_data: a data: URL, or the bare base64 the API also
// takes (its type then comes from the filename).
func fileData(param, s string) *ir.Error {
	if len(s) >= 5 && strings.EqualFold(s[:5], "data:") {
		return check.MediaURL(param, s, check.File)
	}
	return check.Inline("", "", param, s, check.File)
}

func mimeFromName(name string) string {
	switch {
	case strings.HasSuffix(strings.ToLower(name), ".pdf"):
		return "application/pdf"
	case strings.HasSuffix(strings.ToLower(name), ".txt"):
		return "text/plain"
	}
	return "application/octet-stream"
}

func (d *reqDecoder) toolCall(param string, it *wireItem) error {
	if it.CallID == nil || *it.CallID == "" {
		return invalid(param+".call_id", "%s.call_id is required", param)
	}
	if it.Name == nil || *it.Name == "" {
		return invalid(param+".name", "%s.name is required", param)
	}
	tc := &ir.ToolCall{Name: *it.Name}
	tc.ID, tc.Signature = splitCallID(*it.CallID)
	if tc.Signature != "" {
		tc.SignatureFormat = "gemini"
	}
	if it.Type == "custom_tool_call" {
		if it.Input == nil {
			return invalid(param+".input", "%s.input is required", param)
		}
		tc.Arguments = customArgs(*it.Input)
	} else {
		args, err := callArguments(param+".arguments", it.Arguments)
		if err != nil {
			return err
		}
		tc.Arguments = args
	}
	d.callNames[tc.ID] = tc.Name
	d.answerable = true
	d.assistant(ir.Part{Kind: ir.PartToolCall, ToolCall: tc})
	return nil
}

// splitCallID takes a gemini signature off a call id; an id that would be left empty stays
// whole.
func splitCallID(id string) (string, string) {
	if plain, sig := ir.SplitCallID(id); plain != "" {
		return plain, sig
	}
	return id, ""
}

// customArgs is the IR arguments of a custom tool call: {"input": text}.
func customArgs(input string) string {
	b, _ := json.Marshal(struct {
		Input string `json:"input"`
	}{input})
	return string(b)
}

// customInput undoes customArgs; arguments of another shape are the input as they are.
func customInput(args string) string {
	var v struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal([]byte(args), &v) == nil && v.Input != nil {
		return *v.Input
	}
	return args
}

// callArguments normalizes a function call's arguments to a JSON object as text: a string
// holding an object is kept as it is, empty becomes {}, an object is re-encoded compactly, and
// anything else (text that is not a JSON object) is wrapped as {"_raw": text}.
func callArguments(param string, raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "{}", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return objectText(s), nil
	}
	raw = bytes.TrimSpace(raw)
	if raw[0] == '{' {
		var buf bytes.Buffer
		if json.Compact(&buf, raw) == nil {
			return buf.String(), nil
		}
	}
	return "", invalid(param, "%s must be a string of JSON", param)
}

func objectText(s string) string {
	t := strings.TrimSpace(s)
	if t == "" {
		return "{}"
	}
	if t[0] == '{' && json.Valid([]byte(t)) {
		return s
	}
	b, _ := json.Marshal(map[string]string{"_raw": s})
	return string(b)
}

func (d *reqDecoder) toolOutput(param string, it *wireItem) error {
	if it.CallID == nil || *it.CallID == "" {
		return invalid(param+".call_id", "%s.call_id is required", param)
	}
	if isNull(it.Output) {
		return invalid(param+".output", "%s.output is required", param)
	}
	content, err := d.content(param+".output", it.Output)
	if err != nil {
		return err
	}
	id, _ := splitCallID(*it.CallID)
	res := &ir.ToolResult{CallID: id, Name: d.callNames[id], Content: content}
	part := ir.Part{Kind: ir.PartToolResult, ToolResult: res}
	d.answerable = true
	msgs := d.r.Messages
	if n := len(msgs); n > 0 && msgs[n-1].Role == ir.RoleTool {
		msgs[n-1].Parts = append(msgs[n-1].Parts, part)
		return nil
	}
	d.r.Messages = append(msgs, ir.Message{Role: ir.RoleTool, Parts: []ir.Part{part}})
	return nil
}

func (d *reqDecoder) reasoningItem(it *wireItem) {
	var texts []string
	for _, s := range it.Summary {
		if s.Text != "" {
			texts = append(texts, s.Text)
		}
	}
	if len(texts) == 0 && !isNull(it.Content) {
		var content []wireText // reasoning_text parts (open-weight models)
		_ = json.Unmarshal(it.Content, &content)
		for _, c := range content {
			if c.Text != "" {
				texts = append(texts, c.Text)
			}
		}
	}
	r := &ir.Reasoning{Text: strings.Join(texts, "\n\n"), ID: it.ID, SignatureFormat: SignatureFormat}
	if it.EncryptedContent != nil {
		r.Encrypted = *it.EncryptedContent
	}
	d.assistant(ir.Part{Kind: ir.PartReasoning, Reasoning: r})
}

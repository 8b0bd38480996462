package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

// Pseudo-field names of Request.Extra (what IR has no place for). A plain name is a top-level
// member (safetySettings, cachedContent, …); a dotted name is a member of a nested object
// ("generationConfig.seed", "toolConfig.retrievalConfig"); these two the gemini encoder
// re-emits where they came from. Two more shapes, as the messages codec has them:
//   - "tools[].<kind>": a JSON array of the raw tool objects of one non-function kind
//     (googleSearch, codeExecution, …); re-emitted after the function declarations.
//   - "tools[].<field>": a declaration field IR has no place for (response, behavior, …) as a
//     JSON object, function name → raw value; merged back into its declaration.
//   - "contents[].parts[].<field>": a part IR cannot hold (executableCode, …) that was left
//     out of the history; only a marker, so every encoder, this one included, reports it.
const (
	extraTools = "tools[]."
	extraParts = "contents[].parts[]."
)

// mappedFields are the top-level members DecodeRequest reads ("model" is the path's).
var mappedFields = map[string]bool{
	"contents": true, "systemInstruction": true, "tools": true, "toolConfig": true,
	"generationConfig": true, "model": true,
}

// snakeAliases are the proto field names the API accepts beside the JSON (camelCase) ones.
var snakeAliases = map[string]string{
	"system_instruction": "systemInstruction", "tool_config": "toolConfig",
	"generation_config": "generationConfig",
}

func bad(param, format string, args ...any) *ir.Error {
	e := invalidRequest(param, format, args...)
	e.Code = "INVALID_ARGUMENT"
	return e
}

// DecodeRequest parses a generateContent body into IR. The model and the
// stream mode are in the URL path, not the body: the caller sets Model and Stream.
func (format) DecodeRequest(body []byte) (*ir.Request, error) {
	r, err := decodeRequest(body)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func decodeRequest(body []byte) (*ir.Request, *ir.Error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, bad("", "Invalid JSON payload received: the body must be a GenerateContentRequest object")
	}
	for snake, camel := range snakeAliases {
		if v, ok := fields[snake]; ok {
			if _, both := fields[camel]; !both {
				fields[camel] = v
			}
			delete(fields, snake)
		}
	}
	r := &ir.Request{}
	d := &decoder{r: r}
	if raw, ok := fields["systemInstruction"]; ok && !isNull(raw) {
		if err := d.system(raw); err != nil {
			return nil, err
		}
	}
	raw, ok := fields["contents"]
	if !ok || isNull(raw) {
		return nil, bad("contents", "contents is not specified")
	}
	var contents []json.RawMessage
	if err := json.Unmarshal(raw, &contents); err != nil {
		return nil, bad("contents", "contents must be an array of Content objects")
	}
	if len(contents) == 0 { // Google's words for an empty list too
		return nil, bad("contents", "contents is not specified")
	}
	for i, c := range contents {
		if err := d.content(i, c); err != nil {
			return nil, err
		}
	}
	if err := d.tools(fields["tools"]); err != nil {
		return nil, err
	}
	if err := d.toolConfig(fields["toolConfig"]); err != nil {
		return nil, err
	}
	if err := d.generation(fields["generationConfig"]); err != nil {
		return nil, err
	}
	for k, v := range fields {
		if !mappedFields[k] {
			d.extra(k, v)
		}
	}
	return r, nil
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// decoder holds what decoding one request needs across contents: the calls of the latest
// model turn, which a functionResponse without id answers by name, in order.
type decoder struct {
	r      *ir.Request
	names  *check.Tools // the function declarations' names, for allowedFunctionNames
	calls  []pendingCall
	minted int
	joiner callJoiner // a model turn sent back as streamed: a call in pieces (streamed_call.go)
}

type pendingCall struct {
	id, name string
	answered bool
}

func (d *decoder) extra(k string, v json.RawMessage) {
	if d.r.Extra == nil {
		d.r.Extra = map[string]json.RawMessage{}
	}
	d.r.Extra[k] = v
}

// mintID names a call that came without an id, the same way in every decode of the same
// body, so a conversation's calls and results keep matching.
func (d *decoder) mintID() string {
	d.minted++
	return "call_gemini_" + strconv.Itoa(d.minted)
}

// wireContent is a Content as a client writes it; parts stay raw until their kind is known.
type wireContent struct {
	Role  string            `json:"role"`
	Parts []json.RawMessage `json:"parts"`
}

// wirePart is one Part; Other collects members IR cannot hold.
type wirePart struct {
	Text             *string                 `json:"text"`
	Thought          bool                    `json:"thought"`
	ThoughtSignature string                  `json:"thoughtSignature"`
	InlineData       *blob                   `json:"inlineData"`
	FileData         *fileData               `json:"fileData"`
	FunctionCall     *functionCall           `json:"functionCall"`
	FunctionResponse *clientFunctionResponse `json:"functionResponse"`
}

type clientFunctionResponse struct {
	ID       string            `json:"id"`
	Name     string            `json:"name"`
	Response json.RawMessage   `json:"response"`
	Parts    []json.RawMessage `json:"parts"`
}

// partFields are the Part members IR holds; the others become contents[].parts[] markers.
var partFields = map[string]bool{
	"text": true, "thought": true, "thoughtSignature": true, "inlineData": true, "fileData": true,
	"inline_data": true, "file_data": true, "functionCall": true, "functionResponse": true,
}

func (d *decoder) system(raw json.RawMessage) *ir.Error {
	var c wireContent
	if err := json.Unmarshal(raw, &c); err != nil {
		return bad("systemInstruction", "systemInstruction must be a Content object: %s", check.JSONProblem(err))
	}
	for j, rp := range c.Parts {
		at := fmt.Sprintf("systemInstruction.parts[%d]", j)
		p, other, err := decodePart(at, rp)
		if err != nil {
			return err
		}
		if p.Text == nil || p.Thought || len(other) > 0 || p.InlineData != nil || p.FileData != nil {
			d.extra("systemInstruction.parts[]", json.RawMessage(`true`)) // a marker: only text is a system prompt
			continue
		}
		d.r.Messages = append(d.r.Messages, ir.Message{Role: ir.RoleSystem,
			Parts: []ir.Part{{Kind: ir.PartText, Text: *p.Text}}})
	}
	return nil
}

func decodePart(at string, raw json.RawMessage) (wirePart, []string, *ir.Error) {
	var p wirePart
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, nil, bad(at, "%s is not a valid Part: %s", at, check.JSONProblem(err))
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(raw, &keys)
	if e := readMedia(at, keys, &p); e != nil {
		return p, nil, e
	}
	var other []string
	for k := range keys {
		if !partFields[k] {
			other = append(other, k)
		}
	}
	return p, other, nil
}

// content decodes one Content: a model turn becomes an assistant message; a user turn its
// functionResponse parts as one RoleTool message, then its other parts as a user message.
func (d *decoder) content(i int, raw json.RawMessage) *ir.Error {
	at := fmt.Sprintf("contents[%d]", i)
	var c wireContent
	if err := json.Unmarshal(raw, &c); err != nil {
		return bad(at, "%s must be a Content object: %s", at, check.JSONProblem(err))
	}
	var role ir.Role
	switch c.Role {
	case "model":
		role = ir.RoleAssistant
		d.calls = d.calls[:0]
	case "user", "", "function": // "function": how old docs sent function responses
		role = ir.RoleUser
	default:
		return bad(at+".role", "%s.role %q is not valid: use user or model", at, c.Role)
	}
	if len(c.Parts) == 0 {
		return bad(at+".parts", "%s.parts must not be empty", at)
	}
	var results, rest []ir.Part
	d.joiner = callJoiner{}
	for j, rp := range c.Parts {
		pat := fmt.Sprintf("%s.parts[%d]", at, j)
		p, other, err := decodePart(pat, rp)
		if err != nil {
			return err
		}
		for _, k := range other {
			d.extra(extraParts+k, json.RawMessage(`true`))
		}
		part, isResult, err := d.part(pat, role, p)
		if err != nil {
			return err
		}
		switch {
		case part == nil:
		case isResult:
			results = append(results, *part)
		default:
			rest = append(rest, *part)
		}
	}
	if tc := d.joiner.flush(); tc != nil {
		part, err := d.callPart(at+".parts", tc)
		if err != nil {
			return err
		}
		rest = append(rest, *part)
	}
	if len(results) > 0 {
		d.r.Messages = append(d.r.Messages, ir.Message{Role: ir.RoleTool, Parts: results})
	}
	if len(rest) > 0 {
		d.r.Messages = append(d.r.Messages, ir.Message{Role: role, Parts: rest})
	}
	return nil
}

// part decodes one part of a turn; nil when it carries nothing IR holds.
func (d *decoder) part(at string, role ir.Role, p wirePart) (*ir.Part, bool, *ir.Error) {
	sig := p.ThoughtSignature
	switch {
	case p.FunctionCall != nil:
		if role != ir.RoleAssistant {
			return nil, false, bad(at+".functionCall", "a functionCall belongs in a model turn")
		}
		fc := p.FunctionCall
		if fc.Name == "" && d.joiner.open == nil {
			return nil, false, bad(at+".functionCall.name", "%s.functionCall.name is required", at)
		}
		if _, ok := argsFromWire(fc.Args); !ok {
			return nil, false, bad(at+".functionCall.args", "%s.functionCall.args must be an object", at)
		}
		tc, err := d.joiner.add(fc, sig)
		if err != nil {
			return nil, false, bad(at+".functionCall.partialArgs", "%s: %v", at, err)
		}
		if tc == nil {
			return nil, false, nil // a piece of a call that later parts complete
		}
		part, perr := d.callPart(at, tc)
		return part, false, perr
	case p.FunctionResponse != nil:
		tr, err := d.result(at+".functionResponse", p.FunctionResponse)
		if err != nil {
			return nil, false, err
		}
		return &ir.Part{Kind: ir.PartToolResult, ToolResult: tr}, true, nil
	case p.Thought:
		if role != ir.RoleAssistant {
			return nil, false, nil // a thought is the model's; in a user turn it means nothing
		}
		return &ir.Part{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Text: deref(p.Text),
			Signature: sig, SignatureFormat: signatureFormat}}, false, nil
	case p.Text != nil:
		if *p.Text == "" && sig == "" {
			return nil, false, nil
		}
		return signed(ir.Part{Kind: ir.PartText, Text: *p.Text}, sig), false, nil
	case p.InlineData != nil:
		if p.InlineData.Data == "" {
			return nil, false, bad(at+".inlineData.data", "%s.inlineData.data is required", at)
		}
		return signed(mediaFromWire(p.InlineData.MimeType, p.InlineData.Data, ""), sig), false, nil
	case p.FileData != nil:
		if p.FileData.FileURI == "" {
			return nil, false, bad(at+".fileData.fileUri", "%s.fileData.fileUri is required", at)
		}
		mt := p.FileData.MimeType
		if mt == "" {
			mt = guessMediaType(p.FileData.FileURI, false)
		}
		return signed(mediaFromWire(mt, "", p.FileData.FileURI), sig), false, nil
	}
	return nil, false, nil
}

// callPart is a whole call of a model turn, named (its id minted if it has none) and
// remembered for the results that answer it.
func (d *decoder) callPart(at string, tc *ir.ToolCall) (*ir.Part, *ir.Error) {
	if tc.Name == "" {
		return nil, bad(at+".functionCall.name", "%s.functionCall.name is required", at)
	}
	if tc.ID == "" {
		tc.ID = d.mintID()
	}
	d.calls = append(d.calls, pendingCall{id: tc.ID, name: tc.Name})
	return &ir.Part{Kind: ir.PartToolCall, ToolCall: tc}, nil
}

func signed(p ir.Part, sig string) *ir.Part {
	if sig != "" {
		p.Signature, p.SignatureFormat = sig, signatureFormat
	}
	return &p
}

// argsFromWire renders functionCall.args as IR Arguments: absent or null is {}, an object
// is compacted, anything else is not valid.
func argsFromWire(raw json.RawMessage) (string, bool) {
	if isNull(raw) {
		return "{}", true
	}
	return compactObject(raw)
}

// result decodes a functionResponse. Without an id it answers the first unanswered call of
// the same name in the latest model turn (Gemini pairs them by name, in order).
func (d *decoder) result(at string, fr *clientFunctionResponse) (*ir.ToolResult, *ir.Error) {
	if fr.Name == "" && fr.ID == "" {
		return nil, bad(at+".name", "%s.name is required", at)
	}
	tr := &ir.ToolResult{CallID: fr.ID, Name: fr.Name}
	for i := range d.calls {
		c := &d.calls[i]
		if c.answered || (fr.ID != "" && c.id != fr.ID) || (fr.ID == "" && c.name != fr.Name) {
			continue
		}
		c.answered = true
		tr.CallID = c.id
		if tr.Name == "" {
			tr.Name = c.name
		}
		break
	}
	if tr.CallID == "" {
		tr.CallID = d.mintID() // answers no call we saw; the route decides what it makes of it
	}
	text, isErr, ok := resultText(fr.Response)
	if !ok {
		return nil, bad(at+".response", "%s.response must be an object", at)
	}
	tr.IsError = isErr
	if text != "" || len(fr.Parts) == 0 {
		tr.Content = append(tr.Content, ir.Part{Kind: ir.PartText, Text: text})
	}
	for j, rp := range fr.Parts {
		pat := fmt.Sprintf("%s.parts[%d]", at, j)
		p, _, err := decodePart(pat, rp)
		if err != nil {
			return nil, err
		}
		switch {
		case p.InlineData != nil:
			tr.Content = append(tr.Content, mediaFromWire(p.InlineData.MimeType, p.InlineData.Data, ""))
		case p.FileData != nil:
			tr.Content = append(tr.Content, mediaFromWire(p.FileData.MimeType, "", p.FileData.FileURI))
		case p.Text != nil:
			tr.Content = append(tr.Content, ir.Part{Kind: ir.PartText, Text: *p.Text})
		}
	}
	return tr, nil
}

// resultWrappers are the members a client wraps a plain result in ({"output": "…"} is
// Gemini CLI's); such a result travels as its text. Any other object travels as its JSON.
var resultWrappers = map[string]bool{"output": true, "content": true, "result": true}

// resultText is a functionResponse.response as tool-result text, and whether it reports an
// error: {"error": …} is an error; a string wrapped in one of resultWrappers is that string;
// any other object is its JSON text.
func resultText(raw json.RawMessage) (text string, isErr, ok bool) {
	if isNull(raw) {
		return "", false, true
	}
	obj, ok := compactObject(raw)
	if !ok {
		return "", false, false
	}
	var members map[string]json.RawMessage
	_ = json.Unmarshal(raw, &members)
	if len(members) != 1 {
		return obj, false, true
	}
	for k, v := range members {
		var s string
		isString := json.Unmarshal(v, &s) == nil
		switch {
		case k == "error" && isString:
			return s, true, true
		case k == "error":
			return string(jsonscan.Compact(v)), true, true
		case resultWrappers[k] && isString:
			return s, false, true
		}
	}
	return obj, false, true
}

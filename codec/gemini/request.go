package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// maxStopSequences is Gemini's limit on generationConfig.stopSequences.
const maxStopSequences = 5

// effortBudget is thinkingBudget per effort, for Gemini 2.5 models.
var effortBudget = map[string]int{
	"minimal": 512, "low": 1024, "medium": 2048, "high": 4096, "xhigh": 8192, "max": 8192,
}

// EncodeRequest renders r as a generateContent body. The model and the stream mode are in
// the path, not the body. Extra is re-emitted where it came from (decode.go names its
// shapes): the gateway hands an encoder only Extra that came from a client of its format.
func (format) EncodeRequest(r *ir.Request, upstreamModel string, loss *ir.Loss) ([]byte, error) {
	out := request{Contents: []content{}}
	if err := encodeMessages(r.Messages, &out, loss); err != nil {
		return nil, err
	}
	if err := encodeTools(r, &out, loss); err != nil {
		return nil, err
	}
	gc, err := encodeGeneration(r, loss)
	if err != nil {
		return nil, err
	}
	out.GenerationConfig = gc

	if r.Parallel != nil && !*r.Parallel {
		loss.Drop("parallel_tool_calls") // Gemini has no switch for it
	}
	if r.User != "" {
		loss.Drop("user")
	}
	if r.PreviousResponseID != "" {
		loss.Drop("previous_response_id")
	}
	if len(r.Extra) > 0 {
		return withExtra(out, r.Extra, loss)
	}
	return marshal(out), nil
}

func invalidRequest(param, format string, args ...any) *ir.Error {
	return &ir.Error{Status: http.StatusBadRequest, Kind: ir.ErrInvalidRequest, Param: param,
		Message: fmt.Sprintf(format, args...)}
}

// contents builds the contents list: consecutive same-role parts share one content, and
// the media of tool results follow the run of functionResponse parts they belong to.
type contents struct {
	list    []content
	pending []part // media of tool results not yet placed
}

func (c *contents) add(role string, p part) {
	if p.FunctionResponse == nil {
		c.flush()
	}
	if n := len(c.list); n > 0 && c.list[n-1].Role == role {
		c.list[n-1].Parts = append(c.list[n-1].Parts, p)
		return
	}
	c.list = append(c.list, content{Role: role, Parts: []part{p}})
}

func (c *contents) addResultMedia(p part) { c.pending = append(c.pending, p) }

func (c *contents) flush() {
	if len(c.pending) == 0 {
		return
	}
	media := c.pending
	c.pending = nil
	for _, p := range media {
		c.add("user", p)
	}
}

func encodeMessages(msgs []ir.Message, out *request, loss *ir.Loss) error {
	// names of earlier tool calls, by id (as given and without a __thought__ suffix)
	callNames := map[string]string{}
	var c contents
	var system []part
	begun := false // a turn other than system came already
	for _, m := range msgs {
		if m.Name != "" {
			loss.Drop("messages[].name")
		}
		for _, p := range m.Parts {
			if p.CacheControl != nil {
				loss.Drop("messages[].cache_control")
			}
		}
		switch m.Role {
		case ir.RoleSystem:
			if begun {
				loss.Drop(ir.LossSystemPosition) // systemInstruction has no place in the turns
			}
			var text []string
			for _, p := range m.Parts {
				switch p.Kind {
				case ir.PartText:
					if p.Text != "" {
						text = append(text, p.Text)
					}
				default:
					loss.Drop("system.content") // systemInstruction takes text only
				}
			}
			if len(text) > 0 {
				system = append(system, part{Text: strptr(strings.Join(text, ""))})
			}
			continue
		case ir.RoleUser, ir.RoleAssistant, ir.RoleTool:
		default:
			return invalidRequest("messages", "unknown role %q", m.Role)
		}
		begun = true
		role := "user"
		if m.Role == ir.RoleAssistant {
			role = "model"
		}
		for _, p := range m.Parts {
			switch p.Kind {
			case ir.PartText:
				if sig := ownSignature(p); p.Text != "" || sig != "" {
					c.add(role, part{Text: strptr(p.Text), ThoughtSignature: sig})
				}
			case ir.PartImage, ir.PartFile:
				if gp, ok := mediaPart(p, loss); ok {
					gp.ThoughtSignature = ownSignature(p)
					c.add(role, gp)
				}
			case ir.PartReasoning:
				if gp, ok := reasoningPart(p.Reasoning, loss); ok && m.Role == ir.RoleAssistant {
					c.add(role, gp)
				}
			case ir.PartToolCall:
				tc := p.ToolCall
				if tc == nil {
					continue
				}
				callNames[tc.ID] = tc.Name
				if id, _ := ir.SplitCallID(tc.ID); id != tc.ID {
					callNames[id] = tc.Name
				}
				args, ok := argsObject(tc.Arguments)
				if !ok {
					loss.Drop("messages[].tool_calls[].arguments")
				}
				gp := part{FunctionCall: &functionCall{Name: tc.Name, Args: args}}
				if _, sig := ir.SplitCallID(tc.ID); tc.Signature == "" && sig != "" {
					gp.ThoughtSignature = sig // an id whose client decoder left the suffix on
				} else if tc.Signature != "" {
					if tc.SignatureFormat == signatureFormat {
						gp.ThoughtSignature = tc.Signature
					} else {
						loss.Drop("messages[].tool_calls[].signature")
					}
				}
				c.add("model", gp)
			case ir.PartToolResult:
				tr := p.ToolResult
				if tr == nil {
					continue
				}
				name := tr.Name
				if name == "" {
					name = callNames[tr.CallID]
				}
				if name == "" {
					id, _ := ir.SplitCallID(tr.CallID)
					name = callNames[id]
				}
				if name == "" {
					return invalidRequest("messages",
						"the tool result for call %q has no function name and no earlier tool call with that id", tr.CallID)
				}
				var text []string
				for _, rp := range tr.Content {
					switch rp.Kind {
					case ir.PartText:
						text = append(text, rp.Text)
					case ir.PartImage, ir.PartFile:
						if gp, ok := mediaPart(rp, loss); ok {
							c.addResultMedia(gp)
						}
					default:
						loss.Drop("messages[].tool_result." + kindName(rp.Kind))
					}
				}
				c.add("user", part{FunctionResponse: &functionResponse{
					Name: name, Response: resultObject(strings.Join(text, "\n"), tr.IsError)}})
			}
		}
	}
	c.flush()
	if c.list != nil {
		out.Contents = c.list
	}
	if len(system) > 0 {
		out.SystemInstruction = &content{Parts: system}
	}
	return nil
}

// ownSignature is a part's signature when Gemini issued it: it goes back on the same part.
func ownSignature(p ir.Part) string {
	if p.SignatureFormat == signatureFormat {
		return p.Signature
	}
	return ""
}

func kindName(k ir.PartKind) string {
	switch k {
	case ir.PartText:
		return "text"
	case ir.PartImage:
		return "image"
	case ir.PartFile:
		return "file"
	case ir.PartToolCall:
		return "tool_call"
	case ir.PartToolResult:
		return "tool_result"
	case ir.PartReasoning:
		return "reasoning"
	}
	return "part"
}

// reasoningPart sends back reasoning Gemini issued with a signature, as the thought part it
// came in. Gemini's own unsigned thought summaries are not model input and are left out;
// reasoning of other formats is dropped and reported (its signatures are foreign).
func reasoningPart(r *ir.Reasoning, loss *ir.Loss) (part, bool) {
	if r == nil {
		return part{}, false
	}
	if r.SignatureFormat != signatureFormat {
		if r.Text != "" || r.Signature != "" || r.Redacted != "" || r.Encrypted != "" {
			loss.Drop("messages[].reasoning")
		}
		return part{}, false
	}
	if r.Signature == "" {
		return part{}, false
	}
	return part{Text: strptr(r.Text), Thought: true, ThoughtSignature: r.Signature}, true
}

// mediaPart renders an image or file: inline data as inlineData; a URL as fileData (Gemini
// fetches no arbitrary URLs into inlineData) with the MIME type guessed from the extension.
func mediaPart(p ir.Part, loss *ir.Loss) (part, bool) {
	var mt, data, uri string
	isImage := p.Kind == ir.PartImage
	switch {
	case isImage && p.Image != nil:
		mt, data, uri = p.Image.MediaType, p.Image.Data, p.Image.URL
		if d := p.Image.Detail; d != "" && d != "auto" {
			loss.Drop("messages[].image.detail")
		}
	case !isImage && p.File != nil:
		mt, data, uri = p.File.MediaType, p.File.Data, p.File.URL
		if p.File.Name != "" {
			loss.Drop("messages[].file.filename")
		}
	default:
		return part{}, false
	}
	if data == "" {
		if dmt, d, ok := check.DataURL(uri); ok {
			data, uri = d, ""
			if mt == "" {
				mt = dmt
			}
		}
	}
	if data != "" {
		if mt == "" {
			mt = sniffMediaType(data, isImage)
		}
		return part{InlineData: &blob{MimeType: mt, Data: data}}, true
	}
	if uri == "" {
		return part{}, false
	}
	if mt == "" {
		mt = guessMediaType(uri, isImage)
	}
	return part{FileData: &fileData{MimeType: mt, FileURI: uri}}, true
}

var extMediaTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".heic": "image/heic", ".heif": "image/heif",
	".pdf": "application/pdf", ".txt": "text/plain", ".md": "text/md", ".html": "text/html",
	".csv": "text/csv", ".xml": "text/xml", ".json": "application/json",
	".wav": "audio/wav", ".mp3": "audio/mp3", ".aiff": "audio/aiff", ".aac": "audio/aac",
	".ogg": "audio/ogg", ".flac": "audio/flac",
	".mp4": "video/mp4", ".mpeg": "video/mpeg", ".mov": "video/mov", ".avi": "video/avi",
	".webm": "video/webm", ".wmv": "video/wmv", ".3gp": "video/3gpp",
}

// guessMediaType is the MIME type of a URL's extension; unknown: image/jpeg for images,
// application/pdf (the usual document) for files.
func guessMediaType(uri string, isImage bool) string {
	p := uri
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if mt, ok := extMediaTypes[strings.ToLower(path.Ext(p))]; ok {
		return mt
	}
	if isImage {
		return "image/jpeg"
	}
	return "application/pdf"
}

// sniffMediaType recognizes common formats by the base64 of their magic bytes.
func sniffMediaType(data string, isImage bool) string {
	for prefix, mt := range map[string]string{
		"iVBORw0KGgo": "image/png", "/9j/": "image/jpeg", "R0lGOD": "image/gif",
		"UklGR": "image/webp", "JVBERi0": "application/pdf",
	} {
		if strings.HasPrefix(data, prefix) {
			return mt
		}
	}
	if isImage {
		return "image/jpeg"
	}
	return "application/pdf"
}

// argsObject renders IR Arguments as the args object: "" → {}, an object compacted, and
// anything else (invalid JSON, not an object) wrapped as {"_raw": text} (ok false).
func argsObject(arguments string) (json.RawMessage, bool) {
	return appendArgsObject(nil, []byte(arguments))
}

// appendArgsObject appends argsObject's rendering of arguments to b.
func appendArgsObject(b, arguments []byte) ([]byte, bool) {
	t := bytes.TrimSpace(arguments)
	switch {
	case len(t) == 0:
		return append(b, "{}"...), true
	case t[0] == '{' && jsonscan.Valid(t):
		return jsonw.AppendCompact(b, t), true
	}
	raw, _ := json.Marshal(map[string]string{"_raw": string(arguments)})
	return append(b, raw...), false
}

// compactObject is raw compacted when it is one JSON object.
func compactObject(raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !jsonscan.Valid(raw) {
		return "", false
	}
	return string(jsonw.AppendCompact(make([]byte, 0, len(raw)), raw)), true
}

// resultObject is functionResponse.response, which must be an object: the result when it is
// a JSON object, else {"content": text}; errors are {"error": …} so the flag survives.
func resultObject(text string, isError bool) json.RawMessage {
	var v any = text
	if obj, ok := compactObject([]byte(text)); ok {
		if !isError {
			return json.RawMessage(obj)
		}
		v = json.RawMessage(obj)
	}
	key := "content"
	if isError {
		key = "error"
	}
	raw, _ := json.Marshal(map[string]any{key: v})
	return raw
}

func encodeTools(r *ir.Request, out *request, loss *ir.Loss) error {
	tc := r.ToolChoice
	var allowed map[string]bool // Allowed with auto: the tools are filtered
	mode := ""
	var names []string
	switch tc.Mode {
	case ir.ToolNone:
		mode = "NONE"
	case ir.ToolRequired:
		mode = "ANY"
		names = tc.Allowed
	case ir.ToolNamed:
		mode = "ANY"
		if tc.Name != "" {
			names = []string{tc.Name}
		} else {
			names = tc.Allowed
		}
	default: // auto, or the default
		if tc.Mode == ir.ToolAuto || len(tc.Allowed) > 0 {
			mode = "AUTO"
		}
		if len(tc.Allowed) > 0 {
			allowed = map[string]bool{}
			for _, n := range tc.Allowed {
				allowed[n] = true
			}
		}
	}

	var decls []functionDeclaration
	for _, t := range r.LoadedTools(loss) {
		if allowed != nil && !allowed[t.Name] {
			continue
		}
		d := functionDeclaration{Name: t.Name, Description: t.Description}
		if t.Strict != nil && *t.Strict {
			loss.Drop("tools[].strict")
		}
		if t.Custom {
			// A free-form tool becomes a function taking its input as one string.
			loss.Drop("tools[].custom")
			d.Parameters = object{{"type", "object"},
				{"properties", object{{"input", object{{"type", "string"}}}}},
				{"required", []any{"input"}}}
		} else if len(bytes.TrimSpace(t.Parameters)) > 0 && !bytes.Equal(bytes.TrimSpace(t.Parameters), []byte("null")) {
			params, err := sanitizeSchema(t.Parameters, "tools[].parameters.", loss)
			if err != nil {
				return invalidRequest("tools", "the parameters of tool %q are not valid JSON: %v", t.Name, err)
			}
			if params != nil {
				d.Parameters = params
			}
		}
		decls = append(decls, d)
	}
	if len(decls) == 0 {
		return nil // no toolConfig without tools: there is nothing to choose from
	}
	out.Tools = []tool{{FunctionDeclarations: decls}}
	if mode != "" {
		out.ToolConfig = &toolConfig{FunctionCallingConfig: functionCallingConfig{
			Mode: mode, AllowedFunctionNames: names}}
	}
	return nil
}

func encodeGeneration(r *ir.Request, loss *ir.Loss) (*generationConfig, error) {
	gc := generationConfig{Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK}
	if r.MaxTokens > 0 {
		gc.MaxOutputTokens = &r.MaxTokens
	}
	if len(r.Stop) > 0 {
		gc.StopSequences = r.Stop
		if len(r.Stop) > maxStopSequences {
			gc.StopSequences = r.Stop[:maxStopSequences]
			loss.Drop("stop")
		}
	}
	if err := encodeResponseFormat(r.ResponseFormat, &gc, loss); err != nil {
		return nil, err
	}
	gc.ThinkingConfig = encodeThinking(r.Thinking, loss)
	if gc.MaxOutputTokens == nil && gc.Temperature == nil && gc.TopP == nil && gc.TopK == nil &&
		gc.StopSequences == nil && gc.ResponseMimeType == "" && gc.ThinkingConfig == nil {
		return nil, nil
	}
	return &gc, nil
}

func encodeResponseFormat(raw json.RawMessage, gc *generationConfig, loss *ir.Loss) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(raw, &rf); err != nil {
		return invalidRequest("response_format", "response_format must be an object")
	}
	switch rf.Type {
	case "text":
	case "json_object":
		gc.ResponseMimeType = "application/json"
	case "json_schema":
		gc.ResponseMimeType = "application/json"
		if rf.JSONSchema != nil {
			if s := bytes.TrimSpace(rf.JSONSchema.Schema); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
				var b bytes.Buffer
				if err := json.Compact(&b, s); err != nil {
					return invalidRequest("response_format", "response_format.json_schema.schema is not valid JSON")
				}
				gc.ResponseJSONSchema = b.Bytes()
			}
		}
	default:
		loss.Drop("response_format")
	}
	return nil
}

// encodeThinking expresses the resolved thinking request as thinkingConfig: off → budget 0;
// a budget is copied, an effort becomes a budget; thought summaries are asked for whenever
// thinking is on.
func encodeThinking(t ir.Thinking, loss *ir.Loss) *thinkingConfig {
	zero := 0
	if (t.Enabled != nil && !*t.Enabled) || t.Effort == "none" {
		return &thinkingConfig{ThinkingBudget: &zero}
	}
	tc := thinkingConfig{}
	switch {
	case t.BudgetTokens > 0:
		b := t.BudgetTokens
		tc.ThinkingBudget = &b
	case t.Effort != "":
		b, ok := effortBudget[t.Effort]
		if !ok {
			loss.Drop("thinking")
			break
		}
		tc.ThinkingBudget = &b
	}
	if tc.ThinkingBudget == nil && (t.Enabled == nil || !*t.Enabled) {
		return nil // thinking not asked for: the model's default
	}
	tc.IncludeThoughts = true
	return &tc
}

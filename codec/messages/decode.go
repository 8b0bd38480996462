package messages

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
)

// Fields DecodeRequest maps into IR; every other top-level field travels in Request.Extra.
var mappedFields = map[string]bool{
	"model": true, "max_tokens": true, "messages": true, "system": true, "tools": true,
	"tool_choice": true, "thinking": true, "temperature": true, "top_p": true, "top_k": true,
	"stop_sequences": true, "stream": true, "metadata": true, "output_config": true,
}

// bad is a request the client must fix. The message starts with the field, because the
// messages error envelope has no param member.
func bad(param, format string, args ...any) *ir.Error {
	msg := fmt.Sprintf(format, args...)
	if param != "" {
		msg = param + ": " + msg
	}
	return &ir.Error{Status: 400, Kind: ir.ErrInvalidRequest, Code: "invalid_request", Param: param, Message: msg}
}

// typeProblem names the member of v a JSON type error is about, below at.
func typeProblem(at string, err error) *ir.Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		p := at
		if te.Field != "" {
			p += "." + te.Field
		}
		return bad(p, "must be %s, not %s", check.Kind(te.Type.Kind().String()), te.Value)
	}
	return bad(at, "%s", check.JSONProblem(err))
}

// ranges are the numeric members the Messages API bounds.
var ranges = []check.Range{
	{Param: "max_tokens", Min: 1, Max: check.Unbounded, Integer: true},
	{Param: "temperature", Min: 0, Max: 1},
	{Param: "top_p", Min: 0, Max: 1},
	{Param: "top_k", Min: 0, Max: check.Unbounded, Integer: true},
}

// DecodeRequest parses and checks a messages request.
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
		return nil, bad("", "the request body must be a JSON object")
	}
	r := &ir.Request{}
	get := func(name string, v any) *ir.Error {
		raw, ok := fields[name]
		if !ok || isNull(raw) {
			return nil
		}
		if err := json.Unmarshal(raw, v); err != nil {
			return typeProblem(name, err)
		}
		return nil
	}
	if err := get("model", &r.Model); err != nil || r.Model == "" {
		return nil, bad("model", "model is required and must be a non-empty string")
	}
	if raw, ok := fields["max_tokens"]; !ok || isNull(raw) {
		return nil, bad("max_tokens", "max_tokens is required")
	}
	if e := check.Ranges(fields, ranges); e != nil {
		return nil, e
	}
	if err := get("max_tokens", &r.MaxTokens); err != nil {
		return nil, err
	}
	if err := decodeMessages(fields["messages"], r); err != nil {
		return nil, err
	}
	if err := decodeSystem(fields["system"], r); err != nil {
		return nil, err
	}
	if err := decodeTools(fields, r); err != nil {
		return nil, err
	}
	if err := decodeThinking(fields["thinking"], &r.Thinking); err != nil {
		return nil, err
	}
	if err := decodeOutputConfig(fields["output_config"], r); err != nil {
		return nil, err
	}
	var meta map[string]json.RawMessage
	for _, e := range []*ir.Error{
		get("temperature", &r.Temperature), get("top_p", &r.TopP), get("top_k", &r.TopK),
		get("stop_sequences", &r.Stop), get("stream", &r.Stream), get("metadata", &meta),
	} {
		if e != nil {
			return nil, e
		}
	}
	var userID string
	if raw, ok := meta["user_id"]; ok && !isNull(raw) && json.Unmarshal(raw, &userID) != nil {
		return nil, bad("metadata.user_id", "must be a string")
	}
	// metadata, user_id included, goes back to a messages route only: Claude Code's user_id is
	// a JSON blob of device and session ids, not the end-user id another format's user means.
	if len(meta) > 0 {
		setExtra(r, "metadata", marshal(meta))
	}
	for k, v := range fields {
		if !mappedFields[k] {
			setExtra(r, k, v)
		}
	}
	return r, nil
}

func setExtra(r *ir.Request, k string, v json.RawMessage) {
	if r.Extra == nil {
		r.Extra = map[string]json.RawMessage{}
	}
	r.Extra[k] = v
}

type inMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func decodeMessages(raw json.RawMessage, r *ir.Request) *ir.Error {
	if isNull(raw) {
		return bad("messages", "messages is required")
	}
	var msgs []json.RawMessage
	if json.Unmarshal(raw, &msgs) != nil {
		return bad("messages", "messages must be an array of message objects")
	}
	if len(msgs) == 0 {
		return bad("messages", "messages must contain at least one message")
	}
	names := map[string]string{} // tool_use id → name, for tool results
	for i, mr := range msgs {
		at := fmt.Sprintf("messages[%d]", i)
		var m inMessage
		if err := json.Unmarshal(mr, &m); err != nil {
			return typeProblem(at, err)
		}
		if e := check.OneOf(at+".role", m.Role, "user", "assistant", "system"); e != nil {
			return e
		}
		if isNull(m.Content) {
			return bad(at+".content", "content is required")
		}
		if m.Role == "system" {
			// Newer clients put system turns between the others (Claude Code's environment
			// block after the first user turn): they stay in place.
			parts, err := systemParts(at+".content", m.Content)
			if err != nil {
				return err
			}
			if len(parts) > 0 {
				r.Messages = append(r.Messages, ir.Message{Role: ir.RoleSystem, Parts: parts})
			}
			continue
		}
		var parts, results []ir.Part
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			if text != "" {
				parts = []ir.Part{{Kind: ir.PartText, Text: text}}
			}
		} else {
			var blocks []json.RawMessage
			if json.Unmarshal(m.Content, &blocks) != nil {
				return bad(at+".content", "content must be a string or an array of content blocks")
			}
			for j, b := range blocks {
				bat := fmt.Sprintf("%s.content[%d]", at, j)
				p, marker, err := decodeBlock(bat, b, m.Role, names)
				switch {
				case err != nil:
					return err
				case marker != "":
					setExtra(r, extraBlocks+marker, json.RawMessage("true"))
				case p.Kind == ir.PartToolResult:
					results = append(results, p)
				default:
					parts = append(parts, p)
				}
			}
		}
		if len(results) > 0 {
			r.Messages = append(r.Messages, ir.Message{Role: ir.RoleTool, Parts: results})
			if len(parts) == 0 {
				continue
			}
		}
		r.Messages = append(r.Messages, ir.Message{Role: ir.Role(m.Role), Parts: parts})
	}
	return nil
}

// inBlock is every member of the content blocks DecodeRequest reads.
type inBlock struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text"`
	Source       json.RawMessage `json:"source"`
	Title        string          `json:"title"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      json.RawMessage `json:"content"`
	IsError      bool            `json:"is_error"`
	Thinking     string          `json:"thinking"`
	Signature    string          `json:"signature"`
	Data         *string         `json:"data"`
	CacheControl json.RawMessage `json:"cache_control"`
}

type inSource struct {
	Type      string  `json:"type"`
	MediaType string  `json:"media_type"`
	Data      *string `json:"data"`
	URL       string  `json:"url"`
}

// isServerBlock reports content blocks of server tools (server_tool_use,
// web_search_tool_result, mcp_tool_use, …), which IR cannot carry.
func isServerBlock(typ string) bool {
	if typ == "tool_use" || typ == "tool_result" {
		return false
	}
	return strings.HasSuffix(typ, "_tool_use") || strings.HasSuffix(typ, "_tool_result") ||
		typ == "search_result" || typ == "container_upload"
}

// decodeBlock reads one content block of a message. A server-tool block is dropped and
// named in marker instead.
func decodeBlock(at string, raw json.RawMessage, role string, names map[string]string) (ir.Part, string, *ir.Error) {
	var b inBlock
	if err := json.Unmarshal(raw, &b); err != nil {
		return ir.Part{}, "", typeProblem(at, err)
	}
	cc := cacheControl(b.CacheControl)
	onlyIn := func(want string) *ir.Error {
		if role != want {
			return bad(at+".type", "%s blocks belong in %s messages", b.Type, want)
		}
		return nil
	}
	switch b.Type {
	case "text":
		if b.Text == nil {
			return ir.Part{}, "", bad(at+".text", "text is required")
		}
		return ir.Part{Kind: ir.PartText, Text: *b.Text, CacheControl: cc}, "", nil
	case "image":
		img, err := decodeImage(at, b.Source)
		if err != nil {
			return ir.Part{}, "", err
		}
		return ir.Part{Kind: ir.PartImage, Image: img, CacheControl: cc}, "", nil
	case "document":
		f, err := decodeDocument(at, b.Source)
		if err != nil {
			return ir.Part{}, "", err
		}
		f.Name = b.Title
		return ir.Part{Kind: ir.PartFile, File: f, CacheControl: cc}, "", nil
	case "tool_use":
		if err := onlyIn("assistant"); err != nil {
			return ir.Part{}, "", err
		}
		if b.ID == "" {
			return ir.Part{}, "", bad(at+".id", "id is required")
		}
		if b.Name == "" {
			return ir.Part{}, "", bad(at+".name", "name is required")
		}
		args, ok := compactObject(b.Input)
		if !ok {
			return ir.Part{}, "", bad(at+".input", "input must be an object")
		}
		call := &ir.ToolCall{Name: b.Name, Arguments: args}
		call.ID, call.Signature = ir.SplitCallID(b.ID)
		if call.Signature != "" {
			call.SignatureFormat = "gemini"
		}
		names[call.ID] = b.Name
		return ir.Part{Kind: ir.PartToolCall, ToolCall: call, CacheControl: cc}, "", nil
	case "tool_result":
		if err := onlyIn("user"); err != nil {
			return ir.Part{}, "", err
		}
		if b.ToolUseID == "" {
			return ir.Part{}, "", bad(at+".tool_use_id", "tool_use_id is required")
		}
		id, _ := ir.SplitCallID(b.ToolUseID)
		res := &ir.ToolResult{CallID: id, Name: names[id], IsError: b.IsError}
		content, err := decodeResultContent(at+".content", b.Content)
		if err != nil {
			return ir.Part{}, "", err
		}
		res.Content = content
		return ir.Part{Kind: ir.PartToolResult, ToolResult: res, CacheControl: cc}, "", nil
	case "thinking":
		if err := onlyIn("assistant"); err != nil {
			return ir.Part{}, "", err
		}
		// Without a signature (display-only thinking this gateway rendered from another
		// format's reasoning) the block is plain reasoning text that no format owns.
		r := &ir.Reasoning{Text: b.Thinking, Signature: b.Signature}
		if b.Signature != "" {
			r.SignatureFormat = SignatureFormat
		}
		return ir.Part{Kind: ir.PartReasoning, Reasoning: r}, "", nil
	case "redacted_thinking":
		if err := onlyIn("assistant"); err != nil {
			return ir.Part{}, "", err
		}
		if b.Data == nil || *b.Data == "" {
			return ir.Part{}, "", bad(at+".data", "data is required")
		}
		return ir.Part{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{
			Redacted: *b.Data, SignatureFormat: SignatureFormat}}, "", nil
	case "":
		return ir.Part{}, "", bad(at+".type", "type is required")
	}
	if isServerBlock(b.Type) {
		return ir.Part{}, b.Type, nil
	}
	return ir.Part{}, "", bad(at+".type", "unknown content block type %q", b.Type)
}

func cacheControl(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return nil
	}
	return raw
}

func decodeSource(at string, raw json.RawMessage) (inSource, *ir.Error) {
	var s inSource
	if isNull(raw) {
		return s, bad(at+".source", "source is required")
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, typeProblem(at+".source", err)
	}
	return s, nil
}

// checkBase64 requires what a base64 source needs: data, valid base64, and its media type,
// one that m takes (check.Inline).
func checkBase64(at string, s inSource, m check.Media) *ir.Error {
	if s.Data == nil || *s.Data == "" {
		return bad(at+".source.data", "data is required")
	}
	if s.MediaType == "" {
		return bad(at+".source.media_type", "media_type is required")
	}
	return check.Inline(at+".source.media_type", s.MediaType, at+".source.data", *s.Data, m)
}

// checkURL requires what a url source needs: a URL the provider may fetch (check.MediaURL).
func checkURL(at string, s inSource, m check.Media) *ir.Error {
	if s.URL == "" {
		return bad(at+".source.url", "url is required")
	}
	return check.MediaURL(at+".source.url", s.URL, m)
}

func decodeImage(at string, raw json.RawMessage) (*ir.Image, *ir.Error) {
	s, err := decodeSource(at, raw)
	if err != nil {
		return nil, err
	}
	switch s.Type {
	case "base64":
		if err := checkBase64(at, s, check.Image); err != nil {
			return nil, err
		}
		return &ir.Image{MediaType: s.MediaType, Data: *s.Data}, nil
	case "url":
		if err := checkURL(at, s, check.Image); err != nil {
			return nil, err
		}
		return &ir.Image{URL: s.URL}, nil
	}
	return nil, bad(at+".source.type", "image source type %q is not supported (base64 or url)", s.Type)
}

func decodeDocument(at string, raw json.RawMessage) (*ir.File, *ir.Error) {
	s, err := decodeSource(at, raw)
	if err != nil {
		return nil, err
	}
	switch s.Type {
	case "base64":
		if err := checkBase64(at, s, check.File); err != nil {
			return nil, err
		}
		return &ir.File{MediaType: s.MediaType, Data: *s.Data}, nil
	case "text":
		if s.Data == nil {
			return nil, bad(at+".source.data", "data is required")
		}
		return &ir.File{MediaType: "text/plain", Data: base64.StdEncoding.EncodeToString([]byte(*s.Data))}, nil
	case "url":
		if err := checkURL(at, s, check.File); err != nil {
			return nil, err
		}
		return &ir.File{MediaType: "application/pdf", URL: s.URL}, nil
	}
	return nil, bad(at+".source.type", "document source type %q is not supported (base64, text or url)", s.Type)
}

// decodeResultContent reads a tool_result's content: a string, or text, image and document
// blocks.
func decodeResultContent(at string, raw json.RawMessage) ([]ir.Part, *ir.Error) {
	if isNull(raw) {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, nil
		}
		return []ir.Part{{Kind: ir.PartText, Text: s}}, nil
	}
	var blocks []json.RawMessage
	if json.Unmarshal(raw, &blocks) != nil {
		return nil, bad(at, "content must be a string or an array of content blocks")
	}
	parts := make([]ir.Part, 0, len(blocks))
	for k, b := range blocks {
		bat := fmt.Sprintf("%s[%d]", at, k)
		var t struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(b, &t) != nil {
			return nil, bad(bat, "a content block must be an object")
		}
		switch t.Type {
		case "text", "image", "document":
		default:
			return nil, bad(bat+".type", "tool_result content blocks are text, image or document, not %q", t.Type)
		}
		p, _, err := decodeBlock(bat, b, "user", nil)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// decodeSystem puts the system prompt first: one RoleSystem message per text block (a
// string is one block), each keeping its cache_control.
func decodeSystem(raw json.RawMessage, r *ir.Request) *ir.Error {
	parts, err := systemParts("system", raw)
	if err != nil {
		return err
	}
	sys := make([]ir.Message, 0, len(parts))
	for _, p := range parts {
		sys = append(sys, ir.Message{Role: ir.RoleSystem, Parts: []ir.Part{p}})
	}
	r.Messages = append(sys, r.Messages...)
	return nil
}

// systemParts reads system content: a string (one part, none when empty) or text blocks,
// each keeping its cache_control.
func systemParts(at string, raw json.RawMessage) ([]ir.Part, *ir.Error) {
	if isNull(raw) {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, nil
		}
		return []ir.Part{{Kind: ir.PartText, Text: s}}, nil
	}
	var blocks []struct {
		Type         string          `json:"type"`
		Text         *string         `json:"text"`
		CacheControl json.RawMessage `json:"cache_control"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, bad(at, "system content must be a string or an array of text blocks")
	}
	parts := make([]ir.Part, 0, len(blocks))
	for i, b := range blocks {
		bat := fmt.Sprintf("%s[%d]", at, i)
		if b.Type != "text" {
			return nil, bad(bat+".type", "system blocks must be text blocks, not %q", b.Type)
		}
		if b.Text == nil {
			return nil, bad(bat+".text", "text is required")
		}
		parts = append(parts, ir.Part{Kind: ir.PartText, Text: *b.Text, CacheControl: cacheControl(b.CacheControl)})
	}
	return parts, nil
}

package chat

import (
	"encoding/json"

	"github.com/modelgate/modelgate/codec/ir"
)

// EncodeIR renders an IR request for a chat-format route.
func EncodeIR(r *ir.Request, upstreamModel string, loss *ir.Loss) ([]byte, error) {
	out := map[string]any{}
	for k, v := range r.Extra {
		out[k] = v
	}
	out["model"] = upstreamModel
	msgs := make([]map[string]any, 0, len(r.Messages))
	for _, m := range r.Messages {
		msgs = append(msgs, encodeMessage(m, loss)...)
	}
	out["messages"] = msgs
	loaded := r.LoadedTools(loss)
	if len(loaded) > 0 {
		tools := make([]map[string]any, 0, len(loaded))
		for _, t := range loaded {
			fn := map[string]any{"name": t.Name}
			if t.Description != "" {
				fn["description"] = t.Description
			}
			if len(t.Parameters) > 0 {
				fn["parameters"] = t.Parameters
			} else if t.Custom {
				fn["parameters"] = json.RawMessage(`{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`)
			}
			if t.Strict != nil {
				fn["strict"] = *t.Strict
			}
			tools = append(tools, map[string]any{"type": "function", "function": fn})
		}
		out["tools"] = tools
	}
	if tc := encodeToolChoice(r.ToolChoice); tc != nil {
		out["tool_choice"] = tc
	}
	if r.Parallel != nil && len(loaded) > 0 {
		out["parallel_tool_calls"] = *r.Parallel
	}
	if r.MaxTokens > 0 {
		out["max_tokens"] = r.MaxTokens
	}
	setIf(out, "temperature", r.Temperature)
	setIf(out, "top_p", r.TopP)
	setIf(out, "top_k", r.TopK)
	if len(r.Stop) > 0 {
		out["stop"] = r.Stop
	}
	if r.Stream {
		out["stream"] = true
		out["stream_options"] = map[string]bool{"include_usage": true}
	}
	if len(r.ResponseFormat) > 0 {
		out["response_format"] = r.ResponseFormat
	}
	if r.User != "" {
		out["user"] = r.User
	}
	if field, v := nativeThinking(r.Thinking); field != "" {
		out[field] = v
	}
	if r.PreviousResponseID != "" {
		loss.Drop("previous_response_id")
	}
	return json.Marshal(out)
}

func setIf[T any](m map[string]any, k string, v *T) {
	if v != nil {
		m[k] = *v
	}
}

func encodeToolChoice(tc ir.ToolChoice) any {
	if len(tc.Allowed) > 0 {
		tools := make([]map[string]any, len(tc.Allowed))
		for i, n := range tc.Allowed {
			tools[i] = map[string]any{"type": "function", "function": map[string]string{"name": n}}
		}
		mode := "auto"
		if tc.Mode == ir.ToolRequired {
			mode = "required"
		}
		return map[string]any{"type": "allowed_tools", "allowed_tools": map[string]any{"mode": mode, "tools": tools}}
	}
	switch tc.Mode {
	case ir.ToolAuto, ir.ToolNone, ir.ToolRequired:
		return string(tc.Mode)
	case ir.ToolNamed:
		return map[string]any{"type": "function", "function": map[string]string{"name": tc.Name}}
	}
	return nil
}

func encodeMessage(m ir.Message, loss *ir.Loss) []map[string]any {
	switch m.Role {
	case ir.RoleTool:
		var out []map[string]any
		for _, p := range m.Parts {
			if p.Kind != ir.PartToolResult {
				continue
			}
			res := p.ToolResult
			msg := map[string]any{"role": "tool", "tool_call_id": res.CallID, "content": resultText(res, loss)}
			out = append(out, msg)
		}
		return out
	case ir.RoleAssistant:
		msg := map[string]any{"role": "assistant"}
		var text string
		var calls []map[string]any
		for _, p := range m.Parts {
			switch p.Kind {
			case ir.PartText:
				text += p.Text
			case ir.PartToolCall:
				calls = append(calls, map[string]any{"id": p.ToolCall.ID, "type": "function",
					"function": map[string]string{"name": p.ToolCall.Name, "arguments": p.ToolCall.Arguments}})
			case ir.PartReasoning:
				loss.Drop("messages[].reasoning") // chat-format upstreams take no reasoning history
			default:
				loss.Drop("messages[].content")
			}
		}
		if text != "" {
			msg["content"] = text
		} else {
			msg["content"] = nil
		}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		if m.Name != "" {
			msg["name"] = m.Name
		}
		return []map[string]any{msg}
	}
	role := "user"
	if m.Role == ir.RoleSystem {
		role = "system"
	}
	msg := map[string]any{"role": role, "content": encodeParts(m.Parts, loss)}
	if m.Name != "" {
		msg["name"] = m.Name
	}
	return []map[string]any{msg}
}

// encodeParts is a plain string when the content is text only (the shape every chat-format
// provider accepts), else an array of parts.
func encodeParts(parts []ir.Part, loss *ir.Loss) any {
	textOnly := true
	for _, p := range parts {
		if p.Kind != ir.PartText {
			textOnly = false
		}
		if len(p.CacheControl) > 0 {
			loss.Drop("messages[].cache_control")
		}
	}
	if textOnly {
		s := ""
		for i, p := range parts {
			if i > 0 {
				s += "\n\n"
			}
			s += p.Text
		}
		return s
	}
	out := make([]map[string]any, 0, len(parts))
	for _, p := range parts {
		switch p.Kind {
		case ir.PartText:
			out = append(out, map[string]any{"type": "text", "text": p.Text})
		case ir.PartImage:
			img := map[string]any{"url": ImageURL(p.Image)}
			if p.Image.Detail != "" {
				img["detail"] = p.Image.Detail
			}
			out = append(out, map[string]any{"type": "image_url", "image_url": img})
		case ir.PartFile:
			f := p.File
			if len(f.MediaType) > 6 && f.MediaType[:6] == "audio/" && f.Data != "" {
				out = append(out, map[string]any{"type": "input_audio", "input_audio": map[string]string{"data": f.Data, "format": f.MediaType[6:]}})
			} else if f.Data != "" {
				out = append(out, map[string]any{"type": "file", "file": map[string]string{"filename": f.Name, "file_data": "data:" + f.MediaType + ";base64," + f.Data}})
			} else {
				loss.Drop("messages[].content.file_url")
			}
		default:
			loss.Drop("messages[].content")
		}
	}
	return out
}

// ImageURL is the image as a URL: the original one, or a data: URL for inline data.
func ImageURL(img *ir.Image) string {
	if img.Data != "" {
		return "data:" + img.MediaType + ";base64," + img.Data
	}
	return img.URL
}

// resultText flattens a tool result to text: chat tool messages carry text only.
func resultText(r *ir.ToolResult, loss *ir.Loss) string {
	s := ""
	for _, p := range r.Content {
		if p.Kind == ir.PartText {
			if s != "" {
				s += "\n"
			}
			s += p.Text
		} else {
			loss.Drop("messages[].tool_result.image")
		}
	}
	if r.IsError && s != "" {
		return "Error: " + s
	}
	return s
}

package responses

import (
	"encoding/json"
	"unsafe"

	"github.com/modelgate/modelgate/codec/jsonw"
)

// The stream encoder's JSON, appended by hand to one reused buffer in the shapes (member
// order and omitted members) encoding/json gives the wire structs of response.go: a stream
// writes the response object three times and an item twice, so reflection on every event
// would cost more than the conversion itself. The part of the response object that echoes
// the request (parallel_tool_calls … truncation, and metadata) is written once per stream.

// responseEcho is the request's echo in a response object (wireResponse embeds it, so
// encoding/json writes its members in their place).
type responseEcho struct {
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Reasoning          reasoningConfig   `json:"reasoning"`
	Store              bool              `json:"store"`
	Temperature        float64           `json:"temperature"`
	Text               map[string]any    `json:"text"`
	ToolChoice         any               `json:"tool_choice"`
	Tools              []json.RawMessage `json:"tools"`
	TopP               float64           `json:"top_p"`
	Truncation         string            `json:"truncation"`
}

// defaultEcho and defaultMetadata are a request's echo with the API's defaults (no request
// parameters), as encoding/json writes them, without the echo's braces.
var defaultEcho, defaultMetadata = func() ([]byte, []byte) {
	w := newWireResponse("", "", 0, nil)
	echo, _ := json.Marshal(w.responseEcho)
	metadata, _ := json.Marshal(w.Metadata)
	return echo[1 : len(echo)-1], metadata
}()

// echoesDefaults reports a response whose echo is defaultEcho's.
func (w *wireResponse) echoesDefaults() bool {
	format, _ := w.Text["format"].(json.RawMessage)
	return w.ParallelToolCalls && w.PreviousResponseID == nil && w.Reasoning == (reasoningConfig{}) &&
		!w.Store && w.Temperature == 1 && len(w.Text) == 1 && string(format) == `{"type":"text"}` &&
		w.ToolChoice == any("auto") && w.Tools != nil && len(w.Tools) == 0 && w.TopP == 1 &&
		w.Truncation == "disabled" && string(w.Metadata) == "{}"
}

// echoJSON is the response's echo and metadata as encoding/json writes them; ok is false when
// encoding/json cannot write them (then it cannot write the response either: null).
func (w *wireResponse) echoJSON() (echo, metadata []byte, ok bool) {
	if w.echoesDefaults() {
		return defaultEcho, defaultMetadata, true
	}
	e, err1 := json.Marshal(w.responseEcho)
	m, err2 := json.Marshal(w.Metadata)
	if err1 != nil || err2 != nil {
		return nil, nil, false
	}
	return e[1 : len(e)-1], m, true
}

// appendResponse writes the response object with the stream's items as its output.
func (e *streamEncoder) appendResponse(b []byte, items []*streamItem) []byte {
	if !e.echoOK {
		return append(b, "null"...)
	}
	w := e.resp
	b = jsonw.String(append(b, `{"id":`...), w.ID)
	b = jsonw.String(append(b, `,"object":`...), w.Object)
	b = jsonw.Int(append(b, `,"created_at":`...), w.CreatedAt)
	b = jsonw.String(append(b, `,"status":`...), w.Status)
	b = appendOrNull(append(b, `,"completed_at":`...), w.CompletedAt, jsonw.Int)
	b = appendOrNull(append(b, `,"error":`...), w.Error, func(b []byte, e responseErrorBody) []byte {
		b = jsonw.String(append(b, `{"code":`...), e.Code)
		return append(jsonw.String(append(b, `,"message":`...), e.Message), '}')
	})
	b = appendOrNull(append(b, `,"incomplete_details":`...), w.IncompleteDetails, func(b []byte, d incompleteDetails) []byte {
		return append(jsonw.String(append(b, `{"reason":`...), d.Reason), '}')
	})
	b = appendOrNull(append(b, `,"instructions":`...), w.Instructions, jsonw.String)
	b = appendOrNull(append(b, `,"max_output_tokens":`...), w.MaxOutputTokens, func(b []byte, n int) []byte {
		return jsonw.Int(b, int64(n))
	})
	b = jsonw.String(append(b, `,"model":`...), w.Model)
	b = append(b, `,"output":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = it.appendWire(b)
	}
	b = append(append(b, "],"...), e.echo...)
	if u := w.Usage; u != nil {
		b = jsonw.Int(append(b, `,"usage":{"input_tokens":`...), u.InputTokens)
		b = jsonw.Int(append(b, `,"input_tokens_details":{"cached_tokens":`...), u.InputTokensDetails.CachedTokens)
		b = jsonw.Int(append(b, `,"cache_write_tokens":`...), u.InputTokensDetails.CacheWriteTokens)
		b = jsonw.Int(append(b, `},"output_tokens":`...), u.OutputTokens)
		b = jsonw.Int(append(b, `,"output_tokens_details":{"reasoning_tokens":`...), u.OutputTokensDetails.ReasoningTokens)
		b = jsonw.Int(append(b, `},"total_tokens":`...), u.TotalTokens)
		b = append(b, '}')
	}
	b = append(append(b, `,"metadata":`...), e.metadata...)
	return append(b, '}')
}

// appendOrNull writes *v with write, or null for nil.
func appendOrNull[T any](b []byte, v *T, write func([]byte, T) []byte) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return write(b, *v)
}

// appendWire writes the item as the output array shows it (wire's value).
func (it *streamItem) appendWire(b []byte) []byte {
	b = jsonw.String(append(b, `{"id":`...), it.id)
	done := it.status != "in_progress"
	switch it.kind {
	case kindMessage:
		b = jsonw.String(append(b, `,"type":"message","status":`...), it.status)
		b = append(b, `,"role":"assistant","content":[`...)
		if done {
			b = appendOutputText(b, it.text.String())
		}
		return append(b, "]}"...)
	case kindReasoning:
		b = append(b, `,"type":"reasoning","summary":[`...)
		if it.summary && done {
			b = appendSummaryText(b, it.text.String())
		}
		b = append(b, ']')
		if it.encrypted != "" {
			b = jsonw.String(append(b, `,"encrypted_content":`...), it.encrypted)
		}
		return append(b, '}')
	case kindCustom:
		b = jsonw.String(append(b, `,"type":"custom_tool_call","call_id":`...), it.callID)
		b = jsonw.String(append(b, `,"name":`...), it.name)
		input := ""
		if done {
			input = customInput(it.text.String())
		}
		return append(jsonw.String(append(b, `,"input":`...), input), '}')
	}
	b = jsonw.String(append(b, `,"type":"function_call","status":`...), it.status)
	b = jsonw.String(append(b, `,"call_id":`...), it.callID)
	b = jsonw.String(append(b, `,"name":`...), it.name)
	args := ""
	if done {
		args = it.text.String()
	}
	return append(jsonw.String(append(b, `,"arguments":`...), args), '}')
}

// appendOutputText writes newOutputText(text).
func appendOutputText(b []byte, text string) []byte {
	b = jsonw.String(append(b, `{"type":"output_text","text":`...), text)
	return append(b, `,"annotations":[],"logprobs":[]}`...)
}

// appendSummaryText writes wireText{"summary_text", text}.
func appendSummaryText(b []byte, text string) []byte {
	return append(jsonw.String(append(b, `{"type":"summary_text","text":`...), text), '}')
}

// bytesOf is s's bytes, for reading only (the scanner does not keep or change them).
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

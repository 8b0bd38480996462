package chat

import (
	"bytes"
	"encoding/json"

	"github.com/modelgate/modelgate/codec"
)

// wireUsage is the chat format's usage object. prompt_tokens includes cached tokens and
// completion_tokens includes reasoning tokens; Normalize splits them apart.
type wireUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens     int64 `json:"cached_tokens"`
		CacheWriteTokens int64 `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (w wireUsage) normalize() codec.Usage {
	u := codec.Usage{
		CacheRead:  w.PromptTokensDetails.CachedTokens,
		CacheWrite: w.PromptTokensDetails.CacheWriteTokens,
		Reasoning:  w.CompletionTokensDetails.ReasoningTokens,
	}
	u.Input = max(w.PromptTokens-u.CacheRead-u.CacheWrite, 0)
	u.Output = max(w.CompletionTokens-u.Reasoning, 0)
	return u
}

// ResponseUsage reads the usage of a whole (non-streamed) chat-format answer. It also serves
// embeddings answers, whose usage has the same prompt_tokens field.
func ResponseUsage(body []byte) (codec.Usage, bool) {
	var r struct {
		Usage *wireUsage `json:"usage"`
	}
	if json.Unmarshal(body, &r) != nil || r.Usage == nil {
		return codec.Usage{}, false
	}
	return r.Usage.normalize(), true
}

var usageKey = []byte(`"usage":{`)

// ChunkUsage reads a stream chunk's usage. usageOnly reports the final chunk with no
// choices that exists only because include_usage was on.
func ChunkUsage(data []byte) (u codec.Usage, usageOnly, ok bool) {
	if !bytes.Contains(data, usageKey) { // cheap pre-check: most chunks carry "usage":null or none
		return codec.Usage{}, false, false
	}
	var c struct {
		Choices []json.RawMessage `json:"choices"`
		Usage   *wireUsage        `json:"usage"`
	}
	if json.Unmarshal(data, &c) != nil || c.Usage == nil {
		return codec.Usage{}, false, false
	}
	return c.Usage.normalize(), len(c.Choices) == 0, true
}

// RewriteModel swaps the upstream's model id for the one the client asked for, in place of
// a full decode and re-encode per chunk. JSON escapes quotes inside strings, so the quoted
// key-value pair cannot match inside content.
func RewriteModel(data []byte, upstream, client string) []byte {
	if upstream == client {
		return data
	}
	from := modelPair(upstream)
	i := bytes.Index(data, from)
	if i < 0 {
		return data
	}
	to := modelPair(client)
	out := make([]byte, 0, len(data)-len(from)+len(to))
	out = append(out, data[:i]...)
	out = append(out, to...)
	return append(out, data[i+len(from):]...)
}

func modelPair(model string) []byte {
	v, _ := json.Marshal(model)
	return append([]byte(`"model":`), v...)
}

// IsDone reports the stream's terminator.
func IsDone(data []byte) bool { return bytes.Equal(data, []byte("[DONE]")) }

// ErrorBody is the chat format's error envelope.
func ErrorBody(message, typ, code, param string) []byte {
	type inner struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	e := inner{Message: message, Type: typ}
	if param != "" {
		e.Param = &param
	}
	if code != "" {
		e.Code = &code
	}
	b, _ := json.Marshal(struct {
		Error inner `json:"error"`
	}{e})
	return b
}

package chat

import (
	"encoding/json"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

// wireUsage is the chat format's usage object. prompt_tokens includes cached tokens;
// completion_tokens includes reasoning tokens, except at providers that count them beside it
// (codec.VisibleOutput); normalize splits them apart.
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
	TotalTokens int64 `json:"total_tokens"`
}

func (w wireUsage) normalize() codec.Usage {
	return codec.InclusiveUsage(w.PromptTokens, w.PromptTokensDetails.CachedTokens, w.PromptTokensDetails.CacheWriteTokens,
		w.CompletionTokens, w.CompletionTokensDetails.ReasoningTokens, w.TotalTokens)
}

// ResponseUsage reads the usage of a whole (non-streamed) chat-format answer. It also serves
// embeddings answers, whose usage has the same prompt_tokens field.
func ResponseUsage(body []byte) (codec.Usage, bool) {
	at, ok := jsonscan.Member(body, "usage") // found by a scan: only the usage is decoded
	if !ok {
		return codec.Usage{}, false
	}
	return UsageOf(body[at.Start:at.End])
}

// UsageOf normalizes a chat usage object (nil or null: none).
func UsageOf(raw []byte) (codec.Usage, bool) {
	return codec.UsageFrom(raw, (*wireUsage).normalize)
}

// RewriteModel names the client's model in a whole chat answer, a stream chunk or an
// embeddings answer: the top-level model member, whatever its value and spacing, every other
// byte kept. Text that is not a JSON object is returned as it is.
func RewriteModel(data []byte, client string) []byte {
	out, _ := jsonscan.Replace(data, quote(client), modelPath)
	return out
}

var modelPath = []string{"model"}

func quote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

const doneMarker = "[DONE]"

// IsDone reports the stream's terminator.
func IsDone(data []byte) bool { return string(data) == doneMarker }

// ErrorBody is the chat format's error envelope.
func ErrorBody(message, typ, code, param string) []byte {
	return ErrorBodyFor("", message, typ, code, param)
}

// ErrorBodyFor is ErrorBody carrying the request id in the error object ("" = none).
func ErrorBodyFor(requestID, message, typ, code, param string) []byte {
	type inner struct {
		Message   string  `json:"message"`
		Type      string  `json:"type"`
		Param     *string `json:"param"`
		Code      *string `json:"code"`
		RequestID string  `json:"request_id,omitempty"`
	}
	e := inner{Message: message, Type: typ, RequestID: requestID}
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

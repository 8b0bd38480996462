package simulator

import (
	"encoding/json"
	"unicode/utf8"
)

// argumentFragmentBytes is the largest piece of a tool call's arguments per chunk. Small
// fragments that split JSON tokens mid-way make gateways prove they concatenate per index
// instead of parsing each fragment.
const argumentFragmentBytes = 5

// chatChunk is one chat.completion.chunk.
type chatChunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	// Usage is absent without include_usage; with it, null on every chunk but the last.
	Usage json.RawMessage `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int     `json:"index"`
	Delta        any     `json:"delta"`
	Logprobs     any     `json:"logprobs"` // always null
	FinishReason *string `json:"finish_reason"`
}

// roleDelta opens the message. Content is "" for text and null for tool calls, matching the
// non-streaming message.
type roleDelta struct {
	Role    string  `json:"role"`
	Content *string `json:"content"`
	Refusal *string `json:"refusal"`
}

type contentDelta struct {
	Content string `json:"content"`
}

type toolCallsDelta struct {
	ToolCalls []toolCallFragment `json:"tool_calls"`
}

// toolCallFragment omits id, type and name on continuation fragments: sending them as null
// breaks strict accumulators (wire-formats.md §2.7).
type toolCallFragment struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// streamChat sends the answer as chunks: role, one chunk per word or argument fragment, the
// finish_reason chunk, the usage chunk (only with include_usage), then [DONE].
func streamChat(ex *exchange, a chatAnswer, includeUsage bool) {
	sse := startSSE(ex.w, ex.r, ex.behavior)
	for _, c := range chatChunks(a, includeUsage) {
		if sse.send("", c) != nil {
			return // client gone or connection dropped on purpose
		}
	}
	_ = sse.sendRaw("data: [DONE]\n\n")
}

// chatChunks lays out the whole stream up front, so what is sent is decided in one place and
// how it is sent (pacing, dropping) in another.
func chatChunks(a chatAnswer, includeUsage bool) []chatChunk {
	var usageNull json.RawMessage
	if includeUsage {
		usageNull = json.RawMessage("null")
	}
	chunk := func(delta any, finish *string) chatChunk {
		return chatChunk{
			ID: a.id, Object: "chat.completion.chunk", Created: a.created, Model: a.model,
			SystemFingerprint: systemFingerprint,
			Choices:           []chunkChoice{{Delta: delta, FinishReason: finish}},
			Usage:             usageNull,
		}
	}

	open := roleDelta{Role: "assistant"}
	if len(a.toolCalls) == 0 {
		open.Content = new(string)
	}
	chunks := []chatChunk{chunk(open, nil)}
	if len(a.toolCalls) == 0 {
		for i, w := range a.words {
			if i > 0 {
				w = " " + w
			}
			chunks = append(chunks, chunk(contentDelta{Content: w}, nil))
		}
	}
	for i, tc := range a.toolCalls {
		first := toolCallFragment{Index: i, ID: tc.ID, Type: tc.Type}
		first.Function.Name = tc.Function.Name
		chunks = append(chunks, chunk(toolCallsDelta{[]toolCallFragment{first}}, nil))
		for _, piece := range splitUTF8(tc.Function.Arguments, argumentFragmentBytes) {
			next := toolCallFragment{Index: i}
			next.Function.Arguments = piece
			chunks = append(chunks, chunk(toolCallsDelta{[]toolCallFragment{next}}, nil))
		}
	}
	finish := a.finish
	chunks = append(chunks, chunk(struct{}{}, &finish))

	if includeUsage {
		usage, _ := json.Marshal(a.usage) // a struct of ints cannot fail to encode
		last := chunk(nil, nil)
		last.Choices = []chunkChoice{}
		last.Usage = usage
		chunks = append(chunks, last)
	}
	return chunks
}

// splitUTF8 cuts s into pieces of at most limit bytes without splitting a character: JSON
// encoding would turn half a character into U+FFFD and corrupt the concatenated arguments.
func splitUTF8(s string, limit int) []string {
	var out []string
	for len(s) > 0 {
		n := 0
		for n < len(s) {
			_, size := utf8.DecodeRuneInString(s[n:])
			if n > 0 && n+size > limit {
				break
			}
			n += size
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

package simulator

import (
	"encoding/json"
	"net/http"
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
// breaks strict accumulators.
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
// finish_reason chunk, the usage chunk (only with include_usage), then [DONE]. A mid-stream
// failure is a data chunk holding only an "error" object (openai-go turns any such chunk into
// a stream error), after which the stream ends without [DONE].
func streamChat(ex *exchange, a chatAnswer, includeUsage bool) {
	sc := chatChunks(a, includeUsage)
	playChatStream(ex, sc.events, sc.failed)
}

// playChatStream sends laid-out chat chunks, then [DONE] unless the stream failed.
func playChatStream(ex *exchange, events []sseEvent, failed bool) {
	st := startSSE(ex.w, ex.r, ex.behavior)
	for _, ev := range events {
		if st.emit(ev) != nil {
			return // client gone or connection dropped on purpose
		}
	}
	if !failed {
		_ = st.sendRaw("data: [DONE]\n\n")
	}
}

// chatMidstreamError is the error chunk of a stream that fails after HTTP 200.
func chatMidstreamError() []sseEvent {
	e := openAIFailure(http.StatusInternalServerError)
	return []sseEvent{{data: obj{{"error", obj{
		{"message", e.Message}, {"type", e.Type}, {"param", nil}, {"code", nil}}}}}}
}

// chatChunks lays out the whole stream up front.
func chatChunks(a chatAnswer, includeUsage bool) *script {
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
	sc := newScript(a.answer, chatMidstreamError)

	open := roleDelta{Role: "assistant"}
	if len(a.toolCalls) == 0 {
		open.Content = new(string)
	}
	sc.add("", chunk(open, nil))
	if len(a.toolCalls) == 0 {
		for i, w := range a.answer.words {
			if i > 0 {
				w = " " + w
			}
			sc.addDelta("", chunk(contentDelta{Content: w}, nil))
		}
	}
	for i, tc := range a.toolCalls {
		first := toolCallFragment{Index: i, ID: tc.ID, Type: tc.Type}
		first.Function.Name = tc.Function.Name
		sc.add("", chunk(toolCallsDelta{[]toolCallFragment{first}}, nil))
		for _, piece := range splitUTF8(tc.Function.Arguments, argumentFragmentBytes) {
			next := toolCallFragment{Index: i}
			next.Function.Arguments = piece
			sc.addDelta("", chunk(toolCallsDelta{[]toolCallFragment{next}}, nil))
		}
	}
	sc.ending()
	finish := a.finish
	sc.add("", chunk(struct{}{}, &finish))

	if includeUsage {
		usage, _ := json.Marshal(a.usage) // a struct of ints cannot fail to encode
		last := chunk(nil, nil)
		last.Choices = []chunkChoice{}
		last.Usage = usage
		sc.add("", last)
	}
	return sc
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

package chat

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

// A chat route's answer reaches a chat client with its own bytes, except where the provider
// strays from the convention the official SDKs read: usage whose completion_tokens leave the
// reasoning out (xAI), and content sent as an array of parts (Mistral's thinking models). Both
// are rewritten in place, in whole answers (RewriteAnswer) and in stream chunks (Relay).

// contentPiece is a run of answer text, or of reasoning, from a content array.
type contentPiece struct {
	reasoning bool
	text      string
}

// answerPart is one element of an answer's content array: Mistral sends {"type":"text","text"}
// and {"type":"thinking","thinking":[{"type":"text","text"}…]} (its reference chunks carry no
// text).
type answerPart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Refusal  string          `json:"refusal"`
	Thinking json.RawMessage `json:"thinking"`
}

// contentPieces reads a content array in order, adjacent runs of one kind joined. Parts with
// nothing a chat answer can show are left out and named in loss (answer.content.<type>).
func contentPieces(raw []byte, loss *ir.Loss) ([]contentPiece, error) {
	var parts []answerPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, err
	}
	var out []contentPiece
	add := func(reasoning bool, text string) {
		switch {
		case text == "":
		case len(out) > 0 && out[len(out)-1].reasoning == reasoning:
			out[len(out)-1].text += text
		default:
			out = append(out, contentPiece{reasoning, text})
		}
	}
	for _, p := range parts {
		switch p.Type {
		case "text":
			add(false, p.Text)
		case "refusal":
			add(false, p.Refusal)
		case "thinking":
			add(true, thinkingText(p.Thinking, loss))
		default:
			loss.Drop("answer.content." + p.Type)
		}
	}
	return out, nil
}

// thinkingText is the text of a thinking part: a string, or Mistral's array of chunks.
func thinkingText(raw json.RawMessage, loss *ir.Loss) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var chunks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &chunks)
	var b strings.Builder
	for _, c := range chunks {
		if c.Type == "text" || c.Type == "" {
			b.WriteString(c.Text)
		} else {
			loss.Drop("answer.content.thinking." + c.Type)
		}
	}
	return b.String()
}

// contentEdits rewrites a message or delta object (data[start:end]) whose content is an array
// into the chat convention: content a string (null when only reasoning came), the reasoning
// in reasoning_content (after any the object already carries).
func contentEdits(data []byte, start, end int, loss *ir.Loss, edits []jsonscan.Edit) []jsonscan.Edit {
	obj := data[start:end]
	var content, reasoning jsonscan.Span
	_ = jsonscan.Members(obj, func(k []byte, v jsonscan.Span) bool {
		switch {
		case jsonscan.KeyIs(k, "content"):
			content = v
		case jsonscan.KeyIs(k, "reasoning_content"):
			reasoning = v
		}
		return true
	})
	if content.End == 0 || obj[content.Start] != '[' {
		return edits
	}
	pieces, err := contentPieces(obj[content.Start:content.End], loss)
	if err != nil {
		return edits
	}
	var text, thought strings.Builder
	for _, p := range pieces {
		if p.reasoning {
			thought.WriteString(p.text)
		} else {
			text.WriteString(p.text)
		}
	}
	newContent := []byte("null")
	if text.Len() > 0 {
		newContent = quote(text.String())
	}
	edits = append(edits, jsonscan.Edit{Span: jsonscan.Span{Start: start + content.Start, End: start + content.End}, New: newContent})
	if thought.Len() == 0 {
		return edits
	}
	if reasoning.End == 0 {
		ins := append([]byte(`,"reasoning_content":`), quote(thought.String())...)
		return append(edits, jsonscan.Edit{Span: jsonscan.Span{Start: start + content.End, End: start + content.End}, New: ins})
	}
	var before string
	_ = json.Unmarshal(obj[reasoning.Start:reasoning.End], &before) // null or absent: nothing before
	return append(edits, jsonscan.Edit{Span: jsonscan.Span{Start: start + reasoning.Start, End: start + reasoning.End}, New: quote(before + thought.String())})
}

// usageEdit gives a usage object (data[at.Start:at.End], read into w) the chat convention's
// completion_tokens, reasoning included, when the provider counted it beside them; the total
// already adds up then, and every other byte stays.
func usageEdit(data []byte, at jsonscan.Span, w wireUsage, edits []jsonscan.Edit) []jsonscan.Edit {
	reasoning := w.CompletionTokensDetails.ReasoningTokens
	if !codec.ReasoningBeside(w.PromptTokens, w.CompletionTokens, reasoning, w.TotalTokens) {
		return edits
	}
	obj := data[at.Start:at.End]
	n, ok := jsonscan.Member(obj, "completion_tokens")
	if !ok {
		return edits
	}
	return append(edits, jsonscan.Edit{Span: jsonscan.Span{Start: at.Start + n.Start, End: at.Start + n.End},
		New: strconv.AppendInt(nil, w.CompletionTokens+reasoning, 10)})
}

// applySorted makes edits collected out of order (a delta's content may follow its tool calls).
func applySorted(data []byte, edits []jsonscan.Edit) []byte {
	sortEdits(edits)
	return jsonscan.Apply(data, edits)
}

func sortEdits(edits []jsonscan.Edit) {
	if len(edits) > 1 {
		slices.SortStableFunc(edits, func(a, b jsonscan.Edit) int { return a.Start - b.Start })
	}
}

// RewriteAnswer readies a whole chat-format answer for a chat client: the client's model name,
// usage in the chat convention, and content arrays as a string plus reasoning_content (parts
// with no place there named in loss). Every other byte is the upstream's; text that is not a
// JSON object is returned as it is. Embeddings answers, with neither, only get the model.
func RewriteAnswer(body []byte, client string, loss *ir.Loss) []byte {
	out, _, _ := RelayAnswer(body, client, loss)
	return out
}

// RelayAnswer is RewriteAnswer that also reads the answer's usage (normalized; ok false when
// it has none), in the same scan: a same-format relay bills from it.
func RelayAnswer(body []byte, client string, loss *ir.Loss) (_ []byte, _ codec.Usage, ok bool) {
	model := quote(client)
	var edits []jsonscan.Edit
	var usage codec.Usage
	err := jsonscan.Members(body, func(k []byte, v jsonscan.Span) bool {
		val := body[v.Start:v.End]
		switch {
		case jsonscan.KeyIs(k, "model"):
			if !bytes.Equal(val, model) {
				edits = append(edits, jsonscan.Edit{Span: v, New: model})
			}
		case jsonscan.KeyIs(k, "usage"):
			// The last usage member counts, as a decoder reads it; null is none.
			var w *wireUsage
			usage, ok = codec.Usage{}, false
			if json.Unmarshal(val, &w) == nil && w != nil {
				usage, ok = w.normalize(), true
				edits = usageEdit(body, v, *w, edits)
			}
		case jsonscan.KeyIs(k, "choices") && val[0] == '[':
			_ = jsonscan.Elements(val, func(c jsonscan.Span) bool {
				elem := val[c.Start:c.End]
				if m, ok := jsonscan.Member(elem, "message"); ok && elem[m.Start] == '{' {
					base := v.Start + c.Start
					edits = contentEdits(body, base+m.Start, base+m.End, loss, edits)
				}
				return true
			})
		}
		return true
	})
	if err != nil {
		return body, codec.Usage{}, false
	}
	return applySorted(body, edits), usage, ok
}

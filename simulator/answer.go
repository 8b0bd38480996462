package simulator

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// The answer logic shared by every wire format. A format decodes its request into an ask,
// decide turns the ask into an answer, and the format renders the answer in its own shape
// (bodies, stream events, ids). Nothing here knows about any wire format, so the same prompt
// gets the same words, tool calls, reasoning and token counts whichever format asked:
//   - tools offered, tool choice not "none", the conversation ends with a user turn that carries
//     no tool results, system turns after it aside (see lastTurn) → tool calls: the forced tool, else the first tool, else
//     all tools when the last user text says "parallel" and parallel calls are allowed; the
//     arguments are the plainest the schema allows (sampleargs.go);
//   - otherwise text: "Simulated reply from <model>." plus filler words, 16 words in all, or N
//     when the last user text says "reply with N words"; a stop sequence equal to one of those
//     words ends the answer before it; the output cap cuts it;
//   - with thinking on, reasoning comes first: "Simulated reasoning." plus filler, 8 words,
//     counted as output (and as reasoning) tokens and taken from the same output cap;
//   - "cached N" in the last user text reports N of the prompt tokens as cache reads;
//   - "midstream error" in the last user text makes a stream fail after two content deltas;
//   - "content filter" in the last user text marks the answer as caught by a provider's content
//     filter: Azure OpenAI withholds it (finish_reason "content_filter"); other formats, whose
//     providers have no such filter on these APIs, answer as usual.

const (
	// thinkingWords is the length of the reasoning when thinking is on.
	thinkingWords = 8
	// midstreamFailAfter is how many content deltas a stream carries before the injected
	// mid-stream failure.
	midstreamFailAfter = 2
)

var (
	midstreamRe     = regexp.MustCompile(`(?i)\bmidstream error\b`)
	contentFilterRe = regexp.MustCompile(`(?i)\bcontent filter\b`)
)

// ask is what the answer depends on, whatever the format of the request.
type ask struct {
	model        string
	promptTokens int        // words in everything the model reads (system, turns, tool traffic)
	lastUser     string     // text of the last user turn; directives are read from it
	userTurn     bool       // the conversation ends with a user turn that carries no tool results (system turns aside)
	tools        []toolSpec // callable function tools, in request order
	choice       toolChoice // mode "auto", "required" or "none"; forced names one tool of tools
	parallel     bool       // several tool calls in one answer are allowed
	maxTokens    int        // output cap, reasoning included; 0 means none
	stop         []string   // stop sequences
	thinking     bool       // the model reasons before answering
}

// lastTurn is what the messages after the last model turn carry. It is a user turn, one that
// may get tool calls, when it has user content and no tool result: real CLIs send text next
// to tool results (Claude Code's <system-reminder> blocks, Gemini CLI's extra parts, a chat
// user message after the tool messages), and such a turn still answers the model's calls, so
// it gets text, or an agent would call the tool again forever.
type lastTurn struct{ user, results bool }

func (t *lastTurn) model()          { *t = lastTurn{} }
func (t *lastTurn) userContent()    { t.user = true }
func (t *lastTurn) toolResults()    { t.results = true }
func (t lastTurn) isUserTurn() bool { return t.user && !t.results }

// toolSpec is one function tool the model may call.
type toolSpec struct {
	name   string
	params json.RawMessage // JSON-schema object; empty for a tool without parameters
}

// finishReason is why the answer ended; each format names it in its own words.
type finishReason int

const (
	finishStop         finishReason = iota // the answer is complete
	finishLength                           // the output cap cut it
	finishToolCalls                        // the answer is tool calls
	finishStopSequence                     // a stop sequence ended it
)

// answer is what the simulated model says, independent of how it is delivered.
type answer struct {
	reasoning    []string // reasoning words; nil when the model did not think
	words        []string // text answer; nil for tool calls
	calls        []toolCall
	finish       finishReason
	stopSequence string // the stop sequence that ended the answer (finishStopSequence)

	promptTokens    int // all input tokens, cached ones included
	cachedTokens    int // input tokens read from the cache
	outputTokens    int // all output tokens, reasoning included
	reasoningTokens int

	failMidstream bool // a stream of this answer fails after midstreamFailAfter deltas
	filtered      bool // a content filter caught the answer (Azure withholds it)
}

// toolCall is one call the answer makes. Ids are minted by each format.
type toolCall struct {
	name      string
	arguments string // a compact JSON object
}

// text is the text answer as one string.
func (a answer) text() string { return strings.Join(a.words, " ") }

// reasoningText is the reasoning as one string.
func (a answer) reasoningText() string { return strings.Join(a.reasoning, " ") }

// uncachedTokens is the part of the prompt not read from the cache.
func (a answer) uncachedTokens() int { return a.promptTokens - a.cachedTokens }

// decide computes the answer to q.
func decide(q ask) answer {
	a := answer{promptTokens: max(q.promptTokens, 1)} // a real tokenizer never reports 0
	if n, ok := directiveInt(cachedRe, q.lastUser); ok {
		a.cachedTokens = min(n, a.promptTokens)
	}
	a.failMidstream = midstreamRe.MatchString(q.lastUser)
	a.filtered = contentFilterRe.MatchString(q.lastUser)

	// left is the output budget still unspent; -1 means unlimited.
	left := -1
	if q.maxTokens > 0 {
		left = q.maxTokens
	}
	if q.thinking {
		n := thinkingWords
		if left >= 0 && left < n {
			n = left
		}
		a.reasoning = prefixedWords(reasoningPrefix, n)
		a.reasoningTokens = n
		a.outputTokens = n
		if left >= 0 {
			left -= n
		}
		if n < thinkingWords {
			a.finish = finishLength // the cap ran out while thinking
			return a
		}
	}

	if calls := q.toolsToCall(); len(calls) > 0 {
		if left == 0 {
			a.finish = finishLength // thinking used the whole cap; no room for the call
			return a
		}
		a.finish = finishToolCalls
		for _, t := range calls {
			args, props := sampleArguments(t.params)
			a.calls = append(a.calls, toolCall{name: t.name, arguments: args})
			a.outputTokens += 1 + props
		}
		return a
	}

	n := defaultReplyWords
	if asked, ok := directiveInt(replyWithRe, q.lastUser); ok {
		n = min(asked, maxReplyWords)
	}
	words := replyWords(q.model, n)
	a.finish = finishStop
	for i, w := range words {
		if slices.Contains(q.stop, w) {
			words, a.finish, a.stopSequence = words[:i], finishStopSequence, w
			break
		}
	}
	if left >= 0 && left < len(words) {
		words, a.finish, a.stopSequence = words[:left], finishLength, ""
	}
	a.words = words
	a.outputTokens += len(words)
	return a
}

// toolsToCall picks which tools the answer calls, or nil for a text answer. The rules make
// every case reachable from a test prompt: a forced tool, the first tool, or all tools when
// the user asks for "parallel" and parallel calls are allowed.
func (q ask) toolsToCall() []toolSpec {
	// Only a user turn gets tool calls: after tool results the model answers in text, so a
	// gateway's agent loop against the simulator terminates.
	if len(q.tools) == 0 || q.choice.mode == "none" || !q.userTurn {
		return nil
	}
	if q.choice.forced != "" {
		for _, t := range q.tools {
			if t.name == q.choice.forced {
				return []toolSpec{t}
			}
		}
		return nil // formats reject an unknown forced tool before asking
	}
	if q.parallel && parallelRe.MatchString(q.lastUser) {
		return q.tools
	}
	return q.tools[:1]
}

// reasoningPrefix starts every reasoning text.
const reasoningPrefix = "Simulated reasoning."

// signature is the simulator's opaque proof of a reasoning text (Anthropic thinking
// signature, Gemini thoughtSignature, Responses encrypted_content): a keyed hash, so a
// signature is stable across runs and processes, and a format can verify that reasoning sent
// back in a later request is byte-identical to what it produced, as the real APIs do.
func signature(kind, text string) string {
	sum := sha256.Sum256([]byte("modelgate-simulator/" + kind + "\x00" + text))
	return base64.StdEncoding.EncodeToString(append(sum[:], sum[:16]...))
}

// compactJSON is raw with insignificant whitespace removed, so token counts of JSON values
// (tool inputs, function arguments) do not depend on how the client indented them. Invalid
// JSON is returned as it is.
func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

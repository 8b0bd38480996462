package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bedrock Converse (POST /model/{modelId}/converse): the shared answer in Converse's shape.
// This file decodes a Converse request into the shared ask, with the checks Bedrock makes
// that a translating gateway most often fails (roles alternating from a user turn, no blank
// text, toolResult blocks answering exactly the previous turn's toolUse blocks, a toolConfig
// whenever tool blocks appear, the model's thinking rules), and renders the answer;
// converse_stream.go renders ConverseStream. Thinking is asked for as Anthropic asks it,
// inside additionalModelRequestFields.thinking, and answered as reasoningContent.

type converseRequest struct {
	Messages                     []converseMessage        `json:"messages"`
	System                       []converseBlock          `json:"system"`
	InferenceConfig              *converseInferenceConfig `json:"inferenceConfig"`
	ToolConfig                   *converseToolConfig      `json:"toolConfig"`
	AdditionalModelRequestFields json.RawMessage          `json:"additionalModelRequestFields"`
}

type converseInferenceConfig struct {
	MaxTokens     *int     `json:"maxTokens"`
	Temperature   *float64 `json:"temperature"`
	TopP          *float64 `json:"topP"`
	StopSequences []string `json:"stopSequences"`
}

type converseMessage struct {
	Role    string          `json:"role"`
	Content []converseBlock `json:"content"`
}

// converseBlock is a ContentBlock, a union: exactly one member is set.
type converseBlock struct {
	Text             *string             `json:"text"`
	Image            json.RawMessage     `json:"image"`
	Document         json.RawMessage     `json:"document"`
	Video            json.RawMessage     `json:"video"`
	ToolUse          *converseToolUse    `json:"toolUse"`
	ToolResult       *converseToolResult `json:"toolResult"`
	ReasoningContent *struct {
		ReasoningText *struct {
			Text      string `json:"text"`
			Signature string `json:"signature"`
		} `json:"reasoningText"`
		RedactedContent json.RawMessage `json:"redactedContent"`
	} `json:"reasoningContent"`
	CachePoint   json.RawMessage `json:"cachePoint"`
	GuardContent json.RawMessage `json:"guardContent"`
	JSON         json.RawMessage `json:"json"` // only inside a toolResult's content
}

type converseToolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type converseToolResult struct {
	ToolUseID string          `json:"toolUseId"`
	Content   []converseBlock `json:"content"`
	Status    string          `json:"status"`
}

type converseToolConfig struct {
	Tools []struct {
		ToolSpec *struct {
			Name        string `json:"name"`
			InputSchema *struct {
				JSON json.RawMessage `json:"json"`
			} `json:"inputSchema"`
		} `json:"toolSpec"`
	} `json:"tools"`
	ToolChoice *struct {
		Auto json.RawMessage `json:"auto"`
		Any  json.RawMessage `json:"any"`
		Tool *struct {
			Name string `json:"name"`
		} `json:"tool"`
	} `json:"toolChoice"`
}

// constraintViolation is how AWS words a member that breaks the API's model: its path counts
// list members from 1 ("messages.1.member.role").
func constraintViolation(value, at, rule string) *apiError {
	return bedrockInvalid("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must %s", value, at, rule)
}

// modelRefused is the model's own 400, which Bedrock relays with this prefix.
func modelRefused(format string, args ...any) *apiError {
	return bedrockInvalid("The model returned the following errors: "+format, args...)
}

// decodeConverse parses and validates a Converse request for model into the shared ask.
func decodeConverse(body []byte, model string) (ask, *apiError) {
	var req converseRequest
	if err := json.Unmarshal(body, &req); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
			return ask{}, bedrockInvalid("The format of the value at %s is invalid: expected %s, got %s.", te.Field, te.Type, te.Value)
		}
		return ask{}, bedrockInvalid("Malformed input request: %v, please reformat your input and try again.", err)
	}
	q := ask{model: model, parallel: true}
	ic := req.InferenceConfig
	if ic == nil {
		ic = &converseInferenceConfig{}
	}
	if e := ic.check(); e != nil {
		return ask{}, e
	}
	if ic.MaxTokens != nil {
		q.maxTokens = *ic.MaxTokens
	}
	q.stop = ic.StopSequences
	for _, b := range req.System {
		if b.Text != nil {
			q.promptTokens += countWords(*b.Text)
		}
	}
	if e := q.readConverseTools(req.ToolConfig); e != nil {
		return ask{}, e
	}
	usesTools, e := q.readConverseMessages(req.Messages)
	if e != nil {
		return ask{}, e
	}
	if usesTools && req.ToolConfig == nil {
		return ask{}, bedrockInvalid("The toolConfig field must be defined when using toolUse and toolResult content blocks.")
	}
	if e := q.readConverseThinking(req.AdditionalModelRequestFields, ic); e != nil {
		return ask{}, e
	}
	return q, nil
}

// check applies inferenceConfig's bounds.
func (ic *converseInferenceConfig) check() *apiError {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	switch {
	case ic.MaxTokens != nil && *ic.MaxTokens < 1:
		return constraintViolation(strconv.Itoa(*ic.MaxTokens), "inferenceConfig.maxTokens", "have value greater than or equal to 1")
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"temperature", ic.Temperature}, {"topP", ic.TopP}} {
		switch {
		case f.v == nil:
		case *f.v < 0:
			return constraintViolation(num(*f.v), "inferenceConfig."+f.name, "have value greater than or equal to 0")
		case *f.v > 1:
			return constraintViolation(num(*f.v), "inferenceConfig."+f.name, "have value less than or equal to 1")
		}
	}
	return nil
}

// readConverseTools reads toolConfig: toolSpec tools (cachePoint entries carry none) and
// toolChoice.
func (q *ask) readConverseTools(tc *converseToolConfig) *apiError {
	q.choice = toolChoice{mode: "auto"}
	if tc == nil {
		return nil
	}
	if len(tc.Tools) == 0 {
		return constraintViolation("[]", "toolConfig.tools", "have length greater than or equal to 1")
	}
	seen := map[string]bool{}
	for i, t := range tc.Tools {
		spec := t.ToolSpec
		if spec == nil {
			continue
		}
		at := fmt.Sprintf("toolConfig.tools.%d.member.toolSpec", i+1)
		if !openAINames.matches(spec.Name) {
			return constraintViolation(spec.Name, at+".name", "satisfy regular expression pattern: [a-zA-Z0-9_-]+ and have length between 1 and 64")
		}
		if spec.InputSchema == nil || len(bytes.TrimSpace(spec.InputSchema.JSON)) == 0 {
			return constraintViolation("null", at+".inputSchema", "not be null")
		}
		if _, _, err := toolProperties(spec.InputSchema.JSON); err != nil {
			return modelRefused("tools.%d.custom.input_schema: Input should be a valid dictionary (%v)", i, err)
		}
		if seen[spec.Name] {
			return modelRefused("tools: Tool names must be unique.")
		}
		seen[spec.Name] = true
		q.tools = append(q.tools, toolSpec{name: spec.Name, params: spec.InputSchema.JSON})
	}
	switch c := tc.ToolChoice; {
	case c == nil || c.Auto != nil:
	case c.Any != nil:
		q.choice.mode = "required"
	case c.Tool != nil:
		if !seen[c.Tool.Name] {
			return modelRefused("tool_choice.name: Tool '%s' not found in provided tools", c.Tool.Name)
		}
		q.choice = toolChoice{mode: "required", forced: c.Tool.Name}
	}
	return nil
}

// readConverseMessages validates the turns, counts their words and finds the last user text.
// It reports whether any toolUse or toolResult block appeared.
func (q *ask) readConverseMessages(msgs []converseMessage) (bool, *apiError) {
	if len(msgs) == 0 || msgs[0].Role == "assistant" {
		return false, bedrockInvalid("A conversation must start with a user message. Try again with a conversation that starts with a user message.")
	}
	usesTools := false
	var prevToolUses []string // toolUseIds of the previous (assistant) turn
	var turn lastTurn
	for i, m := range msgs {
		if m.Role != "user" && m.Role != "assistant" {
			return false, constraintViolation(m.Role, fmt.Sprintf("messages.%d.member.role", i+1), "satisfy enum value set: [user, assistant]")
		}
		if i > 0 && m.Role == msgs[i-1].Role {
			return false, bedrockInvalid("A conversation must alternate between user and assistant roles. " +
				"Make sure the conversation alternates between user and assistant roles and try again.")
		}
		if len(m.Content) == 0 {
			return false, bedrockInvalid("The content field in the Message object at messages.%d is empty. "+
				"Add a ContentBlock object to the content field and try again.", i)
		}
		var texts, toolUses, answered []string
		for j, b := range m.Content {
			switch {
			case b.Text != nil:
				if strings.TrimSpace(*b.Text) == "" {
					return false, bedrockInvalid("The text field in the ContentBlock object at messages.%d.content.%d is blank. "+
						"Add text to the text field, and try again.", i, j)
				}
				texts = append(texts, *b.Text)
			case b.ToolUse != nil:
				usesTools = true
				if keys, _, err := objectMembers(b.ToolUse.Input); err != nil || keys == nil && len(bytes.TrimSpace(b.ToolUse.Input)) == 0 {
					return false, constraintViolation("null", fmt.Sprintf("messages.%d.member.content.%d.member.toolUse.input", i+1, j+1), "be a JSON object")
				}
				toolUses = append(toolUses, b.ToolUse.ToolUseID)
				q.promptTokens += countWords(compactJSON(b.ToolUse.Input))
			case b.ToolResult != nil:
				usesTools = true
				if !slices.Contains(prevToolUses, b.ToolResult.ToolUseID) {
					return false, modelRefused("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. "+
						"Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, b.ToolResult.ToolUseID)
				}
				answered = append(answered, b.ToolResult.ToolUseID)
				for _, c := range b.ToolResult.Content {
					if c.Text != nil {
						q.promptTokens += countWords(*c.Text)
					}
					q.promptTokens += countWords(compactJSON(c.JSON))
				}
			case b.ReasoningContent != nil:
				if rt := b.ReasoningContent.ReasoningText; rt != nil && rt.Signature != signature("thinking", rt.Text) {
					return false, modelRefused("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
				}
			case b.Image != nil, b.Document != nil, b.Video != nil, b.CachePoint != nil, b.GuardContent != nil:
				// media, cache points and guarded text carry no words here
			default:
				return false, bedrockInvalid("The ContentBlock object at messages.%d.content.%d is empty: "+
					"set exactly one of its members and try again.", i, j)
			}
		}
		if len(answered) > len(prevToolUses) {
			return false, bedrockInvalid("The number of toolResult blocks at messages.%d.content exceeds the number of toolUse blocks of previous turn.", i)
		}
		var missing []string
		for _, id := range prevToolUses {
			if !slices.Contains(answered, id) {
				missing = append(missing, id)
			}
		}
		if missing != nil {
			return false, bedrockInvalid("Expected toolResult blocks at messages.%d.content for the following Ids: %s", i, strings.Join(missing, ", "))
		}
		text := strings.Join(texts, " ")
		q.promptTokens += countWords(text)
		if m.Role == "user" && len(texts) > 0 {
			q.lastUser = text
		}
		switch {
		case m.Role != "user":
			turn.model()
		case len(answered) > 0:
			turn.toolResults()
		default:
			turn.userContent()
		}
		prevToolUses = toolUses
	}
	q.userTurn = turn.isUserTurn()
	return usesTools, nil
}

// readConverseThinking applies Anthropic's thinking rules to additionalModelRequestFields
// .thinking, the model refusing what it refuses on its own API.
func (q *ask) readConverseThinking(raw json.RawMessage, ic *converseInferenceConfig) *apiError {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var fields struct {
		Thinking *messagesThinking `json:"thinking"`
	}
	if json.Unmarshal(raw, &fields) != nil {
		return bedrockInvalid("The format of the value at additionalModelRequestFields is invalid. Provide a json object for the field and try again.")
	}
	if fields.Thinking == nil {
		return nil
	}
	// Without maxTokens Bedrock fills in the model's own cap, so only the budget's floor applies.
	req := &messagesRequest{Thinking: fields.Thinking, Temperature: ic.Temperature, MaxTokens: ic.MaxTokens}
	if e := q.readThinking(req, ic.MaxTokens == nil); e != nil {
		return modelRefused("%s", e.Message)
	}
	return nil
}

// converseReply is the shared answer with Converse's tool ids and reported latency.
type converseReply struct {
	answer  answer
	toolIDs []string
	latency time.Duration // what metrics.latencyMs reports for a whole answer
}

func (s *Server) converseReplyFor(a answer, b Behavior) converseReply {
	r := converseReply{answer: a, latency: b.FirstByteDelay}
	for range a.calls {
		r.toolIDs = append(r.toolIDs, s.newID("tooluse_"))
	}
	return r
}

// stopReason is Converse's stopReason.
func (r converseReply) stopReason() string {
	return map[finishReason]string{finishStop: "end_turn", finishLength: "max_tokens",
		finishToolCalls: "tool_use", finishStopSequence: "stop_sequence"}[r.answer.finish]
}

// usage is Converse's TokenUsage: inputTokens leaves out the cache reads, which are counted
// apart (with the cache writes) when there are any; totalTokens counts everything.
func (r converseReply) usage() obj {
	a := r.answer
	u := obj{{"inputTokens", a.uncachedTokens()}, {"outputTokens", a.outputTokens}, {"totalTokens", a.promptTokens + a.outputTokens}}
	if a.cachedTokens > 0 {
		u = append(u, member{"cacheReadInputTokens", a.cachedTokens}, member{"cacheWriteInputTokens", 0})
	}
	return u
}

// reasoningBlock is the reasoning as a ContentBlock, signed as Anthropic signs thinking.
func (r converseReply) reasoningBlock() obj {
	text := r.answer.reasoningText()
	return obj{{"reasoningContent", obj{{"reasoningText", obj{{"text", text}, {"signature", signature("thinking", text)}}}}}}
}

// body is the Converse response: reasoning, text (none when empty) or toolUse blocks.
func (r converseReply) body() obj {
	a := r.answer
	content := []obj{}
	if a.reasoning != nil {
		content = append(content, r.reasoningBlock())
	}
	if len(a.words) > 0 {
		content = append(content, obj{{"text", a.text()}})
	}
	for i, c := range a.calls {
		content = append(content, obj{{"toolUse", obj{{"toolUseId", r.toolIDs[i]}, {"name", c.name},
			{"input", json.RawMessage(c.arguments)}}}})
	}
	return obj{
		{"output", obj{{"message", obj{{"role", "assistant"}, {"content", content}}}}},
		{"stopReason", r.stopReason()},
		{"usage", r.usage()},
		{"metrics", obj{{"latencyMs", r.latency.Milliseconds()}}},
	}
}

// bedrockConverse answers Converse (stream false) and ConverseStream.
func (s *Server) bedrockConverse(ex *exchange, stream bool) {
	q, apiErr := decodeConverse(ex.body, bedrockModelName(ex.r.PathValue("model")))
	if apiErr != nil {
		writeBedrockError(ex.w, *apiErr)
		return
	}
	r := s.converseReplyFor(decide(q), ex.behavior)
	if stream {
		playStream(ex, framingEventStream, converseEvents(r, ex.behavior))
		return
	}
	writeJSON(ex.w, http.StatusOK, r.body())
}

package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Anthropic Messages (POST /v1/messages, POST /v1/messages/count_tokens).
// The answer is the shared one (answer.go); this file decodes requests into it, with the
// checks the real API makes that a translating gateway most often fails (tool_use/tool_result
// pairing, empty text blocks, thinking signatures and budget rules), and renders the
// non-streaming message. messages_stream.go renders the stream.

// registerMessages mounts the Messages endpoints, for the default route and /r/{route}.
// Claude Code adds ?beta=true; routing is on the path only, so that works unchanged.
func (s *Server) registerMessages() {
	s.handleRoutes(http.MethodPost, "/v1/messages", s.endpoint(messagesDialect, s.messages))
	s.handleRoutes(http.MethodPost, "/v1/messages/count_tokens", s.endpoint(messagesDialect, s.countTokens))
}

// messagesDialect: x-api-key (or a Bearer token, as OAuth clients send) and the Messages
// error envelope.
var messagesDialect = dialect{
	authorized: func(r *http.Request) bool {
		return strings.TrimSpace(r.Header.Get("X-Api-Key")) != "" || bearerAuthorized(r)
	},
	unauthorized: apiError{Status: http.StatusUnauthorized, Type: "authentication_error",
		Message: "x-api-key header is required"},
	failure:         messagesFailure,
	refusal:         messagesRefusal,
	writeError:      writeMessagesError,
	requestIDHeader: "request-id",
}

// messagesFailure is the error Anthropic sends for a status.
func messagesFailure(status int) apiError {
	e := apiError{Status: status, Type: "api_error", Message: "Internal server error (simulated)."}
	switch {
	case status == http.StatusUnauthorized:
		e.Type, e.Message = "authentication_error", "invalid x-api-key (simulated)"
	case status == http.StatusPaymentRequired:
		e.Type, e.Message = "billing_error", "Your credit balance is too low (simulated)."
	case status == http.StatusForbidden:
		e.Type, e.Message = "permission_error", "Your API key does not have permission to use the specified resource (simulated)."
	case status == http.StatusNotFound:
		e.Type, e.Message = "not_found_error", "model: not found (simulated)"
	case status == http.StatusRequestEntityTooLarge:
		e.Type, e.Message = "request_too_large", "Request exceeds the maximum allowed number of bytes (simulated)."
	case status == http.StatusTooManyRequests:
		e.Type, e.Message = "rate_limit_error", "Number of requests has exceeded your rate limit (simulated). Please try again later."
	case status == http.StatusGatewayTimeout:
		e.Type, e.Message = "timeout_error", "Request timed out (simulated)."
	case status == 529:
		e.Type, e.Message = "overloaded_error", "Overloaded"
	case status < 500:
		e.Type, e.Message = "invalid_request_error", "The request was rejected (simulated "+http.StatusText(status)+")."
	}
	return e
}

// writeMessagesError writes {"type":"error","error":{type,message},"request_id"}.
func writeMessagesError(w http.ResponseWriter, e apiError) {
	body := obj{{"type", "error"}, {"error", obj{{"type", e.Type}, {"message", e.Message}}}}
	if id := w.Header().Get("request-id"); id != "" {
		body = append(body, member{"request_id", id})
	}
	writeJSON(w, e.Status, body)
}

// invalidMessages is the Messages 400 for a malformed request.
func invalidMessages(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
}

type messagesRequest struct {
	Model         string              `json:"model"`
	MaxTokens     *int                `json:"max_tokens"`
	Messages      []messagesMessage   `json:"messages"`
	System        json.RawMessage     `json:"system"`
	Tools         []messagesTool      `json:"tools"`
	ToolChoice    *messagesToolChoice `json:"tool_choice"`
	Thinking      *messagesThinking   `json:"thinking"`
	Stream        bool                `json:"stream"`
	Temperature   *float64            `json:"temperature"`
	StopSequences []string            `json:"stop_sequences"`
	Metadata      json.RawMessage     `json:"metadata"`
}

type messagesMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// messagesBlock is a request content block; fields not used by its type stay empty.
type messagesBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	Thinking  *string         `json:"thinking"`
	Signature *string         `json:"signature"`
}

type messagesTool struct {
	Type         string          `json:"type"`
	Name         string          `json:"name"`
	InputSchema  json.RawMessage `json:"input_schema"`
	DeferLoading bool            `json:"defer_loading"`
}

type messagesToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
}

type messagesThinking struct {
	Type         string `json:"type"`
	BudgetTokens *int   `json:"budget_tokens"`
}

func (s *Server) messages(ex *exchange) {
	if apiErr := requireVersion(ex.r); apiErr != nil {
		writeMessagesError(ex.w, *apiErr)
		return
	}
	q, req, apiErr := decodeMessages(ex.body, "", false, systemTurnsAllowed(ex.r))
	if apiErr != nil {
		writeMessagesError(ex.w, *apiErr)
		return
	}
	reply := s.messagesReplyFor("", req.Model, decide(q))
	if req.Stream {
		playStream(ex, framingSSE, messagesEvents(reply))
		return
	}
	writeJSON(ex.w, http.StatusOK, reply.body())
}

// countTokens answers POST /v1/messages/count_tokens with the prompt tokens the same request
// would be billed for (cached ones included).
func (s *Server) countTokens(ex *exchange) {
	if apiErr := requireVersion(ex.r); apiErr != nil {
		writeMessagesError(ex.w, *apiErr)
		return
	}
	q, _, apiErr := decodeMessages(ex.body, "", true, systemTurnsAllowed(ex.r))
	if apiErr != nil {
		writeMessagesError(ex.w, *apiErr)
		return
	}
	writeJSON(ex.w, http.StatusOK, obj{{"input_tokens", max(q.promptTokens, 1)}})
}

// requireVersion rejects a request without the anthropic-version header, as the API does.
func requireVersion(r *http.Request) *apiError {
	if strings.TrimSpace(r.Header.Get("Anthropic-Version")) == "" {
		return invalidMessages("anthropic-version: header is required")
	}
	return nil
}

// systemTurnsBeta is the beta flag under which the API takes role "system" turns inside
// messages (Claude Code 2.1.x sends its environment block that way).
const systemTurnsBeta = "mid-conversation-tool-changes-2026-07-01"

// systemTurnsAllowed reports whether the request's anthropic-beta header lists systemTurnsBeta.
func systemTurnsAllowed(r *http.Request) bool {
	for _, v := range r.Header.Values("Anthropic-Beta") {
		for _, flag := range strings.Split(v, ",") {
			if strings.TrimSpace(flag) == systemTurnsBeta {
				return true
			}
		}
	}
	return false
}

// decodeMessages parses and validates a Messages request into the shared ask. model, when
// set, is the model a cloud platform's URL names (Bedrock, Vertex AI), whose bodies name
// none; counting is set for count_tokens, which takes the same body without max_tokens;
// systemTurns admits role "system" turns in messages.
func decodeMessages(body []byte, model string, counting, systemTurns bool) (ask, *messagesRequest, *apiError) {
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
			return ask{}, nil, invalidMessages("%s: Input should be a valid %s", te.Field, te.Type)
		}
		return ask{}, nil, invalidMessages("There was an error parsing the body of your request: %v", err)
	}
	if model != "" {
		req.Model = model
	}
	switch {
	case req.Model == "":
		return ask{}, nil, invalidMessages("model: Field required")
	case req.MaxTokens == nil && !counting:
		return ask{}, nil, invalidMessages("max_tokens: Field required")
	case req.MaxTokens != nil && *req.MaxTokens < 1:
		return ask{}, nil, invalidMessages("max_tokens: Input should be greater than or equal to 1")
	case len(req.Messages) == 0:
		return ask{}, nil, invalidMessages("messages: at least one message is required")
	case req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 1):
		return ask{}, nil, invalidMessages("temperature: Input should be between 0 and 1")
	}
	if e := anthropicRange(body, messagesBounds); e != nil {
		return ask{}, nil, e
	}
	q := ask{model: req.Model, stop: req.StopSequences, parallel: true}
	if req.MaxTokens != nil {
		q.maxTokens = *req.MaxTokens
	}

	system, ok := messagesSystemText(req.System)
	if !ok {
		return ask{}, nil, invalidMessages("system: Input should be a valid string or a list of text blocks")
	}
	q.promptTokens = countWords(system)
	if apiErr := q.readMessages(req.Messages, systemTurns); apiErr != nil {
		return ask{}, nil, apiErr
	}
	if apiErr := q.readMessagesTools(&req); apiErr != nil {
		return ask{}, nil, apiErr
	}
	if apiErr := q.readThinking(&req, counting); apiErr != nil {
		return ask{}, nil, apiErr
	}
	return q, &req, nil
}

// messagesSystemText is the text of "system": a string or an array of text blocks.
func messagesSystemText(raw json.RawMessage) (string, bool) {
	str, blocks, ok := messagesContent(raw)
	if !ok {
		return "", false
	}
	if str != nil {
		return *str, true
	}
	var texts []string
	for _, b := range blocks {
		if b.Type != "text" || b.Text == nil {
			return "", false
		}
		texts = append(texts, *b.Text)
	}
	return strings.Join(texts, " "), true
}

// toolResultText is the text of a tool_result's content: a string, or its text blocks
// (images carry no words).
func toolResultText(raw json.RawMessage) string {
	str, blocks, _ := messagesContent(raw)
	if str != nil {
		return *str
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" && b.Text != nil {
			texts = append(texts, *b.Text)
		}
	}
	return strings.Join(texts, " ")
}

// messagesContent splits content into a string or blocks; absent content is no blocks.
func messagesContent(raw json.RawMessage) (*string, []messagesBlock, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil, true
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return &str, nil, true
	}
	var blocks []messagesBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return nil, nil, false
	}
	return nil, blocks, true
}

// readMessages validates the turns, counts their words and finds the last user text. A system
// turn (with systemTurns) counts its words and is otherwise transparent.
func (q *ask) readMessages(msgs []messagesMessage, systemTurns bool) *apiError {
	var prevToolUses []string // tool_use ids of the previous (assistant) message
	var turn lastTurn
	for i, m := range msgs {
		if m.Role == "system" && systemTurns {
			text, ok := messagesSystemText(m.Content)
			if !ok || text == "" {
				return invalidMessages("messages.%d.content: a system turn takes a non-empty string or text blocks", i)
			}
			q.promptTokens += countWords(text)
			continue
		}
		if m.Role != "user" && m.Role != "assistant" {
			return invalidMessages("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		str, blocks, ok := messagesContent(m.Content)
		if !ok {
			return invalidMessages("messages.%d.content: Input should be a valid string or a list of content blocks", i)
		}
		final := i == len(msgs)-1
		if ((str != nil && *str == "") || (str == nil && len(blocks) == 0)) && !(final && m.Role == "assistant") {
			return invalidMessages("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		var texts, toolUses, answered []string
		if str != nil {
			texts = append(texts, *str)
		}
		for j, b := range blocks {
			switch b.Type {
			case "":
				return invalidMessages("messages.%d.content.%d.type: Field required", i, j)
			case "text":
				if b.Text == nil || *b.Text == "" {
					return invalidMessages("messages: text content blocks must be non-empty")
				}
				texts = append(texts, *b.Text)
			case "tool_use":
				if b.ID == "" || b.Name == "" {
					return invalidMessages("messages.%d.content.%d.tool_use: id and name are required", i, j)
				}
				if _, _, err := objectMembers(b.Input); err != nil || len(bytes.TrimSpace(b.Input)) == 0 {
					return invalidMessages("messages.%d.content.%d.tool_use.input: Input should be a valid dictionary", i, j)
				}
				toolUses = append(toolUses, b.ID)
				q.promptTokens += countWords(compactJSON(b.Input))
			case "tool_result":
				if !slices.Contains(prevToolUses, b.ToolUseID) {
					return invalidMessages("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. "+
						"Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, b.ToolUseID)
				}
				answered = append(answered, b.ToolUseID)
				q.promptTokens += countWords(toolResultText(b.Content))
			case "thinking":
				if b.Signature == nil || *b.Signature == "" {
					return invalidMessages("messages.%d.content.%d.thinking.signature: Field required", i, j)
				}
				if b.Thinking == nil || *b.Signature != signature("thinking", *b.Thinking) {
					return invalidMessages("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
				}
			}
			// image, document, redacted_thinking and server-tool blocks carry no words.
		}
		if len(prevToolUses) > 0 {
			var missing []string
			for _, id := range prevToolUses {
				if !slices.Contains(answered, id) {
					missing = append(missing, id)
				}
			}
			if len(missing) > 0 {
				return invalidMessages("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. "+
					"Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, strings.Join(missing, ", "))
			}
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
	return nil
}

// readMessagesTools reads tools and tool_choice. Server tools (web_search_…, bash_…) are
// accepted but never called, and so are deferred tools (defer_loading): the API keeps them out
// of the model's context until the client loads them.
func (q *ask) readMessagesTools(req *messagesRequest) *apiError {
	var names []string
	for _, t := range req.Tools {
		if t.Name != "" {
			names = append(names, t.Name)
		}
	}
	if i, dup, bad := badToolName(names, anthropicNames); bad && dup {
		return invalidMessages("tools: Tool names must be unique. %q is used more than once.", names[i])
	}
	for i, t := range req.Tools {
		if (t.Type == "" || t.Type == "custom") && t.Name != "" && !anthropicNames.matches(t.Name) {
			return invalidMessages("tools.%d.custom.name: String should match pattern '%s'", i, anthropicNames.regex)
		}
	}
	for i, t := range req.Tools {
		if t.Type != "" && t.Type != "custom" {
			continue
		}
		if t.Name == "" {
			return invalidMessages("tools.%d.custom.name: Field required", i)
		}
		if len(bytes.TrimSpace(t.InputSchema)) == 0 {
			return invalidMessages("tools.%d.custom.input_schema: Field required", i)
		}
		if _, _, err := toolProperties(t.InputSchema); err != nil {
			return invalidMessages("tools.%d.custom.input_schema: Input should be a valid dictionary (%v)", i, err)
		}
		if !t.DeferLoading {
			q.tools = append(q.tools, toolSpec{name: t.Name, params: t.InputSchema})
		}
	}
	q.choice = toolChoice{mode: "auto"}
	tc := req.ToolChoice
	if tc == nil {
		return nil
	}
	q.parallel = !tc.DisableParallelToolUse
	switch tc.Type {
	case "auto":
	case "any":
		q.choice.mode = "required"
	case "none":
		q.choice.mode = "none"
	case "tool":
		if tc.Name == "" {
			return invalidMessages("tool_choice.tool.name: Field required")
		}
		if !slices.ContainsFunc(q.tools, func(t toolSpec) bool { return t.name == tc.Name }) {
			return invalidMessages("tool_choice.name: Tool '%s' not found in provided tools", tc.Name)
		}
		q.choice = toolChoice{mode: "required", forced: tc.Name}
	default:
		return invalidMessages("tool_choice.type: Input tag '%s' found using 'type' does not match any of the "+
			"expected tags: 'auto', 'any', 'tool', 'none'", tc.Type)
	}
	return nil
}

// readThinking applies the thinking rules of the Messages API: a budget of at least 1024 below
// max_tokens, temperature 1, no forced tool use.
func (q *ask) readThinking(req *messagesRequest, counting bool) *apiError {
	th := req.Thinking
	if th == nil {
		return nil
	}
	switch th.Type {
	case "disabled":
		return nil
	case "enabled":
		switch {
		case th.BudgetTokens == nil:
			return invalidMessages("thinking.enabled.budget_tokens: Field required")
		case *th.BudgetTokens < 1024:
			return invalidMessages("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
		case !counting && *th.BudgetTokens >= *req.MaxTokens:
			return invalidMessages("`max_tokens` must be greater than `thinking.budget_tokens`")
		}
	case "adaptive":
	default:
		return invalidMessages("thinking.type: Input tag '%s' found using 'type' does not match any of the "+
			"expected tags: 'enabled', 'disabled', 'adaptive'", th.Type)
	}
	if req.Temperature != nil && *req.Temperature != 1 {
		return invalidMessages("`temperature` may only be set to 1 when thinking is enabled")
	}
	if q.choice.mode == "required" {
		return invalidMessages("Thinking may not be enabled when tool_choice forces tool use.")
	}
	q.thinking = true
	return nil
}

// messagesReply is the shared answer with the Messages ids.
type messagesReply struct {
	id      string
	model   string
	answer  answer
	toolIDs []string
}

// messagesReplyFor mints the ids of a reply. platform is "" for Anthropic's API, or the
// infix a cloud platform adds to them: "bdrk_" (Bedrock), "vrtx_" (Vertex AI), as in
// msg_bdrk_… and toolu_vrtx_….
func (s *Server) messagesReplyFor(platform, model string, a answer) messagesReply {
	r := messagesReply{id: s.newID("msg_" + platform), model: model, answer: a}
	for range a.calls {
		r.toolIDs = append(r.toolIDs, s.newID("toolu_"+platform))
	}
	return r
}

// stopReason is the Messages stop_reason.
func (r messagesReply) stopReason() string {
	return map[finishReason]string{finishStop: "end_turn", finishLength: "max_tokens",
		finishToolCalls: "tool_use", finishStopSequence: "stop_sequence"}[r.answer.finish]
}

// stopSequence is the matched stop sequence, or nil (JSON null).
func (r messagesReply) stopSequence() any {
	if r.answer.finish == finishStopSequence {
		return r.answer.stopSequence
	}
	return nil
}

// usage is the Messages usage object: input_tokens excludes the cache reads.
func (r messagesReply) usage(outputTokens int) obj {
	return obj{
		{"input_tokens", r.answer.uncachedTokens()},
		{"cache_creation_input_tokens", 0},
		{"cache_read_input_tokens", r.answer.cachedTokens},
		{"cache_creation", obj{{"ephemeral_5m_input_tokens", 0}, {"ephemeral_1h_input_tokens", 0}}},
		{"output_tokens", outputTokens},
		{"service_tier", "standard"},
	}
}

// content is the answer's content blocks: thinking, then text (omitted when empty: the API
// never returns an empty text block) or tool_use blocks.
func (r messagesReply) content() []obj {
	a := r.answer
	blocks := []obj{}
	if a.reasoning != nil {
		blocks = append(blocks, obj{{"type", "thinking"}, {"thinking", a.reasoningText()},
			{"signature", signature("thinking", a.reasoningText())}})
	}
	if len(a.words) > 0 {
		blocks = append(blocks, obj{{"type", "text"}, {"text", a.text()}})
	}
	for i, c := range a.calls {
		blocks = append(blocks, obj{{"type", "tool_use"}, {"id", r.toolIDs[i]}, {"name", c.name},
			{"input", json.RawMessage(c.arguments)}})
	}
	return blocks
}

// body is the non-streaming message.
func (r messagesReply) body() obj {
	return obj{
		{"id", r.id}, {"type", "message"}, {"role", "assistant"}, {"model", r.model},
		{"content", r.content()},
		{"stop_reason", r.stopReason()}, {"stop_sequence", r.stopSequence()},
		{"usage", r.usage(r.answer.outputTokens)},
	}
}

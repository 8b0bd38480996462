package simulator

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// OpenAI Responses (POST /v1/responses). The answer is the shared one (answer.go); this file
// decodes requests into it, with the checks the real API makes that a translating gateway most
// often fails (flat function tools, input part types, call_id pairing, max_output_tokens ≥ 16,
// no server-side state), and renders the response object. responses_stream.go renders the
// stream. Reasoning: an effort other than none/minimal turns thinking on; the reasoning item's
// summary is filled only when reasoning.summary asks for it (as the real API does), and it
// carries encrypted_content only when include asks for it.

type responsesRequest struct {
	Model             string            `json:"model"`
	Input             json.RawMessage   `json:"input"`
	Instructions      json.RawMessage   `json:"instructions"`
	Tools             []json.RawMessage `json:"tools"`
	ToolChoice        json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls *bool             `json:"parallel_tool_calls"`
	MaxOutputTokens   *int              `json:"max_output_tokens"`
	Reasoning         *struct {
		Effort  *string `json:"effort"`
		Summary *string `json:"summary"`
	} `json:"reasoning"`
	Include            []string        `json:"include"`
	Stream             bool            `json:"stream"`
	Store              *bool           `json:"store"`
	PreviousResponseID *string         `json:"previous_response_id"`
	Temperature        *float64        `json:"temperature"`
	TopP               *float64        `json:"top_p"`
	Text               json.RawMessage `json:"text"`
	Truncation         *string         `json:"truncation"`
	Metadata           json.RawMessage `json:"metadata"`
}

// responsesItem is one input item; fields not used by its type stay empty.
type responsesItem struct {
	Type             string          `json:"type"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        string          `json:"arguments"`
	Input            string          `json:"input"`
	Output           json.RawMessage `json:"output"`
	Summary          json.RawMessage `json:"summary"`
	EncryptedContent *string         `json:"encrypted_content"`
}

type responsesTool struct {
	Type       string          `json:"type"`
	Name       string          `json:"name"`
	Parameters json.RawMessage `json:"parameters"`
}

// responsesOptions are the request settings the rendering needs beyond the answer.
type responsesOptions struct {
	summary   bool // fill the reasoning summary
	encrypted bool // add encrypted_content to the reasoning item
}

func (s *Server) responses(ex *exchange) {
	q, req, opts, apiErr := decodeResponses(ex.body)
	if apiErr != nil {
		writeOpenAIError(ex.w, *apiErr)
		return
	}
	reply := s.responsesReplyFor(req, opts, decide(q))
	if req.Stream {
		playStream(ex, framingSSE, responsesEvents(reply))
		return
	}
	writeJSON(ex.w, http.StatusOK, reply.object(reply.status(), reply.output(), reply.usage(), nil))
}

// decodeResponses parses and validates a Responses request into the shared ask. Every
// rejection names the offending field in "param", as OpenAI does.
func decodeResponses(body []byte) (ask, *responsesRequest, responsesOptions, *apiError) {
	var req responsesRequest
	var opts responsesOptions
	if err := json.Unmarshal(body, &req); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
			return ask{}, nil, opts, badRequest(te.Field,
				fmt.Sprintf("Invalid type for '%s': expected %s, got %s.", te.Field, te.Type, te.Value))
		}
		return ask{}, nil, opts, badRequest("", "We could not parse the JSON body of your request. "+
			"The OpenAI API expects a JSON payload: "+err.Error())
	}
	if req.Model == "" {
		return ask{}, nil, opts, badRequest("model", "Missing required parameter: 'model'.")
	}
	if req.PreviousResponseID != nil && *req.PreviousResponseID != "" {
		e := badRequest("previous_response_id", fmt.Sprintf("Previous response with id '%s' not found.", *req.PreviousResponseID))
		e.Code = "previous_response_not_found" // the simulator keeps no responses
		return ask{}, nil, opts, e
	}
	switch in := string(bytes.TrimSpace(req.Input)); {
	case in == "" || in == "null":
		return ask{}, nil, opts, badRequest("input", "Missing required parameter: 'input'.")
	case in == `""`:
		return ask{}, nil, opts, badRequest("input", "Invalid 'input': empty string. Expected a string with minimum length 1.")
	case strings.HasPrefix(in, "[") && strings.TrimSpace(in[1:]) == "]":
		return ask{}, nil, opts, badRequest("input", "Invalid 'input': empty array. Expected an array with minimum length 1.")
	}
	if e := openAIRange(body, responsesBounds); e != nil {
		return ask{}, nil, opts, e
	}
	q := ask{model: req.Model, parallel: req.ParallelToolCalls == nil || *req.ParallelToolCalls}
	if len(req.Instructions) > 0 {
		var instructions string
		_ = json.Unmarshal(req.Instructions, &instructions) // item-array instructions carry no words here
		q.promptTokens += countWords(instructions)
	}
	if apiErr := q.readInput(req.Input); apiErr != nil {
		return ask{}, nil, opts, apiErr
	}
	if apiErr := q.readResponsesTools(&req); apiErr != nil {
		return ask{}, nil, opts, apiErr
	}
	if n := req.MaxOutputTokens; n != nil {
		if *n < 16 {
			e := badRequest("max_output_tokens", fmt.Sprintf("Invalid 'max_output_tokens': integer below minimum value. "+
				"Expected a value >= 16, but got %d instead.", *n))
			e.Code = "integer_below_min_value"
			return ask{}, nil, opts, e
		}
		q.maxTokens = *n
	}
	if rs := req.Reasoning; rs != nil {
		if rs.Effort != nil {
			switch *rs.Effort {
			case "none", "minimal":
			case "low", "medium", "high", "xhigh", "max":
				q.thinking = true
			default:
				return ask{}, nil, opts, badRequest("reasoning.effort", fmt.Sprintf("Invalid value: '%s'. Supported values are: "+
					"'none', 'minimal', 'low', 'medium', 'high', 'xhigh' and 'max'.", *rs.Effort))
			}
		}
		if rs.Summary != nil {
			switch *rs.Summary {
			case "auto", "concise", "detailed":
				opts.summary = true
			default:
				return ask{}, nil, opts, badRequest("reasoning.summary", fmt.Sprintf("Invalid value: '%s'. Supported values are: "+
					"'auto', 'concise' and 'detailed'.", *rs.Summary))
			}
		}
	}
	opts.encrypted = slices.Contains(req.Include, "reasoning.encrypted_content")
	return q, &req, opts, nil
}

// readInput validates the input (a string, or items), counts its words and finds the last
// user text.
func (q *ask) readInput(raw json.RawMessage) *apiError {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		q.promptTokens += countWords(str)
		q.lastUser, q.userTurn = str, true
		return nil
	}
	var turn lastTurn
	var items []responsesItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return badRequest("input", "Invalid 'input': expected a string or an array of input items.")
	}
	var callIDs []string
	for i, it := range items {
		at := fmt.Sprintf("input[%d]", i)
		typ := it.Type
		if typ == "" && it.Role != "" {
			typ = "message"
		}
		switch typ {
		case "":
			return badRequest(at+".type", fmt.Sprintf("Missing required parameter: '%s.type'.", at))
		case "message":
			text, apiErr := responsesMessageText(it, at)
			if apiErr != nil {
				return apiErr
			}
			q.promptTokens += countWords(text)
			switch it.Role {
			case "user":
				q.lastUser = text
				turn.userContent()
			case "assistant":
				turn.model()
			}
		case "function_call", "custom_tool_call":
			if it.CallID == "" {
				return badRequest(at+".call_id", fmt.Sprintf("Missing required parameter: '%s.call_id'.", at))
			}
			if it.Name == "" {
				return badRequest(at+".name", fmt.Sprintf("Missing required parameter: '%s.name'.", at))
			}
			callIDs = append(callIDs, it.CallID)
			q.promptTokens += countWords(it.Arguments) + countWords(it.Input)
			turn.model()
		case "function_call_output", "custom_tool_call_output":
			if !slices.Contains(callIDs, it.CallID) {
				return badRequest("input", fmt.Sprintf("No tool call found for function call output with call_id %s.", it.CallID))
			}
			str, ok := stringOrParts(it.Output)
			if !ok {
				return badRequest(at+".output", fmt.Sprintf("Invalid '%s.output': expected a string or an array of content parts.", at))
			}
			q.promptTokens += countWords(str)
			turn.toolResults()
		case "reasoning":
			if len(bytes.TrimSpace(it.Summary)) == 0 {
				return badRequest(at+".summary", fmt.Sprintf("Missing required parameter: '%s.summary'.", at))
			}
			if it.EncryptedContent != nil {
				if _, ok := openReasoning(*it.EncryptedContent); !ok {
					e := badRequest("", fmt.Sprintf("The encrypted content for item %s could not be verified.", at))
					e.Code = "invalid_encrypted_content"
					return e
				}
			}
		}
		// Other item types (item_reference, hosted tool calls, ...) are accepted and carry no
		// words.
	}
	q.userTurn = turn.isUserTurn()
	return nil
}

// responsesMessageText checks a message item's role and part types and returns its text.
func responsesMessageText(it responsesItem, at string) (string, *apiError) {
	allowed := []string{"input_text", "input_image", "input_file", "input_audio"}
	switch it.Role {
	case "user", "system", "developer":
	case "assistant":
		allowed = []string{"output_text", "refusal"}
	default:
		return "", badRequest(at+".role", fmt.Sprintf("Invalid value: '%s'. Supported values are: "+
			"'assistant', 'system', 'developer', and 'user'.", it.Role))
	}
	var str string
	if json.Unmarshal(it.Content, &str) == nil {
		return str, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(it.Content, &parts) != nil {
		return "", badRequest(at+".content", fmt.Sprintf("Invalid '%s.content': expected a string or an array of content parts.", at))
	}
	var texts []string
	for j, p := range parts {
		if !slices.Contains(allowed, p.Type) {
			return "", badRequest(fmt.Sprintf("%s.content[%d].type", at, j), fmt.Sprintf("Invalid value: '%s'. "+
				"Supported values are: '%s'.", p.Type, strings.Join(allowed, "', '")))
		}
		if p.Type == "input_text" || p.Type == "output_text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, " "), nil
}

// stringOrParts is a function_call_output's output: a string, or the text of its parts.
func stringOrParts(raw json.RawMessage) (string, bool) {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "input_text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, " "), true
}

// readResponsesTools reads the flat function tools and tool_choice. Hosted and custom tools
// are accepted and never called; a tool_choice forcing one of them leaves no function to call.
func (q *ask) readResponsesTools(req *responsesRequest) *apiError {
	var names []string
	var at []int
	for i, raw := range req.Tools {
		var t responsesTool
		if json.Unmarshal(raw, &t) == nil && (t.Type == "function" || t.Type == "custom") && t.Name != "" {
			names, at = append(names, t.Name), append(at, i)
		}
	}
	if e := openAIToolNames(names, func(i int) string { return fmt.Sprintf("tools[%d].name", at[i]) }); e != nil {
		return e
	}
	for i, raw := range req.Tools {
		var t responsesTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return badRequest(fmt.Sprintf("tools[%d]", i), fmt.Sprintf("Invalid 'tools[%d]': expected an object.", i))
		}
		if t.Type != "function" {
			continue
		}
		if t.Name == "" { // the chat shape {"type":"function","function":{...}} lands here
			return badRequest(fmt.Sprintf("tools[%d].name", i), fmt.Sprintf("Missing required parameter: 'tools[%d].name'.", i))
		}
		if _, _, err := toolProperties(t.Parameters); err != nil {
			return badRequest(fmt.Sprintf("tools[%d].parameters", i), fmt.Sprintf("Invalid 'tools[%d].parameters': %v.", i, err))
		}
		q.tools = append(q.tools, toolSpec{name: t.Name, params: t.Parameters})
	}
	q.choice = toolChoice{mode: "auto"}
	raw := bytes.TrimSpace(req.ToolChoice)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		switch mode {
		case "none", "auto", "required":
			q.choice.mode = mode
			return nil
		}
		return badRequest("tool_choice", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'none', 'auto', and 'required'.", mode))
	}
	var tc struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Mode  string `json:"mode"`
		Tools []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
	}
	if json.Unmarshal(raw, &tc) != nil {
		return badRequest("tool_choice", "Invalid 'tool_choice': expected a string or an object.")
	}
	switch tc.Type {
	case "function":
		if !slices.ContainsFunc(q.tools, func(t toolSpec) bool { return t.name == tc.Name }) {
			return badRequest("tool_choice", "Tool choice 'function' not found in 'tools' parameter.")
		}
		q.choice = toolChoice{mode: "required", forced: tc.Name}
	case "allowed_tools":
		var allowed []toolSpec
		for _, t := range q.tools {
			if slices.ContainsFunc(tc.Tools, func(a struct {
				Type string `json:"type"`
				Name string `json:"name"`
			}) bool {
				return a.Type == "function" && a.Name == t.name
			}) {
				allowed = append(allowed, t)
			}
		}
		q.tools = allowed
		if tc.Mode == "required" {
			q.choice.mode = "required"
		}
	default: // custom, hosted or MCP tool forced: no function call
		q.choice.mode = "none"
	}
	return nil
}

// responsesReply is the shared answer with the Responses ids and request echo.
type responsesReply struct {
	id          string
	created     int64
	req         *responsesRequest
	opts        responsesOptions
	answer      answer
	reasoningID string
	messageID   string
	itemIDs     []string // fc_… per call
	callIDs     []string // call_… per call
}

func (s *Server) responsesReplyFor(req *responsesRequest, opts responsesOptions, a answer) responsesReply {
	r := responsesReply{id: s.newID("resp_"), created: time.Now().Unix(), req: req, opts: opts, answer: a}
	if a.reasoning != nil {
		r.reasoningID = s.newID("rs_")
	}
	if len(a.words) > 0 {
		r.messageID = s.newID("msg_")
	}
	for range a.calls {
		r.itemIDs = append(r.itemIDs, s.newID("fc_"))
		r.callIDs = append(r.callIDs, s.newID("call_"))
	}
	return r
}

// status is the terminal status: incomplete when the output cap cut the answer.
func (r responsesReply) status() string {
	if r.answer.finish == finishLength {
		return "incomplete"
	}
	return "completed"
}

// usage is the Responses usage: input_tokens includes the cached tokens.
func (r responsesReply) usage() obj {
	a := r.answer
	return obj{
		{"input_tokens", a.promptTokens},
		{"input_tokens_details", obj{{"cached_tokens", a.cachedTokens}}},
		{"output_tokens", a.outputTokens},
		{"output_tokens_details", obj{{"reasoning_tokens", a.reasoningTokens}}},
		{"total_tokens", a.promptTokens + a.outputTokens},
	}
}

// reasoningItem is the reasoning output item with the summary written so far.
func (r responsesReply) reasoningItem(summary string, final bool) obj {
	parts := []obj{}
	if r.opts.summary && (final || summary != "") {
		parts = append(parts, obj{{"type", "summary_text"}, {"text", summary}})
	}
	item := obj{{"id", r.reasoningID}, {"type", "reasoning"}, {"summary", parts}}
	if r.opts.encrypted && final {
		item = append(item, member{"encrypted_content", sealReasoning(r.answer.reasoningText())})
	}
	return item
}

// messageItem is the message output item with the given text and status.
func (r responsesReply) messageItem(text, status string) obj {
	return obj{{"id", r.messageID}, {"type", "message"}, {"status", status},
		{"content", []obj{outputText(text)}}, {"role", "assistant"}}
}

// callItem is call i's function_call item with the given arguments and status.
func (r responsesReply) callItem(i int, args, status string) obj {
	return obj{{"id", r.itemIDs[i]}, {"type", "function_call"}, {"status", status},
		{"arguments", args}, {"call_id", r.callIDs[i]}, {"name", r.answer.calls[i].name}}
}

// outputText is an output_text content part.
func outputText(text string) obj {
	return obj{{"type", "output_text"}, {"text", text}, {"annotations", []any{}}, {"logprobs", []any{}}}
}

// output is the final output items: reasoning, then the message or the function calls.
func (r responsesReply) output() []obj {
	a := r.answer
	out := []obj{}
	if a.reasoning != nil {
		out = append(out, r.reasoningItem(a.reasoningText(), true))
	}
	if len(a.words) > 0 {
		status := "completed"
		if a.finish == finishLength {
			status = "incomplete"
		}
		out = append(out, r.messageItem(a.text(), status))
	}
	for i, c := range a.calls {
		out = append(out, r.callItem(i, c.arguments, "completed"))
	}
	return out
}

// object is the response object in a given state. It echoes the request's settings,
// with the API's defaults for those left out, because strict SDK models require the fields.
func (r responsesReply) object(status string, output []obj, usage any, failure any) obj {
	req := r.req
	orNull := func(raw json.RawMessage, dflt any) any {
		if len(bytes.TrimSpace(raw)) == 0 {
			return dflt
		}
		return raw
	}
	var completedAt, incomplete, effort, summary any
	switch status {
	case "completed":
		completedAt = r.created
	case "incomplete":
		incomplete = obj{{"reason", "max_output_tokens"}}
	}
	if req.Reasoning != nil {
		if req.Reasoning.Effort != nil {
			effort = *req.Reasoning.Effort
		}
		if req.Reasoning.Summary != nil {
			summary = *req.Reasoning.Summary
		}
	}
	tools := []json.RawMessage{}
	if req.Tools != nil {
		tools = req.Tools
	}
	return obj{
		{"id", r.id}, {"object", "response"}, {"created_at", r.created}, {"completed_at", completedAt},
		{"status", status}, {"error", failure}, {"incomplete_details", incomplete},
		{"instructions", orNull(req.Instructions, nil)},
		{"max_output_tokens", valueOr(req.MaxOutputTokens, nil)},
		{"model", req.Model}, {"output", output},
		{"parallel_tool_calls", valueOr(req.ParallelToolCalls, true)},
		{"previous_response_id", nil},
		{"reasoning", obj{{"effort", effort}, {"summary", summary}}},
		{"store", valueOr(req.Store, true)},
		{"temperature", valueOr(req.Temperature, 1.0)},
		{"text", orNull(req.Text, obj{{"format", obj{{"type", "text"}}}})},
		{"tool_choice", orNull(req.ToolChoice, "auto")},
		{"tools", tools},
		{"top_p", valueOr(req.TopP, 1.0)},
		{"truncation", valueOr(req.Truncation, "disabled")},
		{"usage", usage},
		{"metadata", orNull(req.Metadata, obj{})},
	}
}

// valueOr is *p, or dflt when p is nil.
func valueOr[T any](p *T, dflt any) any {
	if p == nil {
		return dflt
	}
	return *p
}

// sealReasoning is the encrypted_content of a reasoning item: opaque to clients, but carrying
// its text and a keyed hash of it, so a later request can prove the item came from here
// unchanged, as OpenAI verifies its own encrypted reasoning.
func sealReasoning(text string) string {
	sum := sha256.Sum256([]byte("modelgate-simulator/reasoning\x00" + text))
	return "gAAAAA" + base64.RawURLEncoding.EncodeToString(append([]byte(text+"\x00"), sum[:16]...))
}

// openReasoning returns the text sealed by sealReasoning and whether the seal holds.
func openReasoning(sealed string) (string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(sealed, "gAAAAA"))
	if err != nil || len(raw) < 17 {
		return "", false
	}
	text := string(raw[:len(raw)-17])
	return text, sealReasoning(text) == sealed
}

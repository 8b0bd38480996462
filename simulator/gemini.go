package simulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Google Gemini generateContent:
//   POST /v1beta/models/{model}:generateContent
//   POST /v1beta/models/{model}:streamGenerateContent?alt=sse (without alt=sse: a JSON array)
//   POST /v1beta/models/{model}:countTokens
// (also under /v1/). The answer is the shared one (answer.go); this file decodes requests into
// it, with the schema check that trips translating gateways (OpenAPI-subset "parameters"
// reject JSON-Schema keywords), and renders the response. gemini_stream.go renders streams.

// registerGemini mounts the Gemini endpoints, for the default route and /r/{route}. The
// model and method share one path segment ("gemini-2.5-flash:generateContent").
func (s *Server) registerGemini() {
	for _, version := range []string{"/v1beta", "/v1"} {
		s.handleRoutes(http.MethodPost, version+"/models/{action}", s.endpoint(geminiDialect, s.gemini))
	}
}

// geminiDialect: an API key in x-goog-api-key, ?key= or a Bearer token (Gemini CLI), and the
// Google RPC error envelope. A call without any key gets what Google sends: 403.
var geminiDialect = dialect{
	authorized: func(r *http.Request) bool {
		return strings.TrimSpace(r.Header.Get("X-Goog-Api-Key")) != "" ||
			strings.TrimSpace(r.URL.Query().Get("key")) != "" || bearerAuthorized(r)
	},
	unauthorized: apiError{Status: http.StatusForbidden, Type: "PERMISSION_DENIED",
		Message: "Method doesn't allow unregistered callers (callers without established identity). " +
			"Please use API Key or other form of API consumer identity to call this API."},
	failure:    geminiFailure,
	refusal:    geminiRefusal,
	writeError: writeGeminiError,
}

// geminiFailure is the error Google sends for a status; Type holds the RPC status.
func geminiFailure(status int) apiError {
	e := apiError{Status: status, Type: "INTERNAL", Message: "An internal error has occurred (simulated). " +
		"Please retry or report in https://developers.generativeai.google/guide/troubleshooting"}
	switch {
	case status == http.StatusUnauthorized:
		e.Type, e.Message = "UNAUTHENTICATED", "Request had invalid authentication credentials (simulated)."
	case status == http.StatusForbidden:
		e.Type, e.Message = "PERMISSION_DENIED", "The caller does not have permission (simulated)."
	case status == http.StatusNotFound:
		e.Type, e.Message = "NOT_FOUND", "Requested entity was not found (simulated)."
	case status == http.StatusTooManyRequests:
		e.Type, e.Message = "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota) (simulated)."
	case status == http.StatusServiceUnavailable || status == 529:
		e.Type, e.Message = "UNAVAILABLE", "The model is overloaded (simulated). Please try again later."
	case status == http.StatusGatewayTimeout:
		e.Type, e.Message = "DEADLINE_EXCEEDED", "Deadline expired before operation could complete (simulated)."
	case status < 500:
		e.Type, e.Message = "INVALID_ARGUMENT", "Request contains an invalid argument (simulated "+http.StatusText(status)+")."
	}
	return e
}

// writeGeminiError writes {"error":{code,message,status,details}}: an ErrorInfo when the
// error has a reason (Vertex AI's auth refusals), a QuotaFailure when the failure names a
// quota, and a RetryInfo when it carries a retry delay, as Google's 429s do.
func writeGeminiError(w http.ResponseWriter, e apiError) {
	body := obj{{"code", e.Status}, {"message", e.Message}, {"status", e.Type}}
	var details []obj
	if e.Reason != "" {
		details = append(details, obj{
			{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
			{"reason", e.Reason},
			{"domain", "googleapis.com"},
			{"metadata", obj{{"service", "aiplatform.googleapis.com"}}},
		})
	}
	if e.QuotaID != "" {
		details = append(details, obj{
			{"@type", "type.googleapis.com/google.rpc.QuotaFailure"},
			{"violations", []obj{{
				{"quotaMetric", "generativelanguage.googleapis.com/generate_content_free_tier_requests"},
				{"quotaId", e.QuotaID},
				{"quotaDimensions", obj{{"location", "global"}, {"model", "sim-model"}}},
				{"quotaValue", "10"},
			}}},
		})
	}
	delay := e.RetryDelay
	if delay == "" && e.RetryAfter > 0 {
		delay = strconv.Itoa(e.RetryAfter) + "s"
	}
	if delay != "" {
		details = append(details, obj{{"@type", "type.googleapis.com/google.rpc.RetryInfo"}, {"retryDelay", delay}})
	}
	if details != nil {
		body = append(body, member{"details", details})
	}
	writeJSON(w, e.Status, obj{{"error", body}})
}

// invalidGemini is Google's 400 for a malformed request.
func invalidGemini(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "INVALID_ARGUMENT", Message: fmt.Sprintf(format, args...)}
}

type geminiRequest struct {
	Contents          []geminiContent         `json:"contents"`
	SystemInstruction *geminiContent          `json:"systemInstruction"`
	Tools             []geminiTool            `json:"tools"`
	ToolConfig        *geminiToolConfig       `json:"toolConfig"`
	GenerationConfig  *geminiGenerationConfig `json:"generationConfig"`
	// GenerateContentRequest is countTokens' alternative to contents.
	GenerateContentRequest *geminiRequest `json:"generateContentRequest"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

// geminiPart is a oneof: exactly one data field is set (thought and thoughtSignature are
// metadata beside it).
type geminiPart struct {
	Text                *string         `json:"text"`
	Thought             bool            `json:"thought"`
	ThoughtSignature    string          `json:"thoughtSignature"`
	InlineData          json.RawMessage `json:"inlineData"`
	FileData            json.RawMessage `json:"fileData"`
	FunctionCall        *geminiCall     `json:"functionCall"`
	FunctionResponse    *geminiCall     `json:"functionResponse"`
	ExecutableCode      json.RawMessage `json:"executableCode"`
	CodeExecutionResult json.RawMessage `json:"codeExecutionResult"`
}

// geminiCall is a functionCall (args) or functionResponse (response).
type geminiCall struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Args     json.RawMessage `json:"args"`
	Response json.RawMessage `json:"response"`
}

type geminiTool struct {
	FunctionDeclarations []struct {
		Name                 string          `json:"name"`
		Parameters           json.RawMessage `json:"parameters"`
		ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
	} `json:"functionDeclarations"`
}

type geminiToolConfig struct {
	FunctionCallingConfig *struct {
		Mode                 string   `json:"mode"`
		AllowedFunctionNames []string `json:"allowedFunctionNames"`
	} `json:"functionCallingConfig"`
}

type geminiGenerationConfig struct {
	MaxOutputTokens *int     `json:"maxOutputTokens"`
	Temperature     *float64 `json:"temperature"`
	StopSequences   []string `json:"stopSequences"`
	ThinkingConfig  *struct {
		ThinkingBudget  *int   `json:"thinkingBudget"`
		ThinkingLevel   string `json:"thinkingLevel"`
		IncludeThoughts bool   `json:"includeThoughts"`
	} `json:"thinkingConfig"`
}

func (s *Server) gemini(ex *exchange) {
	action := ex.r.PathValue("action")
	cut := strings.LastIndexByte(action, ':')
	if cut <= 0 {
		writeGeminiError(ex.w, apiError{Status: http.StatusNotFound, Type: "NOT_FOUND",
			Message: fmt.Sprintf("models/%s is not found, or the method is missing from the path.", action)})
		return
	}
	model, method := action[:cut], action[cut+1:]
	switch method {
	case "generateContent", "streamGenerateContent":
		q, thoughts, apiErr := decodeGemini(ex.body, false)
		if apiErr != nil {
			writeGeminiError(ex.w, *apiErr)
			return
		}
		q.model = model
		want, apiErr := geminiImageWanted(ex.body, model)
		if apiErr != nil {
			writeGeminiError(ex.w, *apiErr)
			return
		}
		if want != nil {
			s.geminiImage(ex, method == "streamGenerateContent", model, q, want)
			return
		}
		reply := geminiReply{id: s.newID(""), model: model, answer: decide(q), showThoughts: thoughts}
		if method == "generateContent" {
			writeJSON(ex.w, http.StatusOK, reply.body())
			return
		}
		f := framingJSONArray // what the API sends without alt=sse
		if ex.r.URL.Query().Get("alt") == "sse" {
			f = framingSSECRLF
		}
		playStream(ex, f, geminiEvents(reply))
	case "countTokens":
		q, _, apiErr := decodeGemini(ex.body, true)
		if apiErr != nil {
			writeGeminiError(ex.w, *apiErr)
			return
		}
		n := max(q.promptTokens, 1)
		writeJSON(ex.w, http.StatusOK, obj{{"totalTokens", n},
			{"promptTokensDetails", []obj{{{"modality", "TEXT"}, {"tokenCount", n}}}}})
	default:
		writeGeminiError(ex.w, apiError{Status: http.StatusNotFound, Type: "NOT_FOUND",
			Message: fmt.Sprintf("Method %q is not found for models/%s.", method, model)})
	}
}

// decodeGemini parses and validates a request into the shared ask; it also reports whether
// thought summaries are to be shown. counting is set for countTokens.
func decodeGemini(body []byte, counting bool) (ask, bool, *apiError) {
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
			return ask{}, false, invalidGemini("Invalid value at '%s' (%s), %s", te.Field, te.Type, te.Value)
		}
		return ask{}, false, invalidGemini("Invalid JSON payload received. %v", err)
	}
	if counting && len(req.Contents) == 0 && req.GenerateContentRequest != nil {
		req = *req.GenerateContentRequest
	}
	if len(req.Contents) == 0 {
		return ask{}, false, invalidGemini("* GenerateContentRequest.contents: contents is not specified\n")
	}
	if e := geminiRange(body, geminiBounds); e != nil {
		return ask{}, false, e
	}
	q := ask{parallel: true}
	var turn lastTurn
	if si := req.SystemInstruction; si != nil {
		for _, p := range si.Parts {
			if p.Text != nil {
				q.promptTokens += countWords(*p.Text)
			}
		}
	}
	for i, c := range req.Contents {
		// "function" is the role old docs gave function responses; it reads as a user turn.
		if c.Role != "" && c.Role != "user" && c.Role != "model" && c.Role != "function" {
			return ask{}, false, invalidGemini("Please use a valid role: user, model.")
		}
		if len(c.Parts) == 0 {
			return ask{}, false, invalidGemini("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.\n", i)
		}
		var texts []string
		responses := false
		for j, p := range c.Parts {
			switch {
			case p.Text != nil:
				if !p.Thought { // thought summaries sent back are not re-read
					texts = append(texts, *p.Text)
				}
			case p.FunctionCall != nil:
				q.promptTokens += countWords(compactJSON(p.FunctionCall.Args))
			case p.FunctionResponse != nil:
				responses = true
				q.promptTokens += countWords(compactJSON(p.FunctionResponse.Response))
			case p.InlineData != nil, p.FileData != nil, p.ExecutableCode != nil, p.CodeExecutionResult != nil:
			default:
				return ask{}, false, invalidGemini("* GenerateContentRequest.contents[%d].parts[%d].data: "+
					"required oneof field 'data' must have one initialized field\n", i, j)
			}
		}
		text := strings.Join(texts, " ")
		q.promptTokens += countWords(text)
		user := c.Role != "model"
		if user && len(texts) > 0 {
			q.lastUser = text
		}
		switch {
		case !user:
			turn.model()
		case responses:
			turn.toolResults()
		default:
			turn.userContent()
		}
	}
	q.userTurn = turn.isUserTurn()
	if apiErr := q.readGeminiTools(&req); apiErr != nil {
		return ask{}, false, apiErr
	}
	shown := false
	if g := req.GenerationConfig; g != nil {
		if g.MaxOutputTokens != nil {
			if *g.MaxOutputTokens < 0 {
				return ask{}, false, invalidGemini("* GenerateContentRequest.generation_config.max_output_tokens: "+
					"max_output_tokens must be positive, got %d.\n", *g.MaxOutputTokens)
			}
			q.maxTokens = *g.MaxOutputTokens // 0 is the proto default: no cap
		}
		q.stop = g.StopSequences
		if tc := g.ThinkingConfig; tc != nil {
			// A budget of 0 turns thinking off; any other budget (-1 is dynamic), a level or
			// includeThoughts turns it on. Thoughts are shown only with includeThoughts.
			q.thinking = tc.IncludeThoughts || tc.ThinkingLevel != "" || (tc.ThinkingBudget != nil && *tc.ThinkingBudget != 0)
			if tc.ThinkingBudget != nil && *tc.ThinkingBudget == 0 {
				q.thinking = false
			}
			shown = q.thinking && tc.IncludeThoughts
		}
	}
	return q, shown, nil
}

// readGeminiTools reads functionDeclarations and toolConfig. Other tool kinds (googleSearch,
// codeExecution, ...) are accepted and never used.
func (q *ask) readGeminiTools(req *geminiRequest) *apiError {
	declared := map[string]bool{}
	for i, t := range req.Tools {
		for j, fd := range t.FunctionDeclarations {
			at := fmt.Sprintf("tools[%d].function_declarations[%d]", i, j)
			if fd.Name == "" {
				return invalidGemini("* GenerateContentRequest.%s.name: Name cannot be empty.\n", at)
			}
			if !geminiNames.matches(fd.Name) {
				return invalidGemini("* GenerateContentRequest.%s.name: Invalid function name. Must be alphameric (a-z, A-Z, 0-9), "+
					"underscores (_), dots (.), colons (:) or dashes (-), with a maximum length of %d.\n", at, geminiNames.max)
			}
			if declared[fd.Name] {
				return invalidGemini("Duplicate function declaration found: %s", fd.Name)
			}
			declared[fd.Name] = true
			params := fd.Parameters
			if len(fd.ParametersJSONSchema) > 0 {
				if len(fd.Parameters) > 0 {
					return invalidGemini("* GenerateContentRequest.%s: parameters and parameters_json_schema "+
						"must not both be set.\n", at)
				}
				params = fd.ParametersJSONSchema // real JSON Schema: any keyword goes
				if _, _, err := toolProperties(params); err != nil {
					return invalidGemini("Invalid JSON payload received. Invalid value at '%s.parameters_json_schema': %v", at, err)
				}
			} else if len(params) > 0 {
				if msg := checkGeminiSchema(params, at+".parameters"); msg != "" {
					return invalidGemini("%s", msg)
				}
			}
			q.tools = append(q.tools, toolSpec{name: fd.Name, params: params})
		}
	}
	q.choice = toolChoice{mode: "auto"}
	if req.ToolConfig == nil || req.ToolConfig.FunctionCallingConfig == nil {
		return nil
	}
	fc := req.ToolConfig.FunctionCallingConfig
	switch fc.Mode {
	case "", "MODE_UNSPECIFIED", "AUTO", "VALIDATED":
	case "ANY":
		q.choice.mode = "required"
	case "NONE":
		q.choice.mode = "none"
	default:
		return invalidGemini("Invalid value at 'tool_config.function_calling_config.mode' "+
			"(type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), %q", fc.Mode)
	}
	for _, name := range fc.AllowedFunctionNames {
		if !declared[name] {
			return invalidGemini("* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: "+
				"%q is not the name of a function declaration.\n", name)
		}
	}
	if len(fc.AllowedFunctionNames) > 0 && q.choice.mode == "required" {
		var allowed []toolSpec
		for _, t := range q.tools {
			for _, name := range fc.AllowedFunctionNames {
				if t.name == name {
					allowed = append(allowed, t)
					break
				}
			}
		}
		q.tools = allowed
		if len(allowed) == 1 {
			q.choice.forced = allowed[0].name
		}
	}
	return nil
}

// geminiSchemaFields are the keys of Gemini's OpenAPI-subset Schema; anything else in
// "parameters" (additionalProperties, $schema, const, ...) is a 400.
var geminiSchemaFields = map[string]bool{
	"type": true, "format": true, "title": true, "description": true, "nullable": true,
	"enum": true, "maxItems": true, "minItems": true, "properties": true, "required": true,
	"minProperties": true, "maxProperties": true, "minLength": true, "maxLength": true,
	"pattern": true, "example": true, "anyOf": true, "propertyOrdering": true, "default": true,
	"items": true, "minimum": true, "maximum": true,
}

// checkGeminiSchema returns Google's complaint about schema at path at, or "".
func checkGeminiSchema(schema json.RawMessage, at string) string {
	keys, values, err := objectMembers(schema)
	if err != nil {
		return fmt.Sprintf("Invalid JSON payload received. Invalid value at '%s': %v", at, err)
	}
	for i, k := range keys {
		if !geminiSchemaFields[k] {
			return fmt.Sprintf("Invalid JSON payload received. Unknown name %q at '%s': Cannot find field.", k, at)
		}
		switch k {
		case "type":
			var typ string
			if json.Unmarshal(values[i], &typ) != nil {
				return fmt.Sprintf("Invalid JSON payload received. Unknown name \"type\" at '%s': "+
					"Proto field is not repeating, cannot start list.", at)
			}
		case "properties":
			_, props, err := objectMembers(values[i])
			if err != nil {
				return fmt.Sprintf("Invalid JSON payload received. Invalid value at '%s.properties': %v", at, err)
			}
			for j, p := range props {
				if msg := checkGeminiSchema(p, fmt.Sprintf("%s.properties[%d].value", at, j)); msg != "" {
					return msg
				}
			}
		case "items":
			if msg := checkGeminiSchema(values[i], at+".items"); msg != "" {
				return msg
			}
		case "anyOf":
			var alts []json.RawMessage
			_ = json.Unmarshal(values[i], &alts)
			for j, alt := range alts {
				if msg := checkGeminiSchema(alt, fmt.Sprintf("%s.any_of[%d]", at, j)); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
}

// geminiReply is the shared answer with the Gemini envelope.
type geminiReply struct {
	id           string // responseId
	model        string
	answer       answer
	showThoughts bool
}

func (r geminiReply) finishReason() string {
	if r.answer.finish == finishLength {
		return "MAX_TOKENS"
	}
	return "STOP" // also for function calls: Gemini has no tool-call finish reason
}

// usage is usageMetadata. promptTokenCount includes the cached tokens, candidatesTokenCount
// excludes thoughts, zero counts are left out as protobuf JSON does. Interim stream chunks
// carry only the prompt count (interim is set).
func (r geminiReply) usage(interim bool) obj {
	a := r.answer
	if interim {
		return obj{{"promptTokenCount", a.promptTokens}, {"totalTokenCount", a.promptTokens}}
	}
	u := obj{{"promptTokenCount", a.promptTokens}}
	if n := a.outputTokens - a.reasoningTokens; n > 0 {
		u = append(u, member{"candidatesTokenCount", n})
	}
	u = append(u, member{"totalTokenCount", a.promptTokens + a.outputTokens})
	if a.cachedTokens > 0 {
		u = append(u, member{"cachedContentTokenCount", a.cachedTokens})
	}
	u = append(u, member{"promptTokensDetails", []obj{{{"modality", "TEXT"}, {"tokenCount", a.promptTokens}}}})
	if a.cachedTokens > 0 {
		u = append(u, member{"cacheTokensDetails", []obj{{{"modality", "TEXT"}, {"tokenCount", a.cachedTokens}}}})
	}
	if a.reasoningTokens > 0 {
		u = append(u, member{"thoughtsTokenCount", a.reasoningTokens})
	}
	return u
}

// thoughtPart is the thought summary part.
func (r geminiReply) thoughtPart(text string) obj { return obj{{"text", text}, {"thought", true}} }

// answerParts are the non-thought parts: the text (none when empty) or one functionCall per
// call, args as an object and no id (the Developer API sends none). When the model thought,
// the first of them carries the thoughtSignature.
func (r geminiReply) answerParts() []obj {
	a := r.answer
	var parts []obj
	if len(a.words) > 0 {
		parts = append(parts, obj{{"text", a.text()}})
	}
	for _, c := range a.calls {
		parts = append(parts, obj{{"functionCall", obj{{"name", c.name}, {"args", json.RawMessage(c.arguments)}}}})
	}
	if len(parts) > 0 {
		parts[0] = r.signed(parts[0])
	}
	return parts
}

// signed adds the thoughtSignature to p when the model thought.
func (r geminiReply) signed(p obj) obj {
	if r.answer.reasoning == nil {
		return p
	}
	return append(p[:len(p):len(p)], member{"thoughtSignature", signature("thought", r.answer.reasoningText())})
}

// response is one GenerateContentResponse with the given parts; final adds the finishReason
// and the full usage.
func (r geminiReply) response(parts []obj, final bool) obj {
	content := obj{}
	if len(parts) > 0 {
		content = append(content, member{"parts", parts})
	}
	content = append(content, member{"role", "model"})
	cand := obj{{"content", content}}
	if final {
		cand = append(cand, member{"finishReason", r.finishReason()})
	}
	cand = append(cand, member{"index", 0})
	return obj{{"candidates", []obj{cand}}, {"usageMetadata", r.usage(!final)},
		{"modelVersion", r.model}, {"responseId", r.id}}
}

// body is the non-streaming response.
func (r geminiReply) body() obj {
	var parts []obj
	if r.showThoughts {
		parts = append(parts, r.thoughtPart(r.answer.reasoningText()))
	}
	return r.response(append(parts, r.answerParts()...), true)
}

// Package gemini translates Google's generateContent format, through codec/ir, both ways: as
// an upstream format (requests encoded, answers, streams and errors decoded) and as a client
// format (requests decoded, answers, streams and errors encoded). The model and the stream
// mode of a request are in its URL path, not its body; the gateway takes them from there.
package gemini

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

// Format is the gemini generateContent format as routes speak it.
var Format = format{}

var (
	_ ir.UpstreamFormat = format{}
	_ ir.ClientFormat   = format{}
)

type format struct{}

// Path is appended to the route's base URL, which ends with /v1beta. The model id is one
// path segment (escaped); a "models/" prefix, as the SDKs write it, is accepted.
func (format) Path(upstreamModel string, stream bool) string {
	p := "/models/" + url.PathEscape(strings.TrimPrefix(upstreamModel, "models/"))
	if stream {
		return p + ":streamGenerateContent?alt=sse"
	}
	return p + ":generateContent"
}

// signatureFormat is the SignatureFormat of every signature gemini issues.
const signatureFormat = codec.FormatGemini

// Wire shapes. One set serves requests and answers: Part is the same oneof both ways.

type request struct {
	Contents          []content         `json:"contents"`
	SystemInstruction *content          `json:"systemInstruction,omitempty"`
	Tools             []tool            `json:"tools,omitempty"`
	ToolConfig        *toolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

type part struct {
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FileData         *fileData         `json:"fileData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

type blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type fileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
	// A call streamed in pieces (answers only; streamed_call.go).
	PartialArgs  []partialArg `json:"partialArgs,omitempty"`
	WillContinue bool         `json:"willContinue,omitempty"`
}

type functionResponse struct {
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type tool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

type functionDeclaration struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Parameters  any    `json:"parameters,omitempty"`
}

type toolConfig struct {
	FunctionCallingConfig functionCallingConfig `json:"functionCallingConfig"`
}

type functionCallingConfig struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

type generationConfig struct {
	MaxOutputTokens    *int            `json:"maxOutputTokens,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	TopK               *int            `json:"topK,omitempty"`
	StopSequences      []string        `json:"stopSequences,omitempty"`
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	ThinkingConfig     *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	ThinkingBudget  *int `json:"thinkingBudget,omitempty"`
	IncludeThoughts bool `json:"includeThoughts,omitempty"`
}

// response is one GenerateContentResponse: a whole answer, or one chunk of a stream.
type response struct {
	Candidates     []candidate     `json:"candidates"`
	PromptFeedback *promptFeedback `json:"promptFeedback"`
	UsageMetadata  *usageMetadata  `json:"usageMetadata"`
	ModelVersion   string          `json:"modelVersion"`
	ResponseID     string          `json:"responseId"`
	CreateTime     string          `json:"createTime"` // Vertex only
	Error          *apiError       `json:"error"`
}

type candidate struct {
	Content      *content `json:"content"`
	FinishReason string   `json:"finishReason"`
	Index        int      `json:"index"`
}

type promptFeedback struct {
	BlockReason string `json:"blockReason"`
}

type usageMetadata struct {
	PromptTokenCount        int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
	CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
	ToolUsePromptTokenCount int64 `json:"toolUsePromptTokenCount"`
}

// usage normalizes Gemini's counts: promptTokenCount includes the cached
// tokens, candidatesTokenCount excludes the thoughts; tool-use prompt tokens (search
// results and the like) are input too.
func (u *usageMetadata) usage() codec.Usage {
	in := u.PromptTokenCount + u.ToolUsePromptTokenCount - u.CachedContentTokenCount
	if in < 0 {
		in = 0
	}
	return codec.Usage{
		Input:     in,
		CacheRead: u.CachedContentTokenCount,
		Output:    u.CandidatesTokenCount,
		Reasoning: u.ThoughtsTokenCount,
	}
}

// candidate0 is the first candidate (index 0); the gateway never asks for more.
func (r *response) candidate0() *candidate {
	for i := range r.Candidates {
		if r.Candidates[i].Index == 0 {
			return &r.Candidates[i]
		}
	}
	return nil
}

// stopReason maps a finishReason. Any function call in the answer makes it
// StopToolUse, whatever Gemini said (a function-call turn ends with STOP).
func stopReason(finish string, sawCall bool) ir.StopReason {
	if sawCall {
		return ir.StopToolUse
	}
	switch finish {
	case "MAX_TOKENS":
		return ir.StopLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return ir.StopContentFilter
	}
	return ir.StopEnd
}

// newCallID mints the id of a function call that came without one: call_ + 24 base62
// characters. A variable so tests can make it deterministic.
var newCallID = func() string { return codec.RandomID("call_") }

// callArgs renders wire args as IR Arguments: compact JSON of an object, "{}" when absent.
func callArgs(raw json.RawMessage) string {
	if obj, ok := compactObject(raw); ok {
		return obj
	}
	return "{}"
}

func strptr(s string) *string { return &s }

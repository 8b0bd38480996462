package gemini

import (
	"net/http"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

// outResponse is a GenerateContentResponse the gateway writes to a gemini client: a whole
// answer, or one chunk of a stream holding only the new parts.
type outResponse struct {
	Candidates    []outCandidate `json:"candidates"`
	UsageMetadata *outUsage      `json:"usageMetadata,omitempty"`
	ModelVersion  string         `json:"modelVersion"`
	ResponseID    string         `json:"responseId"`
}

type outCandidate struct {
	Content      outContent `json:"content"`
	FinishReason string     `json:"finishReason,omitempty"`
	Index        int        `json:"index"`
}

type outContent struct {
	Parts []part `json:"parts,omitempty"`
	Role  string `json:"role"`
}

type outUsage struct {
	PromptTokenCount        int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64 `json:"candidatesTokenCount,omitempty"`
	CachedContentTokenCount int64 `json:"cachedContentTokenCount,omitempty"`
	ThoughtsTokenCount      int64 `json:"thoughtsTokenCount,omitempty"`
	TotalTokenCount         int64 `json:"totalTokenCount"`
}

// usageOut renders normalized usage as usageMetadata: the prompt count includes cached input,
// the candidates count excludes the thoughts.
func usageOut(u codec.Usage) *outUsage {
	prompt := u.Input + u.CacheRead + u.CacheWrite
	return &outUsage{PromptTokenCount: prompt, CandidatesTokenCount: u.Output,
		CachedContentTokenCount: u.CacheRead, ThoughtsTokenCount: u.Reasoning,
		TotalTokenCount: prompt + u.Output + u.Reasoning}
}

// finishReason is the Gemini finishReason of a stop: a tool-call turn ends with STOP, as
// Gemini's own do.
func finishReason(s ir.StopReason) string {
	switch s {
	case ir.StopLength:
		return "MAX_TOKENS"
	case ir.StopContentFilter:
		return "SAFETY"
	}
	return "STOP"
}

// EncodeResponse renders a whole answer with its thought parts.
func (f format) EncodeResponse(r *ir.Response, model string) []byte {
	return f.EncodeResponseFor(r, &ir.Request{Thinking: ir.Thinking{IncludeText: true}}, model)
}

// EncodeResponseFor renders a whole answer; thought parts only when the client asked for
// them (thinkingConfig.includeThoughts), as Gemini does.
func (format) EncodeResponseFor(r *ir.Response, req *ir.Request, model string) []byte {
	var parts []part
	for _, p := range r.Parts {
		if wp, ok := answerPart(p, req.Thinking.IncludeText); ok {
			parts = append(parts, wp)
		}
	}
	out := outResponse{
		Candidates: []outCandidate{{Content: outContent{Parts: parts, Role: "model"},
			FinishReason: finishReason(r.Stop), Index: 0}},
		UsageMetadata: usageOut(r.Usage), ModelVersion: model, ResponseID: responseID(r.ID),
	}
	return marshal(out)
}

// answerPart renders one IR part for a gemini client. Signatures this format issued stay
// on their part; foreign ones cannot be sent back to their issuer from a gemini client and
// are left out (the gateway reports them).
func answerPart(p ir.Part, thoughts bool) (part, bool) {
	sig := ""
	if p.SignatureFormat == signatureFormat {
		sig = p.Signature
	}
	switch p.Kind {
	case ir.PartText:
		if p.Text == "" && sig == "" {
			return part{}, false
		}
		return part{Text: strptr(p.Text), ThoughtSignature: sig}, true
	case ir.PartReasoning:
		r := p.Reasoning
		if !thoughts || r == nil || r.Redacted != "" && r.Text == "" {
			return part{}, false
		}
		wp := part{Text: strptr(r.Text), Thought: true}
		if r.SignatureFormat == signatureFormat {
			wp.ThoughtSignature = r.Signature
		}
		if r.Text == "" && wp.ThoughtSignature == "" {
			return part{}, false
		}
		return wp, true
	case ir.PartToolCall:
		tc := p.ToolCall
		args, _ := argsObject(tc.Arguments)
		wp := part{FunctionCall: &functionCall{ID: tc.ID, Name: tc.Name, Args: args}}
		if tc.SignatureFormat == signatureFormat {
			wp.ThoughtSignature = tc.Signature
		}
		return wp, true
	case ir.PartImage, ir.PartFile:
		wp, ok := mediaPart(p, nil)
		wp.ThoughtSignature = sig
		return wp, ok
	}
	return part{}, false
}

// responseID is the answer's id, minted when the source had none.
func responseID(id string) string {
	if id != "" {
		return id
	}
	return newCallID()[len("call_"):]
}

// rpcStatus is the google.rpc status name of a neutral error kind.
var rpcStatus = map[ir.ErrorKind]string{
	ir.ErrInvalidRequest: "INVALID_ARGUMENT", ir.ErrAuthentication: "UNAUTHENTICATED",
	ir.ErrPermission: "PERMISSION_DENIED", ir.ErrNotFound: "NOT_FOUND",
	ir.ErrTooLarge: "INVALID_ARGUMENT", ir.ErrRateLimit: "RESOURCE_EXHAUSTED",
	ir.ErrBilling: "RESOURCE_EXHAUSTED", ir.ErrServer: "INTERNAL",
	ir.ErrOverloaded: "UNAVAILABLE", ir.ErrTimeout: "DEADLINE_EXCEEDED",
}

// StatusName is the google.rpc status name of an error.
func StatusName(e *ir.Error) string {
	if e.Status == 499 {
		return "CANCELLED"
	}
	if s, ok := rpcStatus[e.Kind]; ok {
		return s
	}
	return "INTERNAL"
}

type outError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
	Details []any  `json:"details,omitempty"`
}

// EncodeError renders Google's envelope {"error":{"code","message","status"}}; the field of
// an invalid request (Param) becomes a google.rpc.BadRequest field violation, as Google
// reports it.
func (format) EncodeError(e *ir.Error) []byte { return EncodeErrorDetails(e) }

// EncodeErrorDetails is EncodeError with more entries for the details list (google.rpc
// RequestInfo, RetryInfo, ErrorInfo objects, each with its "@type").
func EncodeErrorDetails(e *ir.Error, details ...any) []byte {
	status := e.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	out := outError{Code: status, Message: e.Message, Status: StatusName(e)}
	if e.Param != "" && e.Kind == ir.ErrInvalidRequest {
		out.Details = append(out.Details, map[string]any{
			"@type":           "type.googleapis.com/google.rpc.BadRequest",
			"fieldViolations": []map[string]string{{"field": e.Param, "description": e.Message}},
		})
	}
	out.Details = append(out.Details, details...)
	return marshal(map[string]outError{"error": out})
}

// marshal is json.Marshal without HTML escaping: text travels as written.
func marshal(v any) []byte {
	b, err := codec.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}

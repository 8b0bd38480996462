// Package ir is the canonical representation in the middle of every format conversion: a
// request, a whole response, and a stream of events. Each wire format translates to and from
// these types and never to another format directly.
package ir

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/codec"
)

// Role of a message. System content that a format keeps apart (messages `system`, gemini
// `systemInstruction`, responses `instructions`) becomes RoleSystem messages, in order, so a
// system message in the middle of a chat conversation keeps its place until a target format
// decides how to express it.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // carries PartToolResult parts only
)

// PartKind says which fields of a Part are set.
type PartKind uint8

const (
	PartText       PartKind = iota + 1
	PartImage               // Image
	PartToolCall            // ToolCall (assistant)
	PartToolResult          // ToolResult (tool or user)
	PartReasoning           // Reasoning (assistant)
	PartFile                // File (documents, audio): passed where the target can take it
)

// Part is one piece of content.
type Part struct {
	Kind       PartKind
	Text       string
	Image      *Image
	File       *File
	ToolCall   *ToolCall
	ToolResult *ToolResult
	Reasoning  *Reasoning
	// Signature is an opaque token the upstream attached to this text or media part (gemini
	// puts a thoughtSignature on any part, not only on thoughts and calls); SignatureFormat is
	// the format that issued it. A text part may be empty when it only carries a signature.
	Signature       string
	SignatureFormat string
	// CacheControl is the messages format's prompt-caching marker, kept raw so it reaches a
	// messages-format upstream unchanged and is dropped (and reported) elsewhere.
	CacheControl json.RawMessage
}

// Image is an image in user content or a tool result: a URL, or inline data.
type Image struct {
	URL       string // http(s) URL; empty when Data is set
	MediaType string // e.g. image/png, for inline data
	Data      string // base64, without the data: prefix
	Detail    string // chat/responses detail hint (auto, low, high)
}

// File is a non-image attachment (PDF, audio) as inline base64 data or a URL.
type File struct {
	MediaType string
	Data      string
	URL       string
	Name      string
}

// ToolCall is a call the assistant made.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // a JSON object as text; "{}" when the call has no arguments
	// Signature is an opaque provider token that must travel back with this call (gemini's
	// thoughtSignature); SignatureFormat is the format that issued it.
	Signature       string
	SignatureFormat string
}

// ToolResult answers one tool call.
type ToolResult struct {
	CallID  string
	Name    string // the function's name, when known (gemini needs it)
	Content []Part // text and images
	IsError bool
}

// Reasoning is chain-of-thought. Signature, Redacted and Encrypted are opaque to every format
// but the one that issued them (SignatureFormat), and are only sent back to it.
type Reasoning struct {
	Text            string
	Signature       string // messages thinking signature, gemini thoughtSignature
	Redacted        string // messages redacted_thinking data
	Encrypted       string // responses encrypted_content
	ID              string // responses reasoning item id
	SignatureFormat string
}

// Message is one turn.
type Message struct {
	Role  Role
	Name  string // chat's optional participant name
	Parts []Part
}

// Text returns the message's text parts concatenated.
func (m Message) Text() string {
	var s string
	for _, p := range m.Parts {
		if p.Kind == PartText {
			s += p.Text
		}
	}
	return s
}

// Tool is a function the model may call.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON schema object; nil means no parameters
	Strict      *bool
	// Custom marks a free-form (non-JSON) tool of the chat/responses formats.
	Custom bool
	// Deferred marks a tool loaded on demand (the messages format's defer_loading): it is not
	// in the model's context until the client loads it (Claude Code's tool search, and its
	// "never call this" placeholder that keeps deferred loading on).
	Deferred bool
}

// HasImages reports an image anywhere in the request's messages, tool results included:
// what needs a model that takes image input.
func (r *Request) HasImages() bool {
	for _, m := range r.Messages {
		if hasImage(m.Parts) {
			return true
		}
	}
	return false
}

func hasImage(parts []Part) bool {
	for _, p := range parts {
		if p.Kind == PartImage || p.Kind == PartToolResult && hasImage(p.ToolResult.Content) {
			return true
		}
	}
	return false
}

// LoadedTools are the tools a model of a format without on-demand loading may see: the
// deferred ones are left out, as the messages API keeps them out of the model's context, and
// each left out is reported.
func (r *Request) LoadedTools(loss *Loss) []Tool {
	n := 0
	for _, t := range r.Tools {
		if !t.Deferred {
			n++
		}
	}
	if n == len(r.Tools) {
		return r.Tools
	}
	loss.Drop("tools[].defer_loading")
	out := make([]Tool, 0, n)
	for _, t := range r.Tools {
		if !t.Deferred {
			out = append(out, t)
		}
	}
	return out
}

// ToolChoiceMode is how the model must use tools.
type ToolChoiceMode string

const (
	ToolAuto     ToolChoiceMode = "auto"
	ToolNone     ToolChoiceMode = "none"
	ToolRequired ToolChoiceMode = "required" // some tool
	ToolNamed    ToolChoiceMode = "tool"     // the tool in Name
)

// ToolChoice is the request's tool_choice; Mode "" means the format's default.
type ToolChoice struct {
	Mode    ToolChoiceMode
	Name    string
	Allowed []string // chat/responses allowed_tools: restrict to these names
}

// Thinking is the client's reasoning request, as given; codec/reasoning maps it onto the
// target model's class before a format encodes it.
type Thinking struct {
	Effort       string // none, minimal, low, medium, high, xhigh, max; "" = not given
	Enabled      *bool  // thinking on/off (messages thinking.type, enable_thinking, gemini budget 0)
	BudgetTokens int    // messages budget_tokens, gemini thinkingBudget (>0)
	Summary      string // responses reasoning.summary (auto, concise, detailed)
	IncludeText  bool   // the client wants reasoning text back (gemini includeThoughts)
	// Adaptive says the model takes only adaptive thinking sized by an effort (catalog
	// reasoning.adaptive): set by codec/reasoning, read by the messages encoder.
	Adaptive bool
}

// Efforts are the reasoning efforts a client may name, in every format; anything else is the
// client's 400.
var Efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

// ValidEffort reports whether e is one of Efforts.
func ValidEffort(e string) bool { return slices.Contains(Efforts, e) }

// EffortList is Efforts for error messages.
var EffortList = strings.Join(Efforts, ", ")

// Request is a generation request.
type Request struct {
	Model       string
	Messages    []Message
	Tools       []Tool
	ToolChoice  ToolChoice
	Parallel    *bool // parallel tool calls allowed
	MaxTokens   int   // 0 = not given
	Temperature *float64
	TopP        *float64
	TopK        *int
	Stop        []string
	Stream      bool
	Thinking    Thinking
	// ResponseFormat is the structured-output request in chat's response_format shape.
	ResponseFormat json.RawMessage
	User           string
	// Choices is how many answers the client asked for (chat n, gemini candidateCount); 0 is
	// one. Only a route of the client's own format can give more than one.
	Choices int
	// IncludeUsage is chat's stream_options.include_usage: the client wants the usage chunk.
	IncludeUsage bool
	// PreviousResponseID is the responses format's server-side state reference.
	PreviousResponseID string
	// Extra holds top-level fields the decoder did not map, by name, so a same-format route
	// receives them unchanged. Other formats drop them and report the names.
	Extra map[string]json.RawMessage
}

// StopReason is why generation ended.
type StopReason string

const (
	StopEnd           StopReason = "end"
	StopLength        StopReason = "length"
	StopToolUse       StopReason = "tool_use"
	StopSequence      StopReason = "stop_sequence"
	StopContentFilter StopReason = "content_filter"
	StopPause         StopReason = "pause"
)

// Response is a whole answer.
type Response struct {
	ID           string
	Model        string
	Created      int64
	Parts        []Part // reasoning, text, tool calls, in order
	Stop         StopReason
	StopSequence string
	Usage        codec.Usage
}

// EventKind says which fields of an Event are set.
type EventKind uint8

const (
	EvStart     EventKind = iota + 1 // ID, Model; Usage may hold input counts already known
	EvText                           // Text; Signature and Format when the part was signed (Text may then be "")
	EvReasoning                      // Text
	EvSignature                      // Text: the signature of the reasoning so far; Format
	EvRedacted                       // Text: redacted reasoning data
	EvToolStart                      // Index (0-based per call), ID, Name, Signature
	EvToolArgs                       // Index, Text: a fragment of the arguments JSON
	EvUsage                          // Usage: every count so far; a later event replaces it whole
	EvFinish                         // Stop, StopSequence; Usage if known
	EvError                          // Err: the stream failed after it began
)

// Event is one step of a streamed answer.
type Event struct {
	Kind         EventKind
	Text         string
	Index        int
	ID           string
	Name         string
	Model        string
	Signature    string // EvToolStart, EvText: the part's signature (EvSignature carries its own in Text)
	Format       string // the format that issued a signature
	Stop         StopReason
	StopSequence string
	Usage        codec.Usage
	Err          *Error
}

// Error is an error in format-neutral terms; each format renders it in its own envelope.
type Error struct {
	Status  int
	Kind    ErrorKind
	Code    string
	Param   string
	Message string
}

func (e *Error) Error() string { return e.Message }

// ErrorKind is the neutral error class.
type ErrorKind string

const (
	ErrInvalidRequest ErrorKind = "invalid_request"
	ErrAuthentication ErrorKind = "authentication"
	ErrPermission     ErrorKind = "permission"
	ErrNotFound       ErrorKind = "not_found"
	ErrTooLarge       ErrorKind = "request_too_large"
	ErrRateLimit      ErrorKind = "rate_limit"
	ErrBilling        ErrorKind = "billing"
	ErrServer         ErrorKind = "api_error"
	ErrOverloaded     ErrorKind = "overloaded"
	ErrTimeout        ErrorKind = "timeout"
)

package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/codec/ir"
)

// NameRule is what a format allows in a tool's name.
type NameRule struct {
	Max   int
	Extra string // characters allowed besides ASCII letters, digits, '_' and '-'
}

// The formats' tool name rules: OpenAI's ^[a-zA-Z0-9_-]{1,64}$ (chat and responses),
// Anthropic's ^[a-zA-Z0-9_-]{1,128}$, and Gemini's, which adds dots and colons.
var (
	OpenAINames    = NameRule{Max: 64}
	AnthropicNames = NameRule{Max: 128}
	GeminiNames    = NameRule{Max: 128, Extra: ".:"}
)

func (n NameRule) allows(name string) bool {
	if name == "" || len(name) > n.Max {
		return false
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' ||
			strings.IndexByte(n.Extra, c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

func (n NameRule) String() string {
	return fmt.Sprintf("1 to %d characters of a-z, A-Z, 0-9, '_' and '-'%s", n.Max, extraChars(n.Extra))
}

func extraChars(extra string) string {
	var quoted []string
	for _, c := range extra {
		quoted = append(quoted, fmt.Sprintf("'%c'", c))
	}
	if len(quoted) == 0 {
		return ""
	}
	return " (and " + strings.Join(quoted, ", ") + ")"
}

// Tools collects a request's tool names as its decoder meets them: each must follow the
// format's rule and be unique, and a tool_choice may only name one of them.
type Tools struct {
	rule  NameRule
	names []string
	at    map[string]string // name → the param that first declared it
}

// NewTools starts a request's tool set under a format's name rule.
func NewTools(rule NameRule) *Tools { return &Tools{rule: rule, at: map[string]string{}} }

// Add declares a tool (param names its name member); "" for a tool whose name another check
// has already refused.
func (t *Tools) Add(param, name string) *ir.Error {
	if !t.rule.allows(name) {
		return Bad(param, "%s %q must be %s", param, name, t.rule)
	}
	return t.AddAny(param, name)
}

// AddAny declares a tool whose name the format does not constrain (a server tool's type-given
// name), so a tool_choice may name it and no other tool may reuse it.
func (t *Tools) AddAny(param, name string) *ir.Error {
	if first, dup := t.at[name]; dup {
		return Bad(param, "%s %q is already the name of %s: tool names must be unique", param, name, first)
	}
	t.at[name] = param
	t.names = append(t.names, name)
	return nil
}

// Chosen checks a tool_choice (or an allowed-tools entry) that names a tool.
func (t *Tools) Chosen(param, name string) *ir.Error {
	if _, ok := t.at[name]; ok {
		return nil
	}
	if len(t.names) == 0 {
		return Bad(param, "%s names the tool %q, but the request offers no tools", param, name)
	}
	return Bad(param, "%s names the tool %q, which is not one of the tools offered (%s)", param, name, listed(t.names))
}

// Offered reports whether the request declared any tool.
func (t *Tools) Offered() bool { return len(t.names) > 0 }

// maxListed bounds how many names an error message lists.
const maxListed = 10

func listed(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return strings.Join(slices.Clip(names[:maxListed]), ", ") + fmt.Sprintf(", … %d more", len(names)-maxListed)
}

// Package codec holds what every wire format shares: normalized usage and the names of the
// formats. Each format's translations live in a subpackage (codec/chat, …).
package codec

import (
	"encoding/json"

	"github.com/modelgate/modelgate/codec/money"
)

// Wire formats, as clients and routes speak them.
const (
	FormatChat       = "chat"
	FormatMessages   = "messages"
	FormatGemini     = "gemini"
	FormatResponses  = "responses"
	FormatEmbeddings = "embeddings"
	// FormatConverse is AWS Bedrock's Converse API, a format routes speak (never clients).
	FormatConverse = "converse"
)

// Usage is token usage normalized once at the upstream boundary into explicit, disjoint
// fields, so billing never mixes "input includes cached" with "input excludes cached".
type Usage struct {
	Input      int64 // uncached input tokens
	CacheRead  int64
	CacheWrite int64
	Output     int64 // visible output, reasoning excluded
	Reasoning  int64
}

// InclusiveUsage is the usage of OpenAI's counts (the chat and responses formats'), where the
// input includes the cache read and written and the output includes the reasoning (unless
// the total says the provider counted it beside: VisibleOutput): each part apart.
func InclusiveUsage(input, cacheRead, cacheWrite, output, reasoning, total int64) Usage {
	return Usage{
		Input:      max(input-cacheRead-cacheWrite, 0),
		CacheRead:  cacheRead,
		CacheWrite: cacheWrite,
		Output:     VisibleOutput(input, output, reasoning, total),
		Reasoning:  reasoning,
	}
}

// VisibleOutput is the output without its reasoning, from a provider's counts (input as the
// provider counts it, cache included; output; the reasoning it reports; its total, 0 if none).
func VisibleOutput(input, output, reasoning, total int64) int64 {
	if reasoning <= 0 || ReasoningBeside(input, output, reasoning, total) {
		return output
	}
	return max(output-reasoning, 0)
}

// ReasoningBeside reports counts whose output leaves the reasoning out. Most providers count
// reasoning inside the output (OpenAI: total = input + output); some count it beside it (xAI:
// total = input + output + reasoning). The total tells which; without one, an output smaller
// than its reasoning cannot contain it.
func ReasoningBeside(input, output, reasoning, total int64) bool {
	switch {
	case reasoning <= 0:
		return false
	case total > 0:
		return total == input+output+reasoning
	}
	return output < reasoning
}

// Known reports whether any count was captured.
func (u Usage) Known() bool { return u != Usage{} }

// Counted is u with every negative count read as 0: a provider that reports a negative
// count (a bug, or a subtraction gone wrong on its side) must not make a call cost less
// than nothing, nor fail its settle.
func (u Usage) Counted() Usage {
	return Usage{Input: max(u.Input, 0), CacheRead: max(u.CacheRead, 0), CacheWrite: max(u.CacheWrite, 0),
		Output: max(u.Output, 0), Reasoning: max(u.Reasoning, 0)}
}

// Prices is what one token of each kind costs.
type Prices struct {
	Input, CacheRead, CacheWrite, Output money.Amount
}

// Cost is exact; reasoning tokens are billed at the output rate.
func (u Usage) Cost(p Prices) money.Amount {
	return p.Input.Times(u.Input) + p.CacheRead.Times(u.CacheRead) +
		p.CacheWrite.Times(u.CacheWrite) + p.Output.Times(u.Output+u.Reasoning)
}

// UsageFrom decodes a format's usage object (raw, found by a scan; absent or null: none) and
// normalizes it: how a same-format relay bills without decoding the answer around it.
func UsageFrom[W any](raw []byte, normalize func(*W) Usage) (Usage, bool) {
	var w *W
	if len(raw) == 0 || json.Unmarshal(raw, &w) != nil || w == nil {
		return Usage{}, false
	}
	return normalize(w), true
}

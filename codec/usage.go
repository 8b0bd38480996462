// Package codec holds what every wire format shares: normalized usage and the names of the
// formats. Each format's translations live in a subpackage (codec/chat, …).
package codec

import (
	"github.com/modelgate/modelgate/codec/money"
)

// Wire formats, as clients and routes speak them.
const (
	FormatChat       = "chat"
	FormatMessages   = "messages"
	FormatGemini     = "gemini"
	FormatResponses  = "responses"
	FormatEmbeddings = "embeddings"
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

// Known reports whether any count was captured.
func (u Usage) Known() bool { return u != Usage{} }

// Prices is what one token of each kind costs.
type Prices struct {
	Input, CacheRead, CacheWrite, Output money.Amount
}

// Cost is exact; reasoning tokens are billed at the output rate.
func (u Usage) Cost(p Prices) money.Amount {
	return p.Input.Times(u.Input) + p.CacheRead.Times(u.CacheRead) +
		p.CacheWrite.Times(u.CacheWrite) + p.Output.Times(u.Output+u.Reasoning)
}

// Package converse translates AWS Bedrock's Converse API (Converse and ConverseStream), through
// codec/ir, as an upstream format: requests encoded, whole answers, streams and errors decoded.
// No client speaks it, so it has no client side.
//
// The model id is in the URL path, not the body. A ConverseStream answer is AWS event-stream
// binary frames; transport/upstream turns each into one SSE event named by the frame's
// :event-type (messageStart, contentBlockStart, contentBlockDelta, contentBlockStop,
// messageStop, metadata) or :exception-type, its data the frame's JSON payload, so this
// package reads plain SSE events and never the binary framing.
//
// The Converse API is the same for every Bedrock model, but some of what a request says is
// only carried for some model families, read from the model id: Anthropic's (an id holding
// "anthropic.", inference profiles and ARNs included) take thinking, top_k and the matched
// stop sequence through additionalModelRequestFields, and Anthropic's and Amazon Nova's take
// cache points and a tool result's error status. What a family cannot take is reported lost.
package converse

import (
	"net/url"
	"strings"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

// Format is the Converse format as routes speak it.
var Format format

type format struct{}

var _ ir.UpstreamFormat = format{}

// SignatureFormat is the value of ir.Reasoning.SignatureFormat (and ir.Event.Format) for the
// reasoning signatures and redacted reasoning this format reads. Only Claude signs its
// reasoning in Converse, and Claude's signatures are valid wherever Claude is served
// (Anthropic's API, Bedrock, Vertex AI): they are the messages format's, so a messages or
// chat client hands them back and they reach a Claude model on either format.
const SignatureFormat = codec.FormatMessages

// Path is appended to the route's base URL: the model id is one path segment, escaped (an
// ARN's slashes become %2F; the colon of a versioned id stays as it is).
func (format) Path(upstreamModel string, stream bool) string {
	p := "/model/" + url.PathEscape(upstreamModel)
	if stream {
		return p + "/converse-stream"
	}
	return p + "/converse"
}

// family is what the encoder needs to know of the route's model: which of the members only
// some models take it may send.
type family struct {
	anthropic bool // Claude: thinking, top_k and stop_sequence through the additional fields
	caching   bool // cache points and toolResult.status (Claude and Amazon Nova)
}

func familyOf(model string) family {
	anthropic := strings.Contains(model, "anthropic.")
	return family{anthropic: anthropic, caching: anthropic || strings.Contains(model, "amazon.nova")}
}

// marshal is json.Marshal without HTML escaping: text and tool input travel as written.
func marshal(v any) []byte {
	b, err := codec.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}

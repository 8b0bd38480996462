package api

import (
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/converse"
	"github.com/modelgate/modelgate/codec/gemini"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/messages"
	"github.com/modelgate/modelgate/codec/responses"
)

// clientSpec is a format clients speak, on its endpoint.
type clientSpec struct {
	name   string
	format ir.ClientFormat
	target *pathTarget // the model and stream mode, for a format that has them in its URL
}

var (
	chatClient      = &clientSpec{name: codec.FormatChat, format: chat.Format}
	messagesClient  = &clientSpec{name: codec.FormatMessages, format: messages.Format}
	responsesClient = &clientSpec{name: codec.FormatResponses, format: responses.Format}
)

// requestAwareEncoder renders an answer that echoes its request (the Responses object does).
type requestAwareEncoder interface {
	EncodeResponseFor(r *ir.Response, req *ir.Request, model string) []byte
}

// encodeAnswer renders a whole answer in the client's format.
func encodeAnswer(f ir.ClientFormat, resp *ir.Response, req *ir.Request, model string) []byte {
	if e, ok := f.(requestAwareEncoder); ok && req != nil {
		return e.EncodeResponseFor(resp, req, model)
	}
	return f.EncodeResponse(resp, model)
}

// upstreamFormats are the formats routes may speak, by catalog name.
var upstreamFormats = map[string]ir.UpstreamFormat{
	codec.FormatChat:      chat.Format,
	codec.FormatMessages:  messages.Format,
	codec.FormatGemini:    gemini.Format,
	codec.FormatResponses: responses.Format,
	codec.FormatConverse:  converse.Format,
}

// pathTarget is what a client format reads from the URL instead of the body.
type pathTarget struct {
	model  string
	stream bool
}

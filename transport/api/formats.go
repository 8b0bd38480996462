package api

import (
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/gemini"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/messages"
)

// clientSpec is a format clients speak, on its endpoint.
type clientSpec struct {
	name   string
	format ir.ClientFormat
}

var (
	chatClient     = &clientSpec{name: codec.FormatChat, format: chat.Format}
	messagesClient = &clientSpec{name: codec.FormatMessages, format: messages.Format}
)

// upstreamFormats are the formats routes may speak, by catalog name.
var upstreamFormats = map[string]ir.UpstreamFormat{
	codec.FormatChat:     chat.Format,
	codec.FormatMessages: messages.Format,
	codec.FormatGemini:   gemini.Format,
}

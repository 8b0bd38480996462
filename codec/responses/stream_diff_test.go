package responses

import (
	"encoding/json"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// echoingRequest sets every request parameter a response object echoes, so the echo is not
// the defaults' (custom tools named as the random answers name calls, "fn" + a text).
func echoingRequest() *ir.Request {
	no, temp, topP := false, 0.25, 1e-7
	return &ir.Request{
		Tools: []ir.Tool{{Name: "fn", Custom: true, Description: "free <form>"},
			{Name: "fnHello", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)}},
		ToolChoice:         ir.ToolChoice{Mode: ir.ToolNamed, Name: "fnHello"},
		Parallel:           &no,
		MaxTokens:          512,
		Temperature:        &temp,
		TopP:               &topP,
		Thinking:           ir.Thinking{Effort: "high", Summary: "auto"},
		ResponseFormat:     json.RawMessage(`{"type":"json_object"}`),
		PreviousResponseID: "resp_prev&",
		Extra: map[string]json.RawMessage{"metadata": json.RawMessage(`{ "k" : "<v>" }`),
			"text": json.RawMessage(`{"verbosity":"low"}`)},
	}
}

// FuzzStreamEncoderMatchesReference: the hand-written events decode to the same values as the
// encoding/json encoder's, for random answers (minted ids and clock times apart), to a request
// with the API's defaults and to one that sets every parameter the response echoes.
func FuzzStreamEncoderMatchesReference(f *testing.F) {
	irtest.SeedAnswers(f)
	f.Fuzz(func(t *testing.T, seed int64, extra string) {
		for _, req := range []*ir.Request{{}, echoingRequest()} {
			irtest.SameAsReference(t, irtest.RandomEvents(seed, extra),
				func(o ir.Frames) ir.StreamEncoder { return Format.NewStreamEncoder(o, req, "m<&>") },
				func(o ir.Frames) ir.StreamEncoder { return newRefStreamEncoder(o, req, "m<&>") },
				func(v any) any { return irtest.Blank(v, "id", "item_id", "created_at", "completed_at") })
		}
	})
}

// TestEchoesDefaults: a request that sets none of the echoed parameters has the echo written
// once for every stream (defaultEcho); one that sets them is marshaled per stream.
func TestEchoesDefaults(t *testing.T) {
	for _, c := range []struct {
		name string
		req  *ir.Request
		want bool
	}{
		{"no request", nil, true},
		{"empty request", &ir.Request{}, true},
		{"stream with usage", &ir.Request{Model: "m", Stream: true, IncludeUsage: true}, true},
		{"every parameter", echoingRequest(), false},
		{"temperature", &ir.Request{Temperature: new(0.5)}, false},
		{"metadata", &ir.Request{Extra: map[string]json.RawMessage{"metadata": json.RawMessage(`{"a":1}`)}}, false},
	} {
		if got := newWireResponse("resp_1", "m", 1, c.req).echoesDefaults(); got != c.want {
			t.Errorf("%s: echoesDefaults %v, want %v", c.name, got, c.want)
		}
	}
}

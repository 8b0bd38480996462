package responses

import (
	"encoding/json"
	"testing"

	"github.com/modelgate/modelgate/codec/check/checktest"
	"github.com/modelgate/modelgate/codec/ir"
)

// TestInputThatCannotRoundTripIsRefused: what the request fuzzer found decoding but re-encoding
// without input is the client's 400 naming the field: a member name that differs from "type"
// only in case, an input of reasoning items or empty messages only, and an empty
// previous_response_id in place of input.
func TestInputThatCannotRoundTripIsRefused(t *testing.T) {
	const nothing = "input holds nothing to answer: send at least one message with content, function call or function call output (reasoning items and empty messages only accompany them)"
	cases := []struct{ name, body, param, message string }{
		{"type spelt in another case", `{"model":"0","input":[{"tYpe":"reasoning"}]}`, "input[0].tYpe",
			`input[0].tYpe is not a member of this object: member names are case-sensitive; did you mean "type"?`},
		{"a content part's member in another case", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","Text":"x"}]}]}`,
			"input[0].content[0].Text", `input[0].content[0].Text is not a member of this object: member names are case-sensitive; did you mean "text"?`},
		{"an empty input", `{"model":"0","input":[]}`, "input", "input must not be empty: send a string or an array of input items"},
		{"reasoning only", `{"model":"0","input":[{"type":"reasoning","summary":[]}]}`, "input", nothing},
		{"reasoning with encrypted content only", `{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"e"}]}`, "input", nothing},
		{"an empty assistant message", `{"model":"m","input":[{"role":"assistant","content":""}]}`, "input", nothing},
		{"empty texts and an empty list", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":""}]},{"role":"system","content":[]}]}`, "input", nothing},
		{"an empty previous_response_id", `{"model":"m","previous_response_id":""}`, "input", "input is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Format.DecodeRequest([]byte(c.body))
			if e := checktest.Invalid(t, err, c.param); e.Message != c.message {
				t.Errorf("message %q\nwant    %q", e.Message, c.message)
			}
		})
	}
}

// TestAcceptedInputRoundTrips: an accepted request re-encodes with the input the API requires:
// system messages alone stay input items rather than become instructions without input (which
// the API refuses), unless a previous response carries the turn.
func TestAcceptedInputRoundTrips(t *testing.T) {
	cases := []struct{ name, body, instructions, input string }{
		{"a system message alone stays an item", `{"model":"m","input":[{"role":"system","content":"be brief"}]}`,
			"", `[{"type":"message","role":"system","content":[{"text":"be brief","type":"input_text"}]}]`},
		{"instructions and a developer message alone", `{"model":"m","instructions":"a","input":[{"role":"developer","content":"b"}]}`,
			"", `[{"type":"message","role":"system","content":[{"text":"a","type":"input_text"}]},{"type":"message","role":"system","content":[{"text":"b","type":"input_text"}]}]`},
		{"instructions before a user turn are hoisted", `{"model":"m","instructions":"a","input":[{"role":"user","content":"hi"}]}`,
			"a", `[{"type":"message","role":"user","content":[{"text":"hi","type":"input_text"}]}]`},
		{"a previous response carries the turn", `{"model":"m","instructions":"a","previous_response_id":"resp_1"}`, "a", ""},
		{"reasoning beside a user turn", `{"model":"m","input":[{"type":"reasoning","summary":[]},{"role":"user","content":"hi"}]}`,
			"", `[{"type":"message","role":"user","content":[{"text":"hi","type":"input_text"}]}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Format.DecodeRequest([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			out, err := Format.EncodeRequest(r, "up", &ir.Loss{})
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Instructions string          `json:"instructions"`
				Input        json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(out, &got); err != nil || got.Instructions != c.instructions || string(got.Input) != c.input {
				t.Fatalf("instructions %q input %s\nwant %q %s", got.Instructions, got.Input, c.instructions, c.input)
			}
			if _, err := Format.DecodeRequest(out); err != nil {
				t.Fatalf("the encoded request does not decode: %v\n%s", err, out)
			}
		})
	}
}

// TestNothingSendableIsA400: a conversation of which a Responses API route can carry
// nothing (an audio clip alone) is the encoder's 400 on input, so another route may take it,
// rather than a request without input.
func TestNothingSendableIsA400(t *testing.T) {
	r := &ir.Request{Model: "m", Messages: []ir.Message{{Role: ir.RoleUser,
		Parts: []ir.Part{{Kind: ir.PartFile, File: &ir.File{MediaType: "audio/wav", Data: "AAAA"}}}}}}
	var loss ir.Loss
	_, err := Format.EncodeRequest(r, "up", &loss)
	e := checktest.Invalid(t, err, "input")
	const want = "nothing in this conversation can be sent to a Responses API route: it holds no message, call or call output this format carries"
	if e.Message != want || loss.Header() != "messages[].content.audio" {
		t.Fatalf("%q, dropped %q", e.Message, loss.Header())
	}
}

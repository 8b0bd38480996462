package gemini

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/sse"
)

func TestDecodeResponse(t *testing.T) {
	cases := []struct {
		file string
		want ir.Response
	}{
		{"text.json", ir.Response{ID: "P2Faaer-LKrF0-kPtIaUuA0", Model: "gemini-2.5-flash",
			Parts: []ir.Part{text("Hello! How can I help?")}, Stop: ir.StopEnd,
			Usage: codec.Usage{Input: 4, Output: 7}}},
		{"thought.json", ir.Response{ID: "th0ught", Model: "gemini-2.5-pro",
			Parts: []ir.Part{
				reasoning("**Planning the answer**\n\nA haiku needs 5-7-5.", "", "gemini"),
				signedText("Autumn moonlight—\na worm digs silently\ninto the chestnut.", "CiIBVKhc7oDkQm9zaWc="),
			}, Stop: ir.StopEnd, Usage: codec.Usage{Input: 10, Output: 18, Reasoning: 212}}},
		{"function_calls.json", ir.Response{ID: "fc1", Model: "gemini-3-flash",
			Parts: []ir.Part{
				reasoning("Let me check both.", "CiQBjz1rX+/wAAECAwQ=", "gemini"),
				text("Checking."),
				signedCall("call_test0", "get_weather", `{"city":"Paris","days":2}`, "CiQBsecondsig==", "gemini"),
				call("fc-upstream-7", "get_time", `{"zone":"Europe/Paris"}`),
				call("call_test1", "ping", `{}`),
			}, Stop: ir.StopToolUse, Usage: codec.Usage{Input: 107, Output: 31, Reasoning: 148}}},
		{"max_tokens.json", ir.Response{ID: "mt", Model: "gemini-2.5-flash",
			Parts: []ir.Part{text("The story begins in a small")}, Stop: ir.StopLength,
			Usage: codec.Usage{Input: 8, Output: 16}}},
		{"safety.json", ir.Response{ID: "sf", Model: "gemini-2.5-flash", Stop: ir.StopContentFilter,
			Usage: codec.Usage{Input: 15}}},
		{"blocked.json", ir.Response{ID: "bl", Model: "gemini-2.5-flash", Stop: ir.StopContentFilter,
			Usage: codec.Usage{Input: 21}}},
		{"streamed_args.json", ir.Response{ID: "wh0leArgs", Model: "gemini-3-flash-preview",
			Parts: []ir.Part{
				text("Reading screen B."),
				signedCall("call_test0", "read_screen", `{"id":"B2","zoom":2}`, "c2lnVGhyZWU=", "gemini"),
				call("call_test1", "read_theme", `{}`),
			}, Stop: ir.StopToolUse, Usage: codec.Usage{Input: 40, Output: 12}}},
		{"usage_cache.json", ir.Response{ID: "uc", Model: "gemini-2.5-pro-002", Created: 1772366405,
			Parts: []ir.Part{text("Done.")}, Stop: ir.StopEnd,
			Usage: codec.Usage{Input: 410, CacheRead: 600, Output: 50, Reasoning: 200}}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			fixedCallIDs(t)
			got, err := Format.DecodeResponse(readFixture(t, filepath.Join("response", c.file)))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, c.want) {
				t.Errorf("got  %s\nwant %s", dump(*got), dump(c.want))
			}
		})
	}
}

func TestDecodeResponseSignatures(t *testing.T) {
	cases := []struct {
		name  string
		parts string
		want  []ir.Part
	}{
		{"signature on a text part stays on it",
			`[{"text":"Hi.","thoughtSignature":"c2ln"}]`, []ir.Part{signedText("Hi.", "c2ln")}},
		{"signature on a text part after unsigned reasoning stays on the text",
			`[{"text":"think","thought":true},{"text":"A","thoughtSignature":"c2ln"}]`,
			[]ir.Part{reasoning("think", "", "gemini"), signedText("A", "c2ln")}},
		{"a signature-only text part is kept, empty",
			`[{"text":"A"},{"text":"","thoughtSignature":"c2ln"}]`,
			[]ir.Part{text("A"), signedText("", "c2ln")}},
		{"signed image output",
			`[{"inlineData":{"mimeType":"image/png","data":"iVBO"},"thoughtSignature":"c2ln"}]`,
			[]ir.Part{{Kind: ir.PartImage, Image: &ir.Image{MediaType: "image/png", Data: "iVBO"}, Signature: "c2ln", SignatureFormat: "gemini"}}},
		{"signature-only thought part after reasoning joins it",
			`[{"text":"think","thought":true},{"text":"","thought":true,"thoughtSignature":"c2ln"},{"text":"A"}]`,
			[]ir.Part{reasoning("think", "c2ln", "gemini"), text("A")}},
		{"signature-only thought part alone is kept",
			`[{"thought":true,"thoughtSignature":"c2ln"},{"text":"A"}]`,
			[]ir.Part{reasoning("", "c2ln", "gemini"), text("A")}},
		{"reasoning and text keep their own signatures",
			`[{"text":"t","thought":true,"thoughtSignature":"b25l"},{"text":"A","thoughtSignature":"dHdv"}]`,
			[]ir.Part{reasoning("t", "b25l", "gemini"), signedText("A", "dHdv")}},
		{"empty text parts vanish", `[{"text":""},{"text":"","thought":true}]`, nil},
		{"image output", `[{"inlineData":{"mimeType":"image/png","data":"iVBO"}}]`,
			[]ir.Part{image(ir.Image{MediaType: "image/png", Data: "iVBO"})}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := `{"candidates":[{"content":{"role":"model","parts":` + c.parts + `},"finishReason":"STOP"}]}`
			got, err := Format.DecodeResponse([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Parts, c.want) {
				t.Errorf("got  %s\nwant %s", dump(got.Parts), dump(c.want))
			}
		})
	}
}

func TestFinishReasons(t *testing.T) {
	cases := map[string]ir.StopReason{
		"STOP": ir.StopEnd, "MAX_TOKENS": ir.StopLength, "SAFETY": ir.StopContentFilter,
		"RECITATION": ir.StopContentFilter, "BLOCKLIST": ir.StopContentFilter,
		"PROHIBITED_CONTENT": ir.StopContentFilter, "SPII": ir.StopContentFilter,
		"IMAGE_SAFETY": ir.StopContentFilter, "IMAGE_PROHIBITED_CONTENT": ir.StopContentFilter,
		"IMAGE_RECITATION": ir.StopContentFilter, "MALFORMED_FUNCTION_CALL": ir.StopEnd,
		"UNEXPECTED_TOOL_CALL": ir.StopEnd, "TOO_MANY_TOOL_CALLS": ir.StopEnd, "LANGUAGE": ir.StopEnd,
		"OTHER": ir.StopEnd, "NO_IMAGE": ir.StopEnd, "IMAGE_OTHER": ir.StopEnd,
		"FINISH_REASON_UNSPECIFIED": ir.StopEnd, "SOMETHING_NEW": ir.StopEnd, "": ir.StopEnd,
	}
	for reason, want := range cases {
		body := `{"candidates":[{"content":{"role":"model","parts":[{"text":"x"}]},"finishReason":"` + reason + `"}]}`
		got, err := Format.DecodeResponse([]byte(body))
		if err != nil || got.Stop != want {
			t.Errorf("%q: got %v, %v; want %v", reason, got, err, want)
		}
	}
}

func TestDecodeResponseErrors(t *testing.T) {
	_, err := Format.DecodeResponse([]byte(`<html>oops</html>`))
	var e *ir.Error
	if !errors.As(err, &e) || e.Kind != ir.ErrServer || e.Status != 502 {
		t.Errorf("invalid JSON: %#v", err)
	}
	_, err = Format.DecodeResponse([]byte(`{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}`))
	if !errors.As(err, &e) || *e != (ir.Error{Status: 429, Kind: ir.ErrRateLimit, Code: "RESOURCE_EXHAUSTED", Message: "Quota exceeded"}) {
		t.Errorf("error body: %#v", err)
	}
}

// decodeStream runs a fixture through the SSE reader and the decoder, as the gateway does.
func decodeStream(t *testing.T, name string) ([]ir.Event, bool) {
	t.Helper()
	f, err := os.Open(filepath.Join(testdata, "stream", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := sse.NewReader(f)
	d := Format.NewStreamDecoder()
	var evs []ir.Event
	for {
		ev, err := r.Next()
		if err == io.EOF { // Gemini's end: the stream is whole if it gave a finishReason
			out, _, finished := d.(ir.EndingDecoder).End()
			return append(evs, out...), finished
		}
		if err != nil {
			t.Fatal(err)
		}
		out, done, err := d.Decode(ev.Name, ev.Data)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, out...)
		if done {
			if _, err := r.Next(); err != io.EOF {
				t.Errorf("events after done: %v", err)
			}
			return evs, true
		}
	}
}

func TestStreamDecode(t *testing.T) {
	cases := []struct {
		file string
		want []ir.Event
	}{
		{"text.sse", []ir.Event{
			{Kind: ir.EvStart, ID: "mZFaaJ2vLqGq1MkP0Ib-kAc", Model: "gemini-2.5-flash", Usage: codec.Usage{Input: 9}},
			{Kind: ir.EvText, Text: "The capital"},
			{Kind: ir.EvText, Text: " of France is"},
			{Kind: ir.EvText, Text: " Paris."},
			{Kind: ir.EvFinish, Stop: ir.StopEnd, Usage: codec.Usage{Input: 9, Output: 7}},
		}},
		{"tool_call_split.sse", []ir.Event{
			{Kind: ir.EvStart, ID: "xyzABC123", Model: "gemini-3-flash"},
			{Kind: ir.EvText, Text: "Checking both cities."},
			{Kind: ir.EvToolStart, Index: 0, ID: "call_test0", Name: "get_current_weather", Signature: "CiQBjz1rX+/wAAECAwQ=", Format: "gemini"},
			{Kind: ir.EvToolArgs, Index: 0, Text: `{"location":"Boston","unit":"celsius"}`},
			{Kind: ir.EvToolStart, Index: 1, ID: "call_test1", Name: "get_current_weather"},
			{Kind: ir.EvToolArgs, Index: 1, Text: `{"location":"Paris"}`},
			{Kind: ir.EvToolStart, Index: 2, ID: "call_test2", Name: "get_time"},
			{Kind: ir.EvToolArgs, Index: 2, Text: `{}`},
			{Kind: ir.EvUsage, Usage: codec.Usage{Input: 107}},
			{Kind: ir.EvFinish, Stop: ir.StopToolUse, Usage: codec.Usage{Input: 107, Output: 31, Reasoning: 148}},
		}},
		// A Gemini 3 stream with streamFunctionCallArguments: each call streamed in pieces
		// is one call with its whole arguments, in the order the model wrote its members.
		{"streamed_args.sse", []ir.Event{
			{Kind: ir.EvStart, ID: "str3amArgs", Model: "gemini-3-flash-preview"},
			{Kind: ir.EvReasoning, Text: "**Planning**\n\nRead the theme, then plan the trip."},
			{Kind: ir.EvToolStart, Index: 0, ID: "call_test0", Name: "read_theme", Signature: "c2lnT25l", Format: "gemini"},
			{Kind: ir.EvToolArgs, Index: 0, Text: `{}`},
			{Kind: ir.EvToolStart, Index: 1, ID: "fc-9", Name: "plan_trip", Signature: "c2lnVHdv", Format: "gemini"},
			{Kind: ir.EvToolArgs, Index: 1, Text: `{"city":"San Francisco \"SF\"","days":3,` +
				`"options":{"refundable":false,"budget":null,"max_price":1250.5},` +
				`"stops":[{"name":"Muir Woods"},{"name":"Sausalito"}],"note key":"<ok> & done\n"}`},
			{Kind: ir.EvToolStart, Index: 2, ID: "call_test1", Name: "read_screen"},
			{Kind: ir.EvToolArgs, Index: 2, Text: `{"id":"A"}`},
			{Kind: ir.EvFinish, Stop: ir.StopToolUse, Usage: codec.Usage{Input: 249, Output: 58, Reasoning: 183}},
		}},
		{"thinking.sse", []ir.Event{
			{Kind: ir.EvStart, ID: "th1nk", Model: "gemini-2.5-pro", Usage: codec.Usage{Input: 12, Reasoning: 48}},
			{Kind: ir.EvReasoning, Text: "**Weighing the options**\n\nThe user wants a number."},
			{Kind: ir.EvReasoning, Text: " I will pick 7."},
			{Kind: ir.EvSignature, Text: "EtQBCtEBAdHtim9sig==", Format: "gemini"},
			{Kind: ir.EvUsage, Usage: codec.Usage{Input: 12, Reasoning: 68}},
			{Kind: ir.EvReasoning, Text: "**Counting again**"},
			{Kind: ir.EvUsage, Usage: codec.Usage{Input: 12, Reasoning: 78}},
			{Kind: ir.EvText, Text: "Seven.", Signature: "Ct8BAdHtim8second", Format: "gemini"},
			{Kind: ir.EvUsage, Usage: codec.Usage{Input: 12, Output: 2, Reasoning: 78}},
			{Kind: ir.EvText, Signature: "Ct8BAdHtim8last", Format: "gemini"},
			{Kind: ir.EvFinish, Stop: ir.StopLength, Usage: codec.Usage{Input: 4, CacheRead: 8, Output: 2, Reasoning: 78}},
		}},
		{"error.sse", []ir.Event{
			{Kind: ir.EvStart, ID: "err1", Model: "gemini-2.5-flash", Usage: codec.Usage{Input: 5}},
			{Kind: ir.EvText, Text: "Once upon"},
			{Kind: ir.EvError, Err: &ir.Error{Status: 503, Kind: ir.ErrOverloaded, Code: "UNAVAILABLE",
				Message: "The model is overloaded. Please try again later."}},
		}},
		{"blocked.sse", []ir.Event{
			{Kind: ir.EvStart, ID: "blk", Model: "gemini-2.5-flash", Usage: codec.Usage{Input: 20}},
			{Kind: ir.EvFinish, Stop: ir.StopContentFilter, Usage: codec.Usage{Input: 20}},
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			fixedCallIDs(t)
			got, done := decodeStream(t, c.file)
			if !done {
				t.Error("the stream never reported done")
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("events:\n%s\nwant:\n%s", dumpEvents(got), dumpEvents(c.want))
			}
		})
	}
}

// A stream cut before finishReason never reports done: the gateway sees a broken stream.
func TestStreamWithoutFinish(t *testing.T) {
	d := Format.NewStreamDecoder()
	_, done, err := d.Decode(nil, []byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]},"index":0}]}`))
	if err != nil || done {
		t.Fatalf("done=%v err=%v", done, err)
	}
	if _, _, err := d.Decode(nil, []byte(`{"candidates":[`)); err == nil {
		t.Error("a truncated chunk decoded without error")
	}
	if evs, _, finished := d.(ir.EndingDecoder).End(); finished || len(evs) != 0 {
		t.Fatalf("a stream without finishReason ended whole: %v", evs)
	}
}

// A finishReason does not end the answer: Gemini sends no end marker, and a code-execution
// stream says STOP on a middle chunk, then gives its result and the final usage. The answer
// ends where the stream does, with the last finishReason and usage.
func TestStreamGoesOnAfterFinishReason(t *testing.T) {
	d := Format.NewStreamDecoder()
	evs, done, err := d.Decode(nil, []byte(`{"candidates":[{"content":{"parts":[{"text":"Hel"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1}}`))
	if err != nil || done || len(evs) != 2 || evs[1].Kind != ir.EvText {
		t.Fatalf("at the finishReason: %s done=%v err=%v", dumpEvents(evs), done, err)
	}
	evs, done, err = d.Decode(nil, []byte(`{"candidates":[{"content":{"parts":[{"text":"lo"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":2}}`))
	if err != nil || done || len(evs) != 1 || evs[0].Text != "lo" {
		t.Fatalf("after the finishReason: %s done=%v err=%v", dumpEvents(evs), done, err)
	}
	evs, _, finished := d.(ir.EndingDecoder).End()
	want := []ir.Event{{Kind: ir.EvFinish, Stop: ir.StopEnd, Usage: codec.Usage{Input: 9, Output: 2}}}
	if !finished || !reflect.DeepEqual(evs, want) {
		t.Fatalf("end: %s finished=%v", dumpEvents(evs), finished)
	}
}

func TestMintedCallIDs(t *testing.T) {
	re := regexp.MustCompile(`^call_[0-9A-Za-z]{24}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := newCallID()
		if !re.MatchString(id) || seen[id] {
			t.Fatalf("bad or repeated id %q", id)
		}
		seen[id] = true
	}
}

func TestDecodeError(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		want   ir.Error
	}{
		{"bad request", 400, `{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"foo\"","status":"INVALID_ARGUMENT"}}`,
			ir.Error{Status: 400, Kind: ir.ErrInvalidRequest, Code: "INVALID_ARGUMENT", Message: `Invalid JSON payload received. Unknown name "foo"`}},
		{"bad key", 400, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT",
			"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}`,
			ir.Error{Status: 400, Kind: ir.ErrAuthentication, Code: "INVALID_ARGUMENT", Message: "API key not valid. Please pass a valid API key."}},
		{"unauthenticated", 401, `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`,
			ir.Error{Status: 401, Kind: ir.ErrAuthentication, Code: "UNAUTHENTICATED", Message: "Request had invalid authentication credentials."}},
		{"permission", 403, `{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}`,
			ir.Error{Status: 403, Kind: ir.ErrPermission, Code: "PERMISSION_DENIED", Message: "denied"}},
		{"not found", 404, `{"error":{"code":404,"message":"models/gemini-9 is not found","status":"NOT_FOUND"}}`,
			ir.Error{Status: 404, Kind: ir.ErrNotFound, Code: "NOT_FOUND", Message: "models/gemini-9 is not found"}},
		{"rate limit", 429, `{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"20s"}]}}`,
			ir.Error{Status: 429, Kind: ir.ErrRateLimit, Code: "RESOURCE_EXHAUSTED", Message: "Resource has been exhausted"}},
		{"billing", 400, `{"error":{"code":400,"message":"User location is not supported for the API use.","status":"FAILED_PRECONDITION"}}`,
			ir.Error{Status: 400, Kind: ir.ErrBilling, Code: "FAILED_PRECONDITION", Message: "User location is not supported for the API use."}},
		{"internal", 500, `{"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}`,
			ir.Error{Status: 500, Kind: ir.ErrServer, Code: "INTERNAL", Message: "An internal error has occurred."}},
		{"overloaded", 503, `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`,
			ir.Error{Status: 503, Kind: ir.ErrOverloaded, Code: "UNAVAILABLE", Message: "The model is overloaded."}},
		{"deadline", 504, `{"error":{"code":504,"message":"Deadline exceeded","status":"DEADLINE_EXCEEDED"}}`,
			ir.Error{Status: 504, Kind: ir.ErrTimeout, Code: "DEADLINE_EXCEEDED", Message: "Deadline exceeded"}},
		{"array envelope", 429, `[{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}]`,
			ir.Error{Status: 429, Kind: ir.ErrRateLimit, Code: "RESOURCE_EXHAUSTED", Message: "slow down"}},
		{"unknown status name", 409, `{"error":{"code":409,"message":"aborted","status":"ABORTED"}}`,
			ir.Error{Status: 409, Kind: ir.ErrInvalidRequest, Code: "ABORTED", Message: "aborted"}},
		{"no message", 500, `{"error":{"code":500,"status":"INTERNAL"}}`,
			ir.Error{Status: 500, Kind: ir.ErrServer, Code: "INTERNAL", Message: "Internal Server Error"}},
		{"html", 502, "<html><body>Bad Gateway</body></html>\n",
			ir.Error{Status: 502, Kind: ir.ErrServer, Message: "<html><body>Bad Gateway</body></html>"}},
		{"empty 503", 503, "", ir.Error{Status: 503, Kind: ir.ErrOverloaded, Message: "Service Unavailable"}},
		{"plain 413", 413, "Request Entity Too Large", ir.Error{Status: 413, Kind: ir.ErrTooLarge, Message: "Request Entity Too Large"}},
		{"long body", 500, strings.Repeat("é", 600), ir.Error{Status: 500, Kind: ir.ErrServer, Message: strings.Repeat("é", 512) + "…"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Format.DecodeError(c.status, []byte(c.body))
			if *got != c.want {
				t.Errorf("got  %#v\nwant %#v", *got, c.want)
			}
		})
	}
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

func dumpEvents(evs []ir.Event) string {
	var b strings.Builder
	for _, e := range evs {
		j, _ := json.Marshal(e)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestStreamDoneMarker(t *testing.T) {
	fixedCallIDs(t)
	d := Format.NewStreamDecoder()
	evs, done, err := d.Decode(nil, []byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":1}}}]}}],"responseId":"r","modelVersion":"m"}`))
	if err != nil || done || len(evs) != 3 {
		t.Fatalf("%v %v %v", evs, done, err)
	}
	evs, done, err = d.Decode(nil, []byte("[DONE]"))
	want := []ir.Event{{Kind: ir.EvFinish, Stop: ir.StopToolUse}}
	if err != nil || !done || !reflect.DeepEqual(evs, want) {
		t.Errorf("[DONE]: %v %v %v", evs, done, err)
	}
	evs, done, _ = Format.NewStreamDecoder().Decode(nil, []byte("[DONE]"))
	want = []ir.Event{{Kind: ir.EvStart}, {Kind: ir.EvFinish, Stop: ir.StopEnd}}
	if !done || !reflect.DeepEqual(evs, want) {
		t.Errorf("[DONE] first: %v %v", evs, done)
	}
}

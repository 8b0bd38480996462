package gemini

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/sse"
)

// checkGolden compares got with testdata/gemini/<name> (rewritten under -update).
func checkGolden(t *testing.T, name string, got []byte, json bool) {
	t.Helper()
	path := filepath.Join(testdata, name)
	if *update {
		out := got
		if json {
			out = []byte(canon(t, got) + "\n")
		}
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := readFixture(t, name)
	if json {
		if g, w := canon(t, got), canon(t, want); g != w {
			t.Errorf("%s:\n%s\nwant:\n%s", name, g, w)
		}
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s:\n%s\nwant:\n%s", name, got, want)
	}
}

// richAnswer has every kind of part an answer can hold.
var richAnswer = ir.Response{ID: "resp-1", Model: "upstream-model", Stop: ir.StopToolUse,
	Parts: []ir.Part{
		reasoning("Gemini thinking.", "CiQBdGhvdWdodA==", "gemini"),
		reasoning("Claude thinking.", "EqQBmessages", "messages"),
		{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Redacted: "opaque", SignatureFormat: "messages"}},
		signedText("Checking.", "CiQBdGV4dA=="),
		text(""),
		signedCall("toolu_01", "get_weather", `{"city":"Paris"}`, "CiQBY2FsbA==", "gemini"),
		signedCall("call_2", "get_time", ``, "EqQBforeign", "messages"),
		image(ir.Image{MediaType: "image/png", Data: "iVBORw0KGgo="}),
		file(ir.File{URL: "https://example.com/report.pdf"}),
	},
	Usage: codec.Usage{Input: 10, CacheRead: 5, CacheWrite: 1, Output: 20, Reasoning: 30}}

func TestEncodeResponse(t *testing.T) {
	cases := []struct {
		name     string
		resp     ir.Response
		thoughts bool
	}{
		{"rich.json", richAnswer, true},
		{"rich_no_thoughts.json", richAnswer, false},
		{"length_minted_id.json", ir.Response{Parts: []ir.Part{text("Once upon")}, Stop: ir.StopLength,
			Usage: codec.Usage{Input: 3, Output: 2}}, false},
		{"content_filter.json", ir.Response{ID: "cf", Stop: ir.StopContentFilter, Usage: codec.Usage{Input: 7}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fixedCallIDs(t)
			req := &ir.Request{Thinking: ir.Thinking{IncludeText: c.thoughts}}
			got := Format.EncodeResponseFor(&c.resp, req, "client-model")
			checkGolden(t, filepath.Join("answer", c.name), got, true)
		})
	}
}

// EncodeResponse without the request shows thoughts (it cannot know the client did not ask).
func TestEncodeResponseDefaultShowsThoughts(t *testing.T) {
	a := Format.EncodeResponse(&richAnswer, "client-model")
	b := Format.EncodeResponseFor(&richAnswer, &ir.Request{Thinking: ir.Thinking{IncludeText: true}}, "client-model")
	if !bytes.Equal(a, b) {
		t.Errorf("EncodeResponse %s\n!= EncodeResponseFor with thoughts %s", a, b)
	}
}

type frameBuffer struct{ w *sse.Writer }

func (f frameBuffer) Write(name string, data []byte) error { return f.w.Write(name, data) }

func TestStreamEncode(t *testing.T) {
	start := ir.Event{Kind: ir.EvStart, ID: "str-1", Usage: codec.Usage{Input: 5}}
	cases := []struct {
		name     string
		thoughts bool
		events   []ir.Event
	}{
		{"text_thinking.sse", true, []ir.Event{start,
			{Kind: ir.EvReasoning, Text: "Let me"},
			{Kind: ir.EvReasoning, Text: " think."},
			{Kind: ir.EvSignature, Text: "CiQBdGhvdWdodA==", Format: "gemini"},
			{Kind: ir.EvSignature, Text: "EqQBmessages", Format: "messages"},
			{Kind: ir.EvRedacted, Text: "opaque", Format: "messages"},
			{Kind: ir.EvText, Text: "Hel", Signature: "CiQBZmlyc3Q=", Format: "gemini"},
			{Kind: ir.EvText, Text: "lo."},
			{Kind: ir.EvText},
			{Kind: ir.EvUsage, Usage: codec.Usage{Input: 5, Output: 1, Reasoning: 4}},
			{Kind: ir.EvText, Signature: "CiQBbGFzdA==", Format: "gemini"},
			{Kind: ir.EvFinish, Stop: ir.StopEnd, Usage: codec.Usage{Input: 2, CacheRead: 3, Output: 2, Reasoning: 4}},
		}},
		{"no_thoughts.sse", false, []ir.Event{start,
			{Kind: ir.EvReasoning, Text: "hidden"},
			{Kind: ir.EvSignature, Text: "CiQBdGhvdWdodA==", Format: "gemini"},
			{Kind: ir.EvText, Text: "Shown."},
			{Kind: ir.EvFinish, Stop: ir.StopLength},
		}},
		{"tools.sse", false, []ir.Event{start,
			{Kind: ir.EvToolStart, Index: 0, ID: "toolu_a", Name: "get_weather", Signature: "CiQBY2FsbA==", Format: "gemini"},
			{Kind: ir.EvToolArgs, Index: 0, Text: `{"city":`},
			{Kind: ir.EvToolStart, Index: 1, ID: "toolu_b", Name: "get_time", Signature: "EqQBforeign", Format: "messages"},
			{Kind: ir.EvToolArgs, Index: 1, Text: `{}`}, // complete, but waits for call 0
			{Kind: ir.EvToolArgs, Index: 0, Text: `"Paris"}`},
			{Kind: ir.EvToolStart, Index: 2, ID: "toolu_c", Name: "ping"},
			{Kind: ir.EvText, Text: "Calling."}, // text follows: ping has no arguments, {}
			{Kind: ir.EvToolStart, Index: 3, ID: "toolu_d", Name: "cut"},
			{Kind: ir.EvToolArgs, Index: 3, Text: `{"a":`},
			{Kind: ir.EvToolArgs, Index: 4, Text: `{}`}, // a call that never started: left out
			{Kind: ir.EvFinish, Stop: ir.StopToolUse, Usage: codec.Usage{Input: 5, Output: 9}},
		}},
		{"error.sse", false, []ir.Event{start,
			{Kind: ir.EvText, Text: "Once"},
			{Kind: ir.EvError, Err: &ir.Error{Status: 429, Kind: ir.ErrRateLimit, Message: "slow down"}},
			{Kind: ir.EvText, Text: "ignored"},
		}},
		{"close_without_finish.sse", false, []ir.Event{start, {Kind: ir.EvText, Text: "Once"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fixedCallIDs(t)
			var buf bytes.Buffer
			enc := Format.NewStreamEncoder(frameBuffer{sse.NewWriter(&buf, nil)},
				&ir.Request{Thinking: ir.Thinking{IncludeText: c.thoughts}}, "client-model")
			for _, ev := range c.events {
				if err := enc.Encode(ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := enc.Close(); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("client_stream", c.name), buf.Bytes(), false)
		})
	}
}

func TestEncodeError(t *testing.T) {
	cases := []struct {
		err     ir.Error
		details []any
		want    string
	}{
		{ir.Error{Status: 400, Kind: ir.ErrInvalidRequest, Param: "contents[0].role", Message: "bad role"}, nil,
			`{"error":{"code":400,"message":"bad role","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"description":"bad role","field":"contents[0].role"}]}]}}`},
		{ir.Error{Status: 401, Kind: ir.ErrAuthentication, Message: "no key"}, nil,
			`{"error":{"code":401,"message":"no key","status":"UNAUTHENTICATED"}}`},
		{ir.Error{Status: 402, Kind: ir.ErrBilling, Message: "allowance used up"}, nil,
			`{"error":{"code":402,"message":"allowance used up","status":"RESOURCE_EXHAUSTED"}}`},
		{ir.Error{Status: 403, Kind: ir.ErrPermission, Message: "restricted"}, nil,
			`{"error":{"code":403,"message":"restricted","status":"PERMISSION_DENIED"}}`},
		{ir.Error{Status: 404, Kind: ir.ErrNotFound, Param: "model", Message: "no such model"}, nil, // a field only for invalid requests
			`{"error":{"code":404,"message":"no such model","status":"NOT_FOUND"}}`},
		{ir.Error{Status: 413, Kind: ir.ErrTooLarge, Message: "too big"}, nil,
			`{"error":{"code":413,"message":"too big","status":"INVALID_ARGUMENT"}}`},
		{ir.Error{Status: 429, Kind: ir.ErrRateLimit, Message: "slow down"},
			[]any{map[string]string{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "3s"}},
			`{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3s"}]}}`},
		{ir.Error{Status: 499, Kind: ir.ErrInvalidRequest, Message: "gone"}, nil,
			`{"error":{"code":499,"message":"gone","status":"CANCELLED"}}`},
		{ir.Error{Status: 502, Kind: ir.ErrServer, Message: "upstream <failed>"}, nil,
			`{"error":{"code":502,"message":"upstream <failed>","status":"INTERNAL"}}`},
		{ir.Error{Status: 529, Kind: ir.ErrOverloaded, Message: "busy"}, nil,
			`{"error":{"code":529,"message":"busy","status":"UNAVAILABLE"}}`},
		{ir.Error{Status: 504, Kind: ir.ErrTimeout, Message: "late"}, nil,
			`{"error":{"code":504,"message":"late","status":"DEADLINE_EXCEEDED"}}`},
		{ir.Error{Kind: "odd", Message: "?"}, nil,
			`{"error":{"code":500,"message":"?","status":"INTERNAL"}}`},
	}
	for _, c := range cases {
		if got := string(EncodeErrorDetails(&c.err, c.details...)); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.err, got, c.want)
		}
	}
	if got, want := string(Format.EncodeError(&cases[0].err)), cases[0].want; got != want {
		t.Errorf("EncodeError = %s, want %s", got, want)
	}
}

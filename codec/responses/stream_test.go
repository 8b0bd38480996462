package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/sse"
)

type frame struct {
	name string
	data []byte
}

func readFrames(t *testing.T, b []byte) []frame {
	t.Helper()
	r := sse.NewReader(bytes.NewReader(b))
	var out []frame
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("bad SSE: %v", err)
		}
		out = append(out, frame{string(ev.Name), append([]byte(nil), ev.Data...)})
	}
}

// encodeStream runs events through the stream encoder and returns the SSE bytes.
func encodeStream(t *testing.T, req *ir.Request, events []ir.Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := Format.NewStreamEncoder(sse.NewWriter(&buf, nil), req, "my-model")
	for _, ev := range events {
		if err := enc.Encode(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// decodeStream runs SSE bytes through the stream decoder.
func decodeStream(t *testing.T, b []byte) ([]ir.Event, bool) {
	t.Helper()
	dec := Format.NewStreamDecoder()
	var out []ir.Event
	done := false
	for _, f := range readFrames(t, b) {
		evs, d, err := dec.Decode([]byte(f.name), f.data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, evs...)
		done = d
	}
	return out, done
}

var (
	weatherTools = &ir.Request{Stream: true, Tools: []ir.Tool{
		{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
		{Name: "get_time"}}}
	patchTools = &ir.Request{Stream: true, Tools: []ir.Tool{
		{Name: "apply_patch", Custom: true}, {Name: "f"}}}
)

var encodeCases = []struct {
	name   string
	req    *ir.Request
	events []ir.Event
}{{
	name: "text",
	req:  &ir.Request{Stream: true, Temperature: ptr(0.7), MaxTokens: 1000},
	events: []ir.Event{
		{Kind: ir.EvStart, ID: "chatcmpl-1", Model: "up", Usage: codec.Usage{Input: 37}},
		{Kind: ir.EvText, Text: "Hi"},
		{Kind: ir.EvText, Text: ""},
		{Kind: ir.EvText, Text: " there!"},
		{Kind: ir.EvFinish, Stop: ir.StopEnd, Usage: codec.Usage{Input: 37, Output: 11}},
	},
}, {
	name: "reasoning_text",
	req:  &ir.Request{Stream: true, Thinking: ir.Thinking{Effort: "high", Summary: "auto", IncludeText: true}},
	events: []ir.Event{
		{Kind: ir.EvStart, ID: "msg_01", Usage: codec.Usage{Input: 10, CacheRead: 5, CacheWrite: 3}},
		{Kind: ir.EvReasoning, Text: "Let me"},
		{Kind: ir.EvReasoning, Text: " think."},
		{Kind: ir.EvSignature, Text: "EqQBCkYIBxgCKkA", Format: "messages"},
		{Kind: ir.EvText, Text: "Answer."},
		{Kind: ir.EvUsage, Usage: codec.Usage{Input: 10, CacheRead: 5, CacheWrite: 3, Output: 2}},
		{Kind: ir.EvFinish, Stop: ir.StopEnd, Usage: codec.Usage{Input: 10, CacheRead: 5, CacheWrite: 3, Output: 7, Reasoning: 20}},
	},
}, {
	name: "parallel_tools",
	req:  weatherTools,
	events: []ir.Event{
		{Kind: ir.EvStart, ID: "chatcmpl-2"},
		{Kind: ir.EvText, Text: "Checking."},
		{Kind: ir.EvToolStart, Index: 0, ID: "call_A", Name: "get_weather"},
		{Kind: ir.EvToolStart, Index: 1, ID: "call_B", Name: "get_time"},
		{Kind: ir.EvToolArgs, Index: 0, Text: `{"ci`},
		{Kind: ir.EvToolArgs, Index: 1, Text: `{"tz":`},
		{Kind: ir.EvToolArgs, Index: 0, Text: `ty":`},
		{Kind: ir.EvToolArgs, Index: 1, Text: `"CET"}`},
		{Kind: ir.EvToolArgs, Index: 0, Text: ` "Paris"`},
		{Kind: ir.EvToolArgs, Index: 0, Text: `}`},
		{Kind: ir.EvToolStart, Index: 2, ID: "call_C", Name: "get_weather", Signature: "AAEC"},
		{Kind: ir.EvToolArgs, Index: 2, Text: `{"city":"Rome"}`},
		{Kind: ir.EvFinish, Stop: ir.StopEnd, Usage: codec.Usage{Input: 50, Output: 30}},
	},
}, {
	name: "tools_at_finish",
	req:  patchTools,
	events: []ir.Event{
		{Kind: ir.EvStart, ID: "resp_3"},
		{Kind: ir.EvToolStart, Index: 0, ID: "call_P", Name: "apply_patch"},
		{Kind: ir.EvToolStart, Index: 1, ID: "call_Q", Name: "f"},
		{Kind: ir.EvToolArgs, Index: 1, Text: `{"a":`},
		{Kind: ir.EvToolArgs, Index: 0, Text: `{"input":"*** Begin`},
		{Kind: ir.EvToolArgs, Index: 0, Text: ` Patch\n"}`},
		{Kind: ir.EvToolStart, Index: 2, ID: "call_R", Name: "f"},
		{Kind: ir.EvFinish, Stop: ir.StopLength},
	},
}, {
	name: "incomplete",
	req:  &ir.Request{Stream: true},
	events: []ir.Event{
		{Kind: ir.EvStart, ID: "chatcmpl-4"},
		{Kind: ir.EvText, Text: "Once upon"},
		{Kind: ir.EvFinish, Stop: ir.StopLength, Usage: codec.Usage{Input: 20, Output: 16}},
		{Kind: ir.EvText, Text: "after the end"},
	},
}, {
	name: "content_filter",
	req:  nil,
	events: []ir.Event{
		{Kind: ir.EvStart, ID: "gen-5"},
		{Kind: ir.EvFinish, Stop: ir.StopContentFilter},
	},
}, {
	name: "error",
	req:  &ir.Request{Stream: true},
	events: []ir.Event{
		{Kind: ir.EvStart, ID: "chatcmpl-6", Usage: codec.Usage{Input: 12}},
		{Kind: ir.EvText, Text: "Par"},
		{Kind: ir.EvError, Err: &ir.Error{Status: 429, Kind: ir.ErrRateLimit, Message: "Rate limit reached"}},
		{Kind: ir.EvText, Text: "after the error"},
	},
}, {
	name: "close_without_finish",
	req:  &ir.Request{Stream: true},
	events: []ir.Event{
		{Kind: ir.EvStart, ID: "chatcmpl-7"},
		{Kind: ir.EvReasoning, Text: "hmm"},
	},
}, {
	name: "responses_reasoning",
	req:  &ir.Request{Stream: true, Thinking: ir.Thinking{Effort: "medium"}},
	events: []ir.Event{
		{Kind: ir.EvStart, ID: "resp_68af", Model: "gpt-5"},
		{Kind: ir.EvReasoning, Text: "**Plan**", ID: "rs_1"},
		{Kind: ir.EvReasoning, Text: "\n\nmore", ID: "rs_1"},
		{Kind: ir.EvSignature, Text: "gAAA", Format: "responses", ID: "rs_1"},
		{Kind: ir.EvSignature, Text: "gBBB", Format: "responses", ID: "rs_2"},
		{Kind: ir.EvText, Text: "Done."},
		{Kind: ir.EvFinish, Stop: ir.StopEnd, Usage: codec.Usage{Input: 100, Output: 3, Reasoning: 40}},
	},
}}

func TestStreamEncode(t *testing.T) {
	for _, c := range encodeCases {
		t.Run(c.name, func(t *testing.T) {
			fixedIDs(t)
			got := encodeStream(t, c.req, c.events)
			golden(t, "encode_"+c.name+".sse", got)
			checkStream(t, got, true)
		})
	}
}

// checkStream asserts what every Responses stream must satisfy: event names equal to the
// JSON type, sequence numbers 0, 1, 2, …, one item open at a time with correct indexes and
// ids, every event valid by the spec, and one terminal event, last, whose response carries
// every output item (as its done event showed it) and, unless it failed, the usage.
func checkStream(t *testing.T, b []byte, schema bool) terminalResponse {
	t.Helper()
	frames := readFrames(t, b)
	if len(frames) < 3 {
		t.Fatalf("only %d frames", len(frames))
	}
	type header struct {
		Type           string          `json:"type"`
		SequenceNumber *int            `json:"sequence_number"`
		OutputIndex    *int            `json:"output_index"`
		ItemID         string          `json:"item_id"`
		Item           json.RawMessage `json:"item"`
		Response       json.RawMessage `json:"response"`
	}
	var resp terminalResponse
	openID, openIndex := "", -1
	added := 0
	done := map[int]json.RawMessage{}
	for i, f := range frames {
		var h header
		if err := json.Unmarshal(f.data, &h); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if h.Type != f.name {
			t.Errorf("frame %d: event %q carries type %q", i, f.name, h.Type)
		}
		if h.SequenceNumber == nil || *h.SequenceNumber != i {
			t.Errorf("frame %d (%s): sequence_number %v", i, f.name, h.SequenceNumber)
		}
		if schema {
			assertEventSchema(t, f.name, f.data)
		}
		var item struct{ ID string }
		_ = json.Unmarshal(h.Item, &item)
		switch {
		case f.name == "response.output_item.added":
			if openIndex >= 0 {
				t.Errorf("frame %d: item %d added while item %d is open", i, *h.OutputIndex, openIndex)
			}
			if *h.OutputIndex != added {
				t.Errorf("frame %d: output_index %d, want %d", i, *h.OutputIndex, added)
			}
			added++
			openID, openIndex = item.ID, *h.OutputIndex
		case f.name == "response.output_item.done":
			if *h.OutputIndex != openIndex || item.ID != openID {
				t.Errorf("frame %d: done for %d/%s while %d/%s is open", i, *h.OutputIndex, item.ID, openIndex, openID)
			}
			done[openIndex] = h.Item
			openID, openIndex = "", -1
		case h.ItemID != "":
			if *h.OutputIndex != openIndex || h.ItemID != openID {
				t.Errorf("frame %d (%s): for %d/%s while %d/%s is open", i, f.name, *h.OutputIndex, h.ItemID, openIndex, openID)
			}
		}
		terminal := f.name == "response.completed" || f.name == "response.incomplete" || f.name == "response.failed"
		if terminal != (i == len(frames)-1) {
			t.Errorf("frame %d: %s terminal=%v, but it is frame %d of %d", i, f.name, terminal, i+1, len(frames))
		}
		if !terminal {
			continue
		}
		if schema {
			assertSchema(t, "Response", h.Response)
		}
		_ = json.Unmarshal(h.Response, &resp)
		if "response."+resp.Status != f.name {
			t.Errorf("%s carries status %q", f.name, resp.Status)
		}
		if len(resp.Output) != added {
			t.Errorf("terminal output has %d items, %d were added", len(resp.Output), added)
		}
		for j, it := range resp.Output {
			if d, ok := done[j]; ok && canonical(t, d) != canonical(t, it) {
				t.Errorf("terminal output[%d] = %s, its done event said %s", j, it, d)
			}
		}
		if resp.Status != "failed" && resp.Usage == nil {
			t.Errorf("%s without usage", f.name)
		}
	}
	return resp
}

type terminalResponse struct {
	Status string
	Output []json.RawMessage
	Usage  *json.RawMessage
}

// Every event type the encoder can write is covered by the goldens (and so validated).
func TestStreamEncodeCoversEveryEventType(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range encodeCases {
		fixedIDs(t)
		for _, f := range readFrames(t, encodeStream(t, c.req, c.events)) {
			seen[f.name] = true
		}
	}
	for _, typ := range []string{"response.created", "response.in_progress", "response.output_item.added",
		"response.output_item.done", "response.content_part.added", "response.content_part.done",
		"response.output_text.delta", "response.output_text.done", "response.reasoning_summary_part.added",
		"response.reasoning_summary_part.done", "response.reasoning_summary_text.delta",
		"response.reasoning_summary_text.done", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.custom_tool_call_input.delta",
		"response.custom_tool_call_input.done", "response.completed", "response.incomplete", "response.failed"} {
		if !seen[typ] {
			t.Errorf("no golden stream has %s", typ)
		}
	}
}

// The encoder's stream read back by the decoder tells the same story.
func TestStreamRoundTrip(t *testing.T) {
	for _, c := range encodeCases {
		t.Run(c.name, func(t *testing.T) {
			fixedIDs(t)
			evs, done := decodeStream(t, encodeStream(t, c.req, c.events))
			if !done {
				t.Error("the decoder did not see the end")
			}
			want := summarize(c.events)
			if got := summarize(evs); !reflect.DeepEqual(got, want) {
				t.Errorf("decoded:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

// summarize renders events as the facts a client sees: texts and reasoning joined, each call
// with its whole arguments, the responses-format signatures, the end. What the encoder
// cannot or need not carry (foreign signatures, ids of the source, events after the end) is
// left out; a stream without EvFinish or EvError ends with the encoder's interruption error.
func summarize(evs []ir.Event) []string {
	var out []string
	calls := map[int]string{}
	args := map[int]string{}
	var order []int
	appendOrJoin := func(prefix, s string) {
		if n := len(out); n > 0 && strings.HasPrefix(out[n-1], prefix) {
			out[n-1] += s
			return
		}
		out = append(out, prefix+s)
	}
	flushCalls := func() {
		sort.Ints(order)
		for _, i := range order {
			if args[i] == "" {
				args[i] = "{}" // no arguments is an empty object
			}
			out = append(out, calls[i]+args[i])
		}
		order = nil
	}
	ended := false
	for _, ev := range evs {
		if ended {
			break
		}
		switch ev.Kind {
		case ir.EvStart:
			out = append(out, "start")
		case ir.EvText:
			appendOrJoin("text: ", ev.Text)
		case ir.EvReasoning:
			appendOrJoin("reasoning: ", ev.Text)
		case ir.EvSignature:
			if ev.Format == SignatureFormat {
				out = append(out, "encrypted "+ev.ID+": "+ev.Text)
			}
		case ir.EvToolStart:
			id := ir.JoinCallID(ev.ID, ev.Signature)
			calls[ev.Index] = fmt.Sprintf("call %d %s %s ", ev.Index, id, ev.Name)
			order = append(order, ev.Index)
		case ir.EvToolArgs:
			args[ev.Index] += ev.Text
		case ir.EvFinish:
			flushCalls()
			stop := ev.Stop
			if len(calls) > 0 {
				stop = ir.StopToolUse
			}
			out = append(out, "finish "+string(stop))
			ended = true
		case ir.EvError:
			flushCalls()
			out = append(out, fmt.Sprintf("error %s: %s", ev.Err.Kind, ev.Err.Message))
			ended = true
		}
	}
	if !ended {
		flushCalls()
		out = append(out, "error api_error: the upstream stream was interrupted before the response completed")
	}
	return out
}

func TestStreamEncoderWriteError(t *testing.T) {
	enc := Format.NewStreamEncoder(failingFrames{}, nil, "m")
	err := enc.Encode(ir.Event{Kind: ir.EvStart})
	if !errors.Is(err, errClosed) {
		t.Errorf("Encode = %v", err)
	}
	if err := enc.Close(); !errors.Is(err, errClosed) {
		t.Errorf("Close = %v", err)
	}
}

var errClosed = errors.New("client went away")

type failingFrames struct{}

func (failingFrames) Write(string, []byte) error { return errClosed }

// Random interleavings of text, reasoning and parallel calls keep every stream invariant, and
// the terminal response holds everything that was sent, in full.
func TestStreamEncodeRandom(t *testing.T) {
	argsOf := []string{`{"city":"Paris","days":[1,2,3]}`, `{}`, `{"q":"a}b{c"}`, `{"input":"*** Begin Patch\n*** End Patch"}`}
	for seed := int64(0); seed < 200; seed++ {
		rnd := rand.New(rand.NewPCG(uint64(seed), 7))
		evs := []ir.Event{{Kind: ir.EvStart, ID: "chatcmpl-r"}}
		var texts, thoughts strings.Builder
		args := map[string]string{}
		type open struct {
			index int
			rest  string
		}
		var calls []*open
		for n := 0; n < 20; n++ {
			switch k := rnd.IntN(4); {
			case k == 0:
				s := fmt.Sprintf("t%d ", n)
				texts.WriteString(s)
				evs = append(evs, ir.Event{Kind: ir.EvText, Text: s})
			case k == 1:
				s := fmt.Sprintf("r%d ", n)
				thoughts.WriteString(s)
				evs = append(evs, ir.Event{Kind: ir.EvReasoning, Text: s})
			case k == 2 && len(calls) < 4:
				i := len(calls)
				a := argsOf[rnd.IntN(len(argsOf))]
				name := "f"
				if i%2 == 1 {
					name = "apply_patch"
					a = argsOf[3]
				}
				id := fmt.Sprintf("call_%d", i)
				args[id] = a
				calls = append(calls, &open{i, a})
				evs = append(evs, ir.Event{Kind: ir.EvToolStart, Index: i, ID: id, Name: name})
			default:
				if len(calls) == 0 {
					continue
				}
				c := calls[rnd.IntN(len(calls))]
				if c.rest == "" {
					continue
				}
				cut := 1 + rnd.IntN(len(c.rest))
				evs = append(evs, ir.Event{Kind: ir.EvToolArgs, Index: c.index, Text: c.rest[:cut]})
				c.rest = c.rest[cut:]
			}
		}
		for _, c := range calls { // the rest of every call's arguments
			if c.rest != "" {
				evs = append(evs, ir.Event{Kind: ir.EvToolArgs, Index: c.index, Text: c.rest})
			}
		}
		evs = append(evs, ir.Event{Kind: ir.EvFinish, Stop: ir.StopEnd})

		fixedIDs(t)
		resp := checkStream(t, encodeStream(t, patchTools, evs), false)
		var gotText, gotThought strings.Builder
		gotArgs := map[string]string{}
		for _, raw := range resp.Output {
			var it struct {
				Type, Arguments, Input string
				CallID                 string `json:"call_id"`
				Content, Summary       []struct{ Text string }
			}
			_ = json.Unmarshal(raw, &it)
			switch it.Type {
			case "message":
				gotText.WriteString(it.Content[0].Text)
			case "reasoning":
				gotThought.WriteString(it.Summary[0].Text)
			case "function_call":
				gotArgs[it.CallID] = it.Arguments
			case "custom_tool_call":
				gotArgs[it.CallID] = customArgs(it.Input)
			}
		}
		if gotText.String() != texts.String() || gotThought.String() != thoughts.String() || !reflect.DeepEqual(gotArgs, args) {
			t.Fatalf("seed %d: output text %q, reasoning %q, calls %q\nwant %q, %q, %q",
				seed, gotText.String(), gotThought.String(), gotArgs, texts.String(), thoughts.String(), args)
		}
		if t.Failed() {
			t.Fatalf("seed %d: %v", seed, evs)
		}
	}
}

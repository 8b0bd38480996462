package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

func TestStreamDecode(t *testing.T) {
	cases := []struct {
		file string
		want []ir.Event
	}{{
		file: "upstream_text.sse",
		want: []ir.Event{
			{Kind: ir.EvStart, ID: "resp_0a1b", Model: "gpt-4.1-2025-04-14"},
			{Kind: ir.EvText, Text: "Hi"},
			{Kind: ir.EvText, Text: " there!"},
			{Kind: ir.EvFinish, Stop: ir.StopEnd, Usage: codec.Usage{Input: 37, Output: 11}},
		},
	}, {
		file: "upstream_reasoning_tools.sse",
		want: []ir.Event{
			{Kind: ir.EvStart, ID: "resp_68af", Model: "gpt-5-2025-08-07"},
			{Kind: ir.EvReasoning, Text: "**Planning**", ID: "rs_68af01"},
			{Kind: ir.EvReasoning, Text: " two calls", ID: "rs_68af01"},
			{Kind: ir.EvReasoning, Text: "\n\nParis first.", ID: "rs_68af01"},
			{Kind: ir.EvSignature, Text: "gAAAAB_full_state==", Format: "responses", ID: "rs_68af01"},
			{Kind: ir.EvToolStart, Index: 0, ID: "call_A", Name: "get_weather"},
			{Kind: ir.EvToolArgs, Index: 0, Text: `{"city":`},
			{Kind: ir.EvToolArgs, Index: 0, Text: `"Paris"}`},
			{Kind: ir.EvToolStart, Index: 1, ID: "call_B", Name: "get_weather"},
			{Kind: ir.EvToolArgs, Index: 1, Text: `{"city":"Rome"}`},
			{Kind: ir.EvFinish, Stop: ir.StopToolUse,
				Usage: codec.Usage{Input: 176, CacheRead: 1024, Output: 52, Reasoning: 128}},
		},
	}, {
		file: "upstream_incomplete.sse",
		want: []ir.Event{
			{Kind: ir.EvStart, ID: "resp_cut", Model: "gpt-4.1-mini"},
			{Kind: ir.EvText, Text: "Once upon a"},
			{Kind: ir.EvFinish, Stop: ir.StopLength, Usage: codec.Usage{Input: 20, Output: 16}},
		},
	}, {
		file: "upstream_failed.sse",
		want: []ir.Event{
			{Kind: ir.EvStart, ID: "resp_bad", Model: "gpt-5"},
			{Kind: ir.EvText, Text: "Par"},
			{Kind: ir.EvError, Err: &ir.Error{Status: 500, Kind: ir.ErrServer, Code: "server_error",
				Message: "The model failed to generate a response."}},
		},
	}, {
		file: "upstream_error.sse",
		want: []ir.Event{
			{Kind: ir.EvStart, ID: "resp_err", Model: "gpt-5"},
			{Kind: ir.EvError, Err: &ir.Error{Status: 429, Kind: ir.ErrRateLimit, Code: "rate_limit_exceeded",
				Message: "Rate limit reached for gpt-5 on tokens per min (TPM)."}},
		},
	}, {
		file: "upstream_codex_done.sse",
		want: []ir.Event{
			{Kind: ir.EvStart, ID: "resp_cx", Model: "gpt-5-codex"},
			{Kind: ir.EvSignature, Text: "gAAAAB_codex==", Format: "responses", ID: "rs_cx1"},
			{Kind: ir.EvToolStart, Index: 0, ID: "call_P", Name: "apply_patch"},
			{Kind: ir.EvToolArgs, Index: 0, Text: `{"input":"*** Begin Patch\n`},
			{Kind: ir.EvToolArgs, Index: 0, Text: `*** Update File: \"a.go\"\n*** End Patch`},
			{Kind: ir.EvToolArgs, Index: 0, Text: `"}`},
			{Kind: ir.EvToolStart, Index: 1, ID: "call_S", Name: "shell"},
			{Kind: ir.EvToolArgs, Index: 1, Text: `{"cmd":["ls"]}`},
			{Kind: ir.EvFinish, Stop: ir.StopToolUse,
				Usage: codec.Usage{Input: 904, CacheRead: 4096, Output: 100, Reasoning: 200}},
		},
	}, {
		// A Copilot-style endpoint sends a new item id on every event: items are known by
		// output_index, so nothing is doubled and events carry each item's first id.
		file: "upstream_changing_item_ids.sse",
		want: []ir.Event{
			{Kind: ir.EvStart, ID: "resp_cp1", Model: "gpt-5-mini"},
			{Kind: ir.EvReasoning, Text: "Weather ", ID: "rs_q1Zk"},
			{Kind: ir.EvReasoning, Text: "needs the tool.", ID: "rs_q1Zk"},
			{Kind: ir.EvSignature, Text: "gAAAAB_cp_state==", Format: "responses", ID: "rs_q1Zk"},
			{Kind: ir.EvText, Text: "Checking "},
			{Kind: ir.EvText, Text: "Paris."},
			{Kind: ir.EvToolStart, Index: 0, ID: "call_W1", Name: "get_weather"},
			{Kind: ir.EvToolArgs, Index: 0, Text: `{"city":`},
			{Kind: ir.EvToolArgs, Index: 0, Text: `"Paris"}`},
			{Kind: ir.EvFinish, Stop: ir.StopToolUse, Usage: codec.Usage{Input: 120, Output: 24, Reasoning: 40}},
		},
	}}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			got, done := decodeStream(t, fixture(t, c.file))
			if !done {
				t.Error("done = false at the end of the stream")
			}
			sameJSON(t, "events", got, c.want)
		})
	}
}

func TestStreamDecodeCustomArgsAreJSON(t *testing.T) {
	evs, _ := decodeStream(t, fixture(t, "upstream_codex_done.sse"))
	var args strings.Builder
	for _, ev := range evs {
		if ev.Kind == ir.EvToolArgs && ev.Index == 0 {
			args.WriteString(ev.Text)
		}
	}
	var v struct{ Input string }
	if err := json.Unmarshal([]byte(args.String()), &v); err != nil || v.Input != "*** Begin Patch\n*** Update File: \"a.go\"\n*** End Patch" {
		t.Errorf("arguments %s: %v %q", args.String(), err, v.Input)
	}
}

func TestStreamDecodeEdges(t *testing.T) {
	dec := Format.NewStreamDecoder()
	// [DONE], keep-alive-like empty data and unknown events are nothing.
	for _, data := range []string{`[DONE]`, ``, `{"type":"response.web_search_call.searching","sequence_number":1}`} {
		if evs, done, err := dec.Decode(nil, []byte(data)); len(evs) != 0 || done || err != nil {
			t.Errorf("Decode(%q) = %v, %v, %v", data, evs, done, err)
		}
	}
	// A delta before response.created still starts the stream; the name stands in for a missing type.
	evs, _, err := dec.Decode([]byte("response.output_text.delta"), []byte(`{"item_id":"m","delta":"x"}`))
	if err != nil || len(evs) != 2 || evs[0].Kind != ir.EvStart || evs[1].Text != "x" {
		t.Errorf("events = %+v, %v", evs, err)
	}
	if _, _, err := dec.Decode(nil, []byte(`{not json`)); err == nil {
		t.Error("bad JSON is not an error")
	}
	// A terminal response.done whose response failed is an error.
	evs, done, _ := dec.Decode([]byte("response.done"), []byte(`{"type":"response.done","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}`))
	if !done || len(evs) != 1 || evs[0].Kind != ir.EvError || evs[0].Err.Message != "boom" {
		t.Errorf("events = %+v, done %v", evs, done)
	}
	if evs, done, _ := dec.Decode(nil, []byte(`{"type":"response.output_text.delta","delta":"late"}`)); len(evs) != 0 || !done {
		t.Errorf("after the end: %+v, %v", evs, done)
	}
}

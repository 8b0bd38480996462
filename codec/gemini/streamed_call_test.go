package gemini

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

// streamOf is a stream whose chunks each hold the given parts (JSON arrays); the last chunk
// ends the answer with STOP.
func streamOf(chunks ...string) [][]byte {
	var out [][]byte
	for i, parts := range chunks {
		finish := ""
		if i == len(chunks)-1 {
			finish = `,"finishReason":"STOP"`
		}
		out = append(out, []byte(`{"candidates":[{"content":{"role":"model","parts":`+parts+`}`+finish+`}],"responseId":"r"}`))
	}
	return out
}

// toolEvents runs chunks through the stream decoder and keeps the tool events.
func toolEvents(t *testing.T, chunks [][]byte) ([]ir.Event, error) {
	t.Helper()
	d := Format.NewStreamDecoder()
	var out []ir.Event
	for _, c := range chunks {
		evs, _, err := d.Decode(nil, c)
		if err != nil {
			return out, err
		}
		out = append(out, toolOnly(evs)...)
	}
	end, _, _ := d.(ir.EndingDecoder).End()
	return append(out, toolOnly(end)...), nil
}

func toolOnly(evs []ir.Event) []ir.Event {
	var out []ir.Event
	for _, e := range evs {
		if e.Kind == ir.EvToolStart || e.Kind == ir.EvToolArgs {
			out = append(out, e)
		}
	}
	return out
}

func TestStreamedCallArguments(t *testing.T) {
	const open = `[{"functionCall":{"name":"f","willContinue":true}}]`
	const end = `[{"functionCall":{}}]`
	piece := func(partialArgs string) string {
		return `[{"functionCall":{"partialArgs":` + partialArgs + `,"willContinue":true}}]`
	}
	cases := []struct {
		name   string
		chunks []string
		args   string
	}{
		{"no partialArgs at all", []string{open, end}, `{}`},
		{"a string in three fragments, the last empty",
			[]string{open, piece(`[{"jsonPath":"$.q","stringValue":"hel","willContinue":true}]`),
				piece(`[{"jsonPath":"$.q","stringValue":"lo","willContinue":true}]`), piece(`[{"jsonPath":"$.q","stringValue":""}]`), end},
			`{"q":"hello"}`},
		{"every value kind",
			[]string{open, piece(`[{"jsonPath":"$.s","stringValue":"x"},{"jsonPath":"$.n","numberValue":-0.25},` +
				`{"jsonPath":"$.b","boolValue":true},{"jsonPath":"$.z","nullValue":"NULL_VALUE"},{"jsonPath":"$.q","numberValue":"1e3"}]`), end},
			`{"s":"x","n":-0.25,"b":true,"z":null,"q":1e3}`},
		{"nested objects and arrays, members in first-seen order",
			[]string{open, piece(`[{"jsonPath":"$.a.b[1]","numberValue":2},{"jsonPath":"$.a.b[0]","numberValue":1},` +
				`{"jsonPath":"$.a.c","stringValue":"c"},{"jsonPath":"$.list[0][0]","boolValue":false}]`), end},
			`{"a":{"b":[1,2],"c":"c"},"list":[[false]]}`},
		{"bracketed names with quotes and escapes",
			[]string{open, piece(`[{"jsonPath":"$['it']","stringValue":"?"},{"jsonPath":"$['a\\'b']","stringValue":"1"},` +
				`{"jsonPath":"$[\"x.y\"]","stringValue":"2"},{"jsonPath":"$['say \"hi\"']","numberValue":3}]`), end},
			`{"it":"?","a'b":"1","x.y":"2","say \"hi\"":3}`},
		{"special characters in string values stay exact",
			[]string{open, piece(`[{"jsonPath":"$.code","stringValue":"if a < b && c {\n\t\"q\"\n","willContinue":true}]`),
				piece(`[{"jsonPath":"$.code","stringValue":"}\u2028é"}]`), end},
			`{"code":"if a < b && c {\n\t\"q\"\n}\u2028é"}`},
		{"a value given again replaces the earlier one (not a string)",
			[]string{open, piece(`[{"jsonPath":"$.n","numberValue":1}]`), piece(`[{"jsonPath":"$.n","numberValue":2}]`), end},
			`{"n":2}`},
		{"the last piece may carry the last partialArgs itself",
			[]string{open, `[{"functionCall":{"partialArgs":[{"jsonPath":"$.k","stringValue":"v"}]}}]`}, `{"k":"v"}`},
		{"args in the first piece, more by partialArgs",
			[]string{`[{"functionCall":{"name":"f","args":{"a":{"x":1}},"willContinue":true}}]`,
				piece(`[{"jsonPath":"$.a.y","stringValue":"2"}]`), end},
			`{"a":{"x":1,"y":"2"}}`},
		{"a call still open at the finish goes out as it is",
			[]string{open, piece(`[{"jsonPath":"$.q","stringValue":"cut","willContinue":true}]`), `[{"text":""}]`},
			`{"q":"cut"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fixedCallIDs(t)
			got, err := toolEvents(t, streamOf(c.chunks...))
			if err != nil {
				t.Fatal(err)
			}
			want := []ir.Event{{Kind: ir.EvToolStart, ID: "call_test0", Name: "f"}, {Kind: ir.EvToolArgs, Text: c.args}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("events:\n%s\nwant:\n%s", dumpEvents(got), dumpEvents(want))
			}
		})
	}
}

// Whole calls around a streamed one keep their order and indexes; a stray end marker with
// no call open is no call; the id and signature may come on any piece.
func TestStreamedCallAmongWholeCalls(t *testing.T) {
	fixedCallIDs(t)
	got, err := toolEvents(t, streamOf(
		`[{"functionCall":{}}]`,
		`[{"functionCall":{"name":"a","args":{"x":1}}},{"functionCall":{"name":"b","willContinue":true}}]`,
		`[{"functionCall":{"id":"up-1","partialArgs":[{"jsonPath":"$.y","numberValue":2}],"willContinue":true},"thoughtSignature":"c2ln"}]`,
		`[{"functionCall":{}},{"functionCall":{"name":"c"}}]`,
		`[{"text":"done"}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := []ir.Event{
		{Kind: ir.EvToolStart, Index: 0, ID: "call_test0", Name: "a"}, {Kind: ir.EvToolArgs, Index: 0, Text: `{"x":1}`},
		{Kind: ir.EvToolStart, Index: 1, ID: "up-1", Name: "b", Signature: "c2ln", Format: "gemini"}, {Kind: ir.EvToolArgs, Index: 1, Text: `{"y":2}`},
		{Kind: ir.EvToolStart, Index: 2, ID: "call_test1", Name: "c"}, {Kind: ir.EvToolArgs, Index: 2, Text: `{}`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n%s\nwant:\n%s", dumpEvents(got), dumpEvents(want))
	}
}

// A stream that ends with [DONE] (some proxies) while a call is open still delivers it.
func TestStreamedCallFlushedByDone(t *testing.T) {
	fixedCallIDs(t)
	d := Format.NewStreamDecoder()
	if _, _, err := d.Decode(nil, []byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true}}]}}]}`)); err != nil {
		t.Fatal(err)
	}
	evs, done, err := d.Decode(nil, []byte("[DONE]"))
	want := []ir.Event{{Kind: ir.EvToolStart, ID: "call_test0", Name: "f"}, {Kind: ir.EvToolArgs, Text: `{}`},
		{Kind: ir.EvFinish, Stop: ir.StopToolUse}}
	if err != nil || !done || !reflect.DeepEqual(evs, want) {
		t.Errorf("got %s done=%v err=%v\nwant %s", dumpEvents(evs), done, err, dumpEvents(want))
	}
}

// A partial argument the gateway cannot place is an upstream error, never a call with
// arguments other than the model's.
func TestStreamedCallBadPieces(t *testing.T) {
	cases := map[string]string{
		"no $":             `{"jsonPath":"a","stringValue":"x"}`,
		"the root itself":  `{"jsonPath":"$","stringValue":"x"}`,
		"wildcard":         `{"jsonPath":"$.*","stringValue":"x"}`,
		"filter":           `{"jsonPath":"$.a[?@.b]","stringValue":"x"}`,
		"negative index":   `{"jsonPath":"$.a[-1]","stringValue":"x"}`,
		"huge index":       `{"jsonPath":"$.a[99999999]","stringValue":"x"}`,
		"unclosed quote":   `{"jsonPath":"$['a","stringValue":"x"}`,
		"empty member":     `{"jsonPath":"$..a","stringValue":"x"}`,
		"NaN":              `{"jsonPath":"$.a","numberValue":"NaN"}`,
		"number not valid": `{"jsonPath":"$.a","numberValue":true}`,
	}
	for name, pa := range cases {
		t.Run(name, func(t *testing.T) {
			chunks := streamOf(`[{"functionCall":{"name":"f","willContinue":true}}]`,
				`[{"functionCall":{"partialArgs":[`+pa+`],"willContinue":true}}]`, `[{"functionCall":{}}]`)
			_, err := toolEvents(t, chunks)
			var e *ir.Error
			if !errors.As(err, &e) || e.Status != 502 || !strings.Contains(e.Message, "partialArgs") {
				t.Errorf("got %v, want a 502 naming partialArgs", err)
			}
			body := `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","partialArgs":[` + pa + `]}}]}}]}`
			if _, err := Format.DecodeResponse([]byte(body)); !errors.As(err, &e) || e.Status != 502 {
				t.Errorf("whole answer: got %v, want a 502", err)
			}
		})
	}
}

func TestParseJSONPath(t *testing.T) {
	cases := map[string][]pathStep{
		"$.id":                    {{name: "id"}},
		"$.foo.bar[0].data":       {{name: "foo"}, {name: "bar"}, {index: 0, isIndex: true}, {name: "data"}},
		"$['foo']['bar'][12]":     {{name: "foo"}, {name: "bar"}, {index: 12, isIndex: true}},
		`$["a b"].c`:              {{name: "a b"}, {name: "c"}},
		`$['\u00e9\n']`:           {{name: "é\n"}},
		"$.ключ":                  {{name: "ключ"}},
		"$.a[0][1]":               {{name: "a"}, {index: 0, isIndex: true}, {index: 1, isIndex: true}},
		`$['x\'y']`:               {{name: "x'y"}},
		`$['quote " inside']`:     {{name: `quote " inside`}},
		"$.arr[65536]":            {{name: "arr"}, {index: 65536, isIndex: true}},
		`$["esc\"aped"]['plain']`: {{name: `esc"aped`}, {name: "plain"}},
	}
	for path, want := range cases {
		got, err := parseJSONPath(path)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, %v; want %+v", path, got, err, want)
		}
	}
}

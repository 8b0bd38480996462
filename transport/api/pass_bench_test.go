package api

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// The same-format hop's own CPU, per client format: the request checked and patched for the
// route (request), a whole answer given the client's model with its usage read (whole), and a
// 16-word streamed answer's frames relayed the same way (stream, per stream).
//
//	go test -run '^$' -bench SameFormatHop -benchtime 2000x ./transport/api/

const benchSystem = `You are a careful assistant. Answer briefly, in plain words, and say when you are unsure.`

var hopRequests = map[string]string{
	codec.FormatChat: `{"model":"m","messages":[{"role":"system","content":"` + benchSystem + `"},{"role":"user","content":"reply with 16 words"}],` +
		`"max_tokens":200,"temperature":0.7,"stream":true,"stream_options":{"include_usage":true},"user":"u-1","x_vendor":{"keep":true}}`,
	codec.FormatMessages: `{"model":"m","max_tokens":1000,"system":"` + benchSystem + `","messages":[{"role":"user","content":"reply with 16 words"}],` +
		`"thinking":{"type":"adaptive","display":"omitted"},"output_config":{"effort":"high"},"metadata":{"user_id":"u-1"},"stream":true}`,
	codec.FormatResponses: `{"model":"m","instructions":"` + benchSystem + `","input":[{"role":"user","content":"reply with 16 words"}],` +
		`"max_output_tokens":100,"reasoning":{"effort":"medium","summary":"auto"},"include":["reasoning.encrypted_content"],"store":false,"stream":true}`,
	codec.FormatGemini: `{"systemInstruction":{"parts":[{"text":"` + benchSystem + `"}]},"contents":[{"role":"user","parts":[{"text":"reply with 16 words"}]}],` +
		`"generationConfig":{"maxOutputTokens":200,"temperature":0.7}}`,
}

const hopWords = 16

var hopWholes = map[string]string{
	codec.FormatChat: `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"up-model","choices":[{"index":0,"message":{"role":"assistant","content":"` +
		words() + `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":16,"total_tokens":56}}`,
	codec.FormatMessages: `{"id":"msg_1","type":"message","role":"assistant","model":"up-model","content":[{"type":"text","text":"` + words() +
		`"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":40,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":16}}`,
	codec.FormatResponses: `{"id":"resp_1","object":"response","created_at":1700000000,"status":"completed","model":"up-model","output":[{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"` +
		words() + `","annotations":[]}]}],"usage":{"input_tokens":40,"input_tokens_details":{"cached_tokens":0},"output_tokens":16,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":56}}`,
	codec.FormatGemini: `{"candidates":[{"content":{"parts":[{"text":"` + words() + `"}],"role":"model"},"finishReason":"STOP","index":0}],` +
		`"usageMetadata":{"promptTokenCount":40,"candidatesTokenCount":16,"totalTokenCount":56},"modelVersion":"up-model","responseId":"r1"}`,
}

func words() string { return strings.TrimSpace(strings.Repeat("word ", hopWords)) }

// hopStream is a 16-word answer as the route's format streams it: (event name, data) pairs.
func hopStream(format string) [][2][]byte {
	var f [][2][]byte
	add := func(name, data string) { f = append(f, [2][]byte{[]byte(name), []byte(data)}) }
	switch format {
	case codec.FormatChat:
		head := `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"up-model","choices":[`
		add("", head+`{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)
		for i := 0; i < hopWords; i++ {
			add("", head+`{"index":0,"delta":{"content":"word "},"finish_reason":null}]}`)
		}
		add("", head+`{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		add("", head+`],"usage":{"prompt_tokens":40,"completion_tokens":16,"total_tokens":56}}`)
		add("", `[DONE]`)
	case codec.FormatMessages:
		add("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"up-model","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":40,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`)
		add("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		for i := 0; i < hopWords; i++ {
			add("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word "}}`)
		}
		add("content_block_stop", `{"type":"content_block_stop","index":0}`)
		add("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":16}}`)
		add("message_stop", `{"type":"message_stop"}`)
	case codec.FormatResponses:
		resp := `{"id":"resp_1","object":"response","created_at":1700000000,"status":"%s","model":"up-model","output":[%s]%s}`
		add("response.created", `{"type":"response.created","sequence_number":0,"response":`+fmt.Sprintf(resp, "in_progress", "", "")+`}`)
		add("response.output_item.added", `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}`)
		add("response.content_part.added", `{"type":"response.content_part.added","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}`)
		for i := 0; i < hopWords; i++ {
			add("response.output_text.delta", fmt.Sprintf(`{"type":"response.output_text.delta","sequence_number":%d,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"word "}`, 3+i))
		}
		item := `{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"` + words() + `","annotations":[]}]}`
		add("response.output_text.done", `{"type":"response.output_text.done","sequence_number":19,"item_id":"msg_1","output_index":0,"content_index":0,"text":"`+words()+`"}`)
		add("response.output_item.done", `{"type":"response.output_item.done","sequence_number":20,"output_index":0,"item":`+item+`}`)
		add("response.completed", `{"type":"response.completed","sequence_number":21,"response":`+fmt.Sprintf(resp, "completed", item,
			`,"usage":{"input_tokens":40,"input_tokens_details":{"cached_tokens":0},"output_tokens":16,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":56}`)+`}`)
	case codec.FormatGemini:
		for i := 0; i < hopWords; i++ {
			finish, usage := "", `{"promptTokenCount":40,"totalTokenCount":40}`
			if i == hopWords-1 {
				finish, usage = `,"finishReason":"STOP"`, `{"promptTokenCount":40,"candidatesTokenCount":16,"totalTokenCount":56}`
			}
			add("", `{"candidates":[{"content":{"parts":[{"text":"word "}],"role":"model"}`+finish+`,"index":0}],"usageMetadata":`+usage+`,"modelVersion":"up-model","responseId":"r1"}`)
		}
	}
	return f
}

var hopClients = map[string]*clientSpec{
	codec.FormatChat: chatClient, codec.FormatMessages: messagesClient, codec.FormatResponses: responsesClient,
	codec.FormatGemini: geminiSpec("m", true),
}

// cpuTime is the process's CPU time so far: on a loaded machine ns/op counts the time spent
// waiting for a core, cpu-ns/op does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measured runs fn b.N times, reporting its CPU per op too.
func measured(b *testing.B, fn func()) {
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		fn()
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkSameFormatHop(b *testing.B) {
	for _, format := range []string{codec.FormatChat, codec.FormatMessages, codec.FormatResponses, codec.FormatGemini} {
		rt := &catalog.Route{ID: "r", Format: format, UpstreamModel: "up-model"}
		b.Run(format+"/request", func(b *testing.B) {
			body := []byte(hopRequests[format])
			measured(b, func() {
				t := &turn{spec: hopClients[format], body: body}
				if e := t.decode(); e != nil {
					b.Fatal(e.Message)
				}
				if _, err := t.passBody(rt); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(format+"/whole", func(b *testing.B) {
			body := []byte(hopWholes[format])
			measured(b, func() {
				if _, u := benchWhole(format, body); u.Output != 16 {
					b.Fatalf("usage %+v", u)
				}
			})
		})
		b.Run(format+"/stream", func(b *testing.B) {
			frames := hopStream(format)
			measured(b, func() {
				if u := benchStream(format, frames); u.Output != 16 {
					b.Fatalf("usage %+v", u)
				}
			})
		})
	}
}

// benchWhole is what relayWhole (chat) and wholePass (the others) do to a whole answer.
func benchWhole(format string, body []byte) ([]byte, codec.Usage) {
	if format == codec.FormatChat {
		out, u, _ := chat.RelayAnswer(body, "m", nil)
		return out, u
	}
	return passWhole(format, body, "m")
}

// benchStream is what the chat relay (chatFrames) and the same-format pass (passFrames, the
// others) do to each frame.
func benchStream(format string, frames [][2][]byte) codec.Usage {
	x := &exchange{}
	if format == codec.FormatChat {
		relay := chat.NewRelay("m", true, nil)
		for _, f := range frames {
			relay.Chunk(f[1])
		}
		u, _ := relay.Usage()
		return u
	}
	dec := upstreamFormats[format].NewStreamDecoder()
	started := false // the client has its first byte (streamOut.started)
	for _, f := range frames {
		name, data := f[0], f[1]
		if !(started && contentDelta(format, name, data)) {
			events, _, _ := dec.Decode(name, data)
			for _, e := range events {
				x.observe(e)
				started = started || isContent(e)
			}
		}
		_ = nameModel(format, data, "m")
	}
	if events, _, ok := endedEarly(dec); ok { // gemini has no end marker
		for _, e := range events {
			x.observe(e)
		}
	}
	return x.usage
}

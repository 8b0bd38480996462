package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// clientCase is one client format: how to ask for three words, and how to read the text back.
type clientCase struct {
	name, path string
	body       func(model string, stream bool) string
	text       func(t *testing.T, raw []byte, stream bool) string
}

var clientCases = []clientCase{
	{"chat", "/v1/chat/completions",
		func(m string, s bool) string {
			return `{"model":"` + m + `","stream":` + boolStr(s) + `,"messages":[{"role":"system","content":"sys"},{"role":"user","content":"reply with 3 words"}]}`
		},
		func(t *testing.T, raw []byte, stream bool) string {
			if !stream {
				var out struct {
					Choices []struct{ Message struct{ Content string } }
				}
				json.Unmarshal(raw, &out)
				if len(out.Choices) == 0 {
					return ""
				}
				return out.Choices[0].Message.Content
			}
			var text strings.Builder
			for _, data := range sseData(raw) {
				var c struct {
					Choices []struct{ Delta struct{ Content string } }
				}
				json.Unmarshal([]byte(data), &c)
				for _, ch := range c.Choices {
					text.WriteString(ch.Delta.Content)
				}
			}
			if !strings.HasSuffix(string(raw), "data: [DONE]\n\n") {
				t.Errorf("chat stream without [DONE]: %s", raw)
			}
			return text.String()
		}},
	{"messages", "/v1/messages",
		func(m string, s bool) string {
			return `{"model":"` + m + `","max_tokens":200,"stream":` + boolStr(s) + `,"system":"sys","messages":[{"role":"user","content":"reply with 3 words"}]}`
		},
		func(t *testing.T, raw []byte, stream bool) string {
			if !stream {
				var out struct{ Content []struct{ Type, Text string } }
				json.Unmarshal(raw, &out)
				var s string
				for _, c := range out.Content {
					if c.Type == "text" {
						s += c.Text
					}
				}
				return s
			}
			var text strings.Builder
			for _, data := range sseData(raw) {
				var e struct {
					Type  string
					Delta struct{ Type, Text string }
				}
				json.Unmarshal([]byte(data), &e)
				if e.Type == "content_block_delta" && e.Delta.Type == "text_delta" {
					text.WriteString(e.Delta.Text)
				}
			}
			if !strings.Contains(string(raw), "event: message_stop\n") {
				t.Errorf("messages stream without message_stop: %s", raw)
			}
			return text.String()
		}},
	{"responses", "/v1/responses",
		func(m string, s bool) string {
			return `{"model":"` + m + `","stream":` + boolStr(s) + `,"instructions":"sys","input":"reply with 3 words"}`
		},
		func(t *testing.T, raw []byte, stream bool) string {
			read := func(b []byte) string {
				var out struct {
					Output []struct {
						Type    string
						Content []struct{ Type, Text string }
					}
				}
				json.Unmarshal(b, &out)
				var s string
				for _, o := range out.Output {
					for _, c := range o.Content {
						if c.Type == "output_text" {
							s += c.Text
						}
					}
				}
				return s
			}
			if !stream {
				return read(raw)
			}
			var text strings.Builder
			var final string
			for _, data := range sseData(raw) {
				var e struct {
					Type     string
					Delta    string
					Response json.RawMessage
				}
				json.Unmarshal([]byte(data), &e)
				switch e.Type {
				case "response.output_text.delta":
					text.WriteString(e.Delta)
				case "response.completed":
					final = read(e.Response)
				}
			}
			if final != text.String() {
				t.Errorf("response.completed text %q differs from the deltas %q", final, text.String())
			}
			return text.String()
		}},
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func sseData(raw []byte) []string {
	var out []string
	for _, line := range strings.Split(string(raw), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok && d != "[DONE]" {
			out = append(out, d)
		}
	}
	return out
}

// TestEveryClientFormatToEveryUpstreamFormat sends the same request from each client format
// to a model of each upstream format, plain and streamed, and reads the answer back.
func TestEveryClientFormatToEveryUpstreamFormat(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	models := map[string]string{"chat": "chat", "msg": "messages", "gem": "gemini", "resp": "responses"}
	for _, cc := range clientCases {
		for model, upstream := range models {
			for _, stream := range []bool{false, true} {
				name := cc.name + "->" + upstream
				if stream {
					name += "/stream"
				}
				t.Run(name, func(t *testing.T) {
					resp := env.Post(cc.path, env.Key, cc.body(model, stream), "anthropic-version", "2023-06-01")
					raw := nodetest.Read(t, resp)
					if resp.StatusCode != 200 {
						t.Fatalf("%d %s", resp.StatusCode, raw)
					}
					text := cc.text(t, raw, stream)
					if words := strings.Fields(text); len(words) != 3 || words[0] != "Simulated" {
						t.Fatalf("text %q\n%s", text, raw)
					}
				})
			}
		}
	}
}

package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// simRoutes are the simulator routes of nodetest.DefaultCatalog.
var simRoutes = []string{"a", "b", "c", "m", "g", "r", "i", "gi", "v", "e"}

// clientError is the error as each client envelope carries it: the chat shape (chat,
// responses, images, videos), the messages shape, or Google's with a BadRequest violation.
type clientError struct {
	Type    string `json:"type"` // messages: "error"
	Message string
	Param   string
	Kind    string // the error's own type: invalid_request_error, INVALID_ARGUMENT
}

func readClientError(t *testing.T, raw []byte) clientError {
	t.Helper()
	var body struct {
		Type  string `json:"type"`
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Status  string  `json:"status"`
			Details []struct {
				FieldViolations []struct {
					Field string `json:"field"`
				} `json:"fieldViolations"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("not an error envelope: %s", raw)
	}
	e := clientError{Type: body.Type, Message: body.Error.Message, Kind: body.Error.Type}
	if body.Error.Param != nil {
		e.Param = *body.Error.Param
	}
	if body.Error.Status != "" {
		e.Kind = body.Error.Status
		for _, d := range body.Error.Details {
			for _, v := range d.FieldViolations {
				e.Param = v.Field
			}
		}
	}
	return e
}

// TestBadInputIsRefusedBeforeAnyUpstream: over real sockets, each class of bad input in every
// client format is the gateway's 400 in the client's envelope, naming the field and what it
// allows, and no upstream is called for any of them.
func TestBadInputIsRefusedBeforeAnyUpstream(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	const (
		chatTurn = `"messages":[{"role":"user","content":"hi"}]`
		gemTurn  = `"contents":[{"role":"user","parts":[{"text":"hi"}]}]`
	)
	chat := func(model, members string) string { return `{"model":"` + model + `",` + chatTurn + members + `}` }
	messages := func(members string) string {
		return `{"model":"msg","max_tokens":50,` + chatTurn + members + `}`
	}
	responses := func(members string) string { return `{"model":"resp","input":"hi"` + members + `}` }
	cases := []struct {
		name, path, body string
		param, message   string
	}{
		{"chat role", "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"},{"role":"wizard","content":"d"}]}`,
			"messages[3].role", `messages[3].role must be one of system, developer, user, assistant, tool, function; got "wizard"`},
		{"chat temperature", "/v1/chat/completions", chat("chat", `,"temperature":99`), "temperature", "temperature must be a number from 0 to 2; got 99"},
		{"chat n", "/v1/chat/completions", chat("chat", `,"n":1000`), "n", "n must be an integer from 1 to 128; got 1000"},
		{"chat top_p", "/v1/chat/completions", chat("chat", `,"top_p":7`), "top_p", "top_p must be a number from 0 to 1; got 7"},
		{"chat penalty", "/v1/chat/completions", chat("chat", `,"frequency_penalty":-9`), "frequency_penalty", "frequency_penalty must be a number from -2 to 2; got -9"},
		{"chat max_tokens", "/v1/chat/completions", chat("chat", `,"max_tokens":0`), "max_tokens", "max_tokens must be an integer of at least 1; got 0"},
		{"chat stop", "/v1/chat/completions", chat("chat", `,"stop":["1","2","3","4","5"]`), "stop", `stop must be a string or an array of at most 4 strings; got ["1","2","3","4","5"]`},
		{"chat top_logprobs", "/v1/chat/completions", chat("chat", `,"logprobs":true,"top_logprobs":50`), "top_logprobs", "top_logprobs must be an integer from 0 to 20; got 50"},
		{"chat tool_choice", "/v1/chat/completions", chat("chat", `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}`),
			"tool_choice.function.name", `tool_choice.function.name names the tool "g", which is not one of the tools offered (f)`},
		{"chat duplicate tools", "/v1/chat/completions", chat("chat", `,"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"f"}}]`),
			"tools[1].function.name", `tools[1].function.name "f" is already the name of tools[0].function.name: tool names must be unique`},
		{"chat tool name", "/v1/chat/completions", chat("chat", `,"tools":[{"type":"function","function":{"name":"read file"}}]`),
			"tools[0].function.name", `tools[0].function.name "read file" must be 1 to 64 characters of a-z, A-Z, 0-9, '_' and '-'`},
		{"chat n > 1 to a converted route", "/v1/chat/completions", chat("msg", `,"n":3`),
			"n", "n must be 1 for model msg: it is served by routes of another format, which answer with one choice; send one request per answer"},
		{"chat to a converted route: temperature", "/v1/chat/completions", chat("gem", `,"temperature":2.5`), "temperature", "temperature must be a number from 0 to 2; got 2.5"},
		{"messages role", "/v1/messages", `{"model":"msg","max_tokens":50,"messages":[{"role":"wizard","content":"hi"}]}`,
			"", `messages[0].role must be one of user, assistant, system; got "wizard"`},
		{"messages temperature", "/v1/messages", messages(`,"temperature":1.5`), "", "temperature must be a number from 0 to 1; got 1.5"},
		{"messages top_k", "/v1/messages", messages(`,"top_k":-3`), "", "top_k must be an integer of at least 0; got -3"},
		{"messages tool_choice", "/v1/messages", messages(`,"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"g"}`),
			"", `tool_choice.name names the tool "g", which is not one of the tools offered (f)`},
		{"responses empty input", "/v1/responses", `{"model":"resp","input":[]}`, "input", "input must not be empty: send a string or an array of input items"},
		{"responses empty input to a chat route", "/v1/responses", `{"model":"chat","input":""}`, "input", "input must not be empty: send a string or an array of input items"},
		{"responses role", "/v1/responses", `{"model":"resp","input":[{"role":"wizard","content":"hi"}]}`,
			"input[0].role", `input[0].role must be one of user, assistant, system, developer; got "wizard"`},
		{"responses max_output_tokens", "/v1/responses", responses(`,"max_output_tokens":8`), "max_output_tokens", "max_output_tokens must be an integer of at least 16; got 8"},
		{"responses temperature", "/v1/responses", responses(`,"temperature":99`), "temperature", "temperature must be a number from 0 to 2; got 99"},
		{"responses tool_choice", "/v1/responses", responses(`,"tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}`),
			"tool_choice.name", `tool_choice.name names the tool "g", which is not one of the tools offered (f)`},
		{"gemini role", "/v1beta/models/gem:generateContent", `{"contents":[{"role":"wizard","parts":[{"text":"hi"}]}]}`,
			"contents[0].role", `contents[0].role "wizard" is not valid: use user or model`},
		{"gemini temperature", "/v1beta/models/gem:generateContent", `{` + gemTurn + `,"generationConfig":{"temperature":99}}`,
			"generationConfig.temperature", "generationConfig.temperature must be a number from 0 to 2; got 99"},
		{"gemini topK", "/v1beta/models/gem:streamGenerateContent?alt=sse", `{` + gemTurn + `,"generationConfig":{"topK":0}}`,
			"generationConfig.topK", "generationConfig.topK must be a number of at least 1; got 0"},
		{"gemini candidates to a converted route", "/v1beta/models/msg:generateContent", `{` + gemTurn + `,"generationConfig":{"candidateCount":2}}`,
			"generationConfig.candidateCount", "generationConfig.candidateCount must be 1 for model msg: it is served by routes of another format, which answer with one choice; send one request per answer"},
		{"gemini allowed names", "/v1beta/models/gem:generateContent", `{` + gemTurn + `,"tools":[{"functionDeclarations":[{"name":"f"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["g"]}}}`,
			"toolConfig.functionCallingConfig.allowedFunctionNames[0]", `toolConfig.functionCallingConfig.allowedFunctionNames[0] names the tool "g", which is not one of the tools offered (f)`},
		{"video local file", "/v1/videos", `{"model":"vid","prompt":"waves","mode":"keyframe","first_frame":"file:///etc/passwd"}`,
			"first_frame", `first_frame must be an https:, http: or data: URL of an image; got "file:///etc/passwd"`},
		{"video text with frames", "/v1/videos", `{"model":"vid","prompt":"waves","mode":"text","first_frame":"https://example.com/a.png"}`,
			"first_frame", "mode text makes a video from the prompt alone: drop first_frame, or use mode keyframe"},
		{"video aspect ratio", "/v1/videos", `{"model":"vid","prompt":"waves","mode":"text","aspect_ratio":"4:3"}`,
			"aspect_ratio", `aspect_ratio "4:3" is not offered by this model: use one of 16:9, 9:16, 1:1`},
		{"image body", "/v1/images/generations", `{"model":"img","prompt":"p","n":"1"}`,
			"", "the request body must be a JSON object of the images format: n must be an integer, not string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			headers := []string{"anthropic-version", "2023-06-01"}
			key := env.Key
			if strings.HasPrefix(c.path, "/v1beta/") {
				headers, key = append(headers, "x-goog-api-key", env.Key), ""
			}
			resp := env.Post(c.path, key, c.body, headers...)
			raw := nodetest.Read(t, resp)
			if resp.StatusCode != 400 {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			got := readClientError(t, raw)
			want := clientError{Message: c.message, Param: c.param, Kind: "invalid_request_error"}
			switch {
			case c.path == "/v1/messages":
				want.Type = "error" // the messages envelope has no param
			case strings.HasPrefix(c.path, "/v1beta/"):
				want.Kind = "INVALID_ARGUMENT"
			}
			if got != want {
				t.Errorf("\n got %+v\nwant %+v", got, want)
			}
		})
	}
	for _, route := range simRoutes {
		if n := env.Sim.Calls(route); n != 0 {
			t.Errorf("route %s was called %d times", route, n)
		}
	}
}

// TestManyChoicesReachARouteOfTheClientsFormat: n above 1 is refused only where a
// converted route would answer with one; a model whose routes all speak chat gets it.
func TestManyChoicesReachARouteOfTheClientsFormat(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	resp := env.Post("/v1/chat/completions", env.Key, `{"model":"chat","n":2,"messages":[{"role":"user","content":"hi"}]}`)
	if raw := nodetest.Read(t, resp); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	if calls := env.Sim.Calls("a") + env.Sim.Calls("b"); calls != 1 {
		t.Fatalf("%d upstream calls", calls)
	}
}

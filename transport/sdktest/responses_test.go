package sdktest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// servesResponses reports whether the gateway serves /v1/responses (a router 404 is not a
// model_not_found error).
func servesResponses(t *testing.T, env *nodetest.Env) bool {
	t.Helper()
	resp := env.Post("/v1/responses", env.Key, `{"model":"no-such-model","input":"Reply with 4 words."}`)
	body := nodetest.Read(t, resp)
	return resp.StatusCode != http.StatusNotFound || strings.Contains(string(body), "model_not_found")
}

// requireResponses skips when the gateway does not serve /v1/responses yet.
func requireResponses(t *testing.T, env *nodetest.Env) {
	t.Helper()
	if !servesResponses(t, env) {
		t.Skip("the gateway does not serve /v1/responses yet (POST /v1/responses is a 404)")
	}
}

// responsesTools are the two function tools in the Responses shape.
func responsesTools() []responses.ToolUnionParam {
	tool := func(name, desc string, schema map[string]any) responses.ToolUnionParam {
		return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
			Name: name, Description: openai.String(desc), Parameters: schema, Strict: openai.Bool(false)}}
	}
	return []responses.ToolUnionParam{
		tool("get_weather", "Weather for a city", weatherSchema),
		tool("get_time", "Time in a zone", timeSchema),
	}
}

// responseCalls returns the function_call items of a response, checking the two calls.
func checkResponseCalls(t *testing.T, r *responses.Response) []responses.ResponseOutputItemUnion {
	t.Helper()
	var calls []responses.ResponseOutputItemUnion
	for _, it := range r.Output {
		switch it.Type {
		case "function_call":
			calls = append(calls, it)
		case "reasoning":
		default:
			t.Errorf("unexpected %s item in a tool answer: %s", it.Type, it.RawJSON())
		}
	}
	if len(calls) != len(wantCalls) {
		t.Fatalf("got %d function_call items, want %d: %s", len(calls), len(wantCalls), r.RawJSON())
	}
	var ids, itemIDs []string
	for i, c := range calls {
		if c.Name != wantCalls[i].name {
			t.Errorf("function_call %d name = %q, want %q", i, c.Name, wantCalls[i].name)
		}
		checkArgs(t, c.Name, c.Arguments.OfString, wantCalls[i].args)
		ids = append(ids, c.CallID)
		itemIDs = append(itemIDs, c.ID)
	}
	checkDistinct(t, "call_ids", ids)
	checkDistinct(t, "function_call item ids", itemIDs)
	return calls
}

// respStream is what a Responses stream delivered.
type respStream struct {
	types     []string
	text      string                                      // response.output_text.delta, joined
	args      map[int64]string                            // response.function_call_arguments.delta by output_index
	argsDone  map[int64]string                            // response.function_call_arguments.done by output_index
	added     map[int64]responses.ResponseOutputItemUnion // response.output_item.added by output_index
	completed *responses.Response                         // the response.completed event's response
	failed    bool                                        // a response.failed or error event came
	err       error
}

// streamResponse reads a whole Responses stream, checking the sequence numbers increase.
func streamResponse(t *testing.T, client openai.Client, p responses.ResponseNewParams) respStream {
	t.Helper()
	stream := client.Responses.NewStreaming(ctx(t), p)
	defer stream.Close()
	s := respStream{args: map[int64]string{}, argsDone: map[int64]string{}, added: map[int64]responses.ResponseOutputItemUnion{}}
	var text strings.Builder
	last := int64(-1)
	for stream.Next() {
		ev := stream.Current()
		s.types = append(s.types, ev.Type)
		if ev.SequenceNumber <= last {
			t.Errorf("sequence_number %d after %d (%s)", ev.SequenceNumber, last, ev.Type)
		}
		last = ev.SequenceNumber
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.function_call_arguments.delta":
			s.args[ev.OutputIndex] += ev.Delta
		case "response.function_call_arguments.done":
			s.argsDone[ev.OutputIndex] = ev.Arguments
		case "response.output_item.added":
			s.added[ev.OutputIndex] = ev.Item
		case "response.completed":
			r := ev.Response
			s.completed = &r
		case "response.failed", "error":
			s.failed = true
		}
	}
	s.text, s.err = text.String(), stream.Err()
	return s
}

// TestResponsesSDK drives /v1/responses with openai-go against every upstream format.
func TestResponsesSDK(t *testing.T) {
	env := startEnv(t)
	requireResponses(t, env)
	client := openaiClient(env, env.Key)

	forEachModel(t, env, func(t *testing.T, m model) {
		const prompt = "Greet me and reply with 5 words."
		params := responses.ResponseNewParams{
			Model: m.ID,
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(prompt)},
		}
		var plain string

		t.Run("text", func(t *testing.T) {
			r, err := client.Responses.New(ctx(t), params)
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, m, r.OutputText(), 5)
			if r.Status != "completed" {
				t.Errorf("status = %q, want completed", r.Status)
			}
			if r.Model != m.ID {
				t.Errorf("model = %q, want %q", r.Model, m.ID)
			}
			if !strings.HasPrefix(r.ID, "resp_") {
				t.Errorf("id = %q, want a resp_ id", r.ID)
			}
			if len(r.Output) != 1 || r.Output[0].Type != "message" || r.Output[0].Role != "assistant" {
				t.Errorf("output = %s, want one assistant message", r.RawJSON())
			}
			u := r.Usage
			if want := int64(len(strings.Fields(prompt))); u.InputTokens != want {
				t.Errorf("usage input_tokens = %d, want %d", u.InputTokens, want)
			}
			if u.OutputTokens != 5 || u.TotalTokens != u.InputTokens+u.OutputTokens {
				t.Errorf("usage = %+v, want 5 output tokens and total = input + output", u)
			}
			plain = r.OutputText()
		})

		t.Run("stream", func(t *testing.T) {
			if plain == "" {
				t.Skip("needs the plain answer")
			}
			s := streamResponse(t, client, params)
			if s.err != nil {
				t.Fatalf("stream error: %v (events %q)", s.err, s.types)
			}
			if len(s.types) == 0 || s.types[0] != "response.created" || s.types[len(s.types)-1] != "response.completed" {
				t.Errorf("event types = %q, want response.created … response.completed", s.types)
			}
			if s.completed == nil {
				t.Fatal("no response.completed event")
			}
			sameReply(t, m, s.text, plain, 5)
			if got := s.completed.OutputText(); got != s.text {
				t.Errorf("completed response text = %q, want the streamed deltas %q", got, s.text)
			}
			if s.completed.Status != "completed" || s.completed.Usage.OutputTokens != 5 || s.completed.Usage.InputTokens <= 0 {
				t.Errorf("completed response status %q usage %+v, want completed with 5 output tokens", s.completed.Status, s.completed.Usage)
			}
			if s.completed.Model != m.ID {
				t.Errorf("model = %q, want %q", s.completed.Model, m.ID)
			}
		})

		t.Run("instructions", func(t *testing.T) {
			p := params
			p.Instructions = openai.String("You are terse. Answer in plain English.")
			r, err := client.Responses.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, m, r.OutputText(), 5)
			if want := int64(3 + 4 + len(strings.Fields(prompt))); r.Usage.InputTokens != want {
				t.Errorf("usage input_tokens = %d, want %d (instructions + prompt)", r.Usage.InputTokens, want)
			}
		})

		t.Run("max_output_tokens", func(t *testing.T) {
			p := params
			p.Input = responses.ResponseNewParamsInputUnion{OfString: openai.String("Reply with 30 words.")}
			p.MaxOutputTokens = openai.Int(20)
			r, err := client.Responses.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, m, r.OutputText(), 20)
			if r.Status != "incomplete" || r.IncompleteDetails.Reason != "max_output_tokens" {
				t.Errorf("status %q incomplete_details %q, want incomplete/max_output_tokens", r.Status, r.IncompleteDetails.RawJSON())
			}
			if r.Usage.OutputTokens != 20 {
				t.Errorf("usage output_tokens = %d, want 20", r.Usage.OutputTokens)
			}
		})

		t.Run("cached_usage", func(t *testing.T) {
			const cachedPrompt = "Greet me, cached 3, and reply with 5 words."
			p := params
			p.Input = responses.ResponseNewParamsInputUnion{OfString: openai.String(cachedPrompt)}
			r, err := client.Responses.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			// Responses input_tokens include the cached ones.
			u := r.Usage
			if want := int64(len(strings.Fields(cachedPrompt))); u.InputTokens != want || u.InputTokensDetails.CachedTokens != 3 {
				t.Errorf("usage input_tokens/cached_tokens = %d/%d, want %d/3; %s", u.InputTokens, u.InputTokensDetails.CachedTokens, want, u.RawJSON())
			}
		})

		toolPrompt := parallelPrompt + " Then reply with 4 words."
		toolParams := params
		toolParams.Input = responses.ResponseNewParamsInputUnion{OfString: openai.String(toolPrompt)}
		toolParams.Tools = responsesTools()
		var calls []responses.ResponseOutputItemUnion

		t.Run("function_calls", func(t *testing.T) {
			r, err := client.Responses.New(ctx(t), toolParams)
			if err != nil {
				t.Fatal(err)
			}
			calls = checkResponseCalls(t, r)
			if r.Status != "completed" {
				t.Errorf("status = %q, want completed", r.Status)
			}
		})

		t.Run("function_calls_stream", func(t *testing.T) {
			s := streamResponse(t, client, toolParams)
			if s.err != nil {
				t.Fatalf("stream error: %v (events %q)", s.err, s.types)
			}
			if s.completed == nil {
				t.Fatalf("no response.completed event in %q", s.types)
			}
			final := checkResponseCalls(t, s.completed)
			var idx []int64
			for i, it := range s.added {
				if it.Type == "function_call" {
					idx = append(idx, i)
				}
			}
			if len(idx) != len(wantCalls) {
				t.Fatalf("got %d function_call items added, want %d (events %q)", len(idx), len(wantCalls), s.types)
			}
			for n, i := range sortedInts(idx) {
				it := s.added[i]
				if it.Name != wantCalls[n].name {
					t.Errorf("added item %d name = %q, want %q", i, it.Name, wantCalls[n].name)
				}
				if it.CallID != final[n].CallID {
					t.Errorf("added item %d call_id = %q, completed response has %q", i, it.CallID, final[n].CallID)
				}
				checkArgs(t, it.Name+" (reassembled deltas)", s.args[i], wantCalls[n].args)
				checkArgs(t, it.Name+" (arguments.done)", s.argsDone[i], wantCalls[n].args)
			}
		})

		t.Run("function_call_output_round_trip", func(t *testing.T) {
			if len(calls) != 2 {
				t.Skip("needs the function calls")
			}
			input := responses.ResponseInputParam{
				responses.ResponseInputItemParamOfMessage(toolPrompt, responses.EasyInputMessageRoleUser),
			}
			for _, c := range calls {
				input = append(input, responses.ResponseInputItemParamOfFunctionCall(c.Arguments.OfString, c.CallID, c.Name))
			}
			for _, c := range calls {
				out := responses.ResponseInputItemParamOfFunctionCallOutput("result of " + c.Name + ": fine")
				out.OfFunctionCallOutput.CallID = openai.String(c.CallID)
				input = append(input, out)
			}
			p := toolParams
			p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
			r, err := client.Responses.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range r.Output {
				if it.Type == "function_call" {
					t.Errorf("got a function call after the outputs, want text: %s", it.RawJSON())
				}
			}
			checkReply(t, m, r.OutputText(), 4)
		})

		t.Run("reasoning", func(t *testing.T) {
			p := params
			p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffortHigh, Summary: shared.ReasoningSummaryAuto}
			if !m.thinks() {
				// No visible reasoning: the answer is the plain message, with no reasoning text.
				r, err := client.Responses.New(ctx(t), p)
				if err != nil {
					t.Fatal(err)
				}
				checkReply(t, m, r.OutputText(), 5)
				for _, it := range r.Output {
					if it.Type == "reasoning" && len(it.Summary) > 0 {
						t.Errorf("%s (%s upstream, class %q) returned a reasoning summary: %s", m.ID, m.Format, m.Reasoning.Class, it.RawJSON())
					}
				}
				return
			}
			check := func(t *testing.T, r *responses.Response) {
				t.Helper()
				if len(r.Output) != 2 || r.Output[0].Type != "reasoning" || r.Output[1].Type != "message" {
					t.Fatalf("output = %s, want a reasoning item then a message", r.RawJSON())
				}
				var summary []string
				for _, s := range r.Output[0].Summary {
					summary = append(summary, s.Text)
				}
				if got := strings.Join(summary, ""); got != reasoningText {
					t.Errorf("reasoning summary = %q, want %q", got, reasoningText)
				}
				checkReply(t, m, r.OutputText(), 5)
				if u := r.Usage; u.OutputTokens != 13 {
					t.Errorf("usage output_tokens = %d, want 13 (5 text + 8 reasoning)", u.OutputTokens)
				}
			}
			r, err := client.Responses.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			check(t, r)
			t.Run("stream", func(t *testing.T) {
				s := streamResponse(t, client, p)
				if s.err != nil || s.completed == nil {
					t.Fatalf("stream error %v, events %q", s.err, s.types)
				}
				check(t, s.completed)
			})
		})

		t.Run("midstream_error", func(t *testing.T) {
			p := params
			p.Input = responses.ResponseNewParamsInputUnion{OfString: openai.String("Reply with 6 words then a midstream error.")}
			s := streamResponse(t, client, p)
			if s.err == nil && !s.failed {
				t.Fatalf("stream ended without an error (events %q); want response.failed or a stream error", s.types)
			}
			if s.completed != nil {
				t.Errorf("a failed stream sent response.completed")
			}
			prefixOfReply(t, m, s.text, 6)
		})
	})
}

// sortedInts returns xs sorted ascending.
func sortedInts(xs []int64) []int64 {
	out := append([]int64{}, xs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

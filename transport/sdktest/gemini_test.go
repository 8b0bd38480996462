package sdktest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// googleClient is go-genai (the Gemini Developer API backend) pointed at the gateway with
// key, without retries.
func googleClient(t *testing.T, env *nodetest.Env, key string) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(ctx(t), &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI,
		HTTPClient: env.Client, HTTPOptions: genai.HTTPOptions{BaseURL: env.Node.URL + "/", APIVersion: "v1beta"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// geminiTools are the two tools in go-genai's shape: one with a Gemini Schema (types in
// capitals, as the SDK writes them), one with a JSON Schema.
func geminiTools() []*genai.Tool {
	return []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{
		{Name: "get_weather", Description: "Weather for a city", Parameters: &genai.Schema{
			Type: genai.TypeObject, Required: []string{"city", "days"},
			Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}, "days": {Type: genai.TypeInteger}}}},
		{Name: "get_time", Description: "Time in a zone", ParametersJsonSchema: timeSchema},
	}}}
}

// textOfParts is the non-thought text of a content.
func textOfParts(c *genai.Content) string {
	var s string
	for _, p := range c.Parts {
		if !p.Thought {
			s += p.Text
		}
	}
	return s
}

// geminiStream reads a whole streamed answer: every chunk, and the first error.
func geminiStream(t *testing.T, client *genai.Client, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) ([]*genai.GenerateContentResponse, error) {
	t.Helper()
	var chunks []*genai.GenerateContentResponse
	for chunk, err := range client.Models.GenerateContentStream(ctx(t), model, contents, cfg) {
		if err != nil {
			return chunks, err
		}
		chunks = append(chunks, chunk)
	}
	return chunks, nil
}

// TestGeminiSDK drives the Gemini API endpoints with go-genai against every upstream format:
// a plain and a streamed answer naming the client's model, with usage.
func TestGeminiSDK(t *testing.T) {
	env := startEnv(t)
	client := googleClient(t, env, env.Key)
	prompt := genai.Text("Greet me and reply with 5 words.")
	forEachModel(t, env, func(t *testing.T, m model) {
		resp, err := client.Models.GenerateContent(ctx(t), m.ID, prompt, nil)
		if err != nil {
			t.Fatal(err)
		}
		plain := resp.Text()
		checkReply(t, m, plain, 5)
		if resp.ModelVersion != m.ID || resp.ResponseID == "" || resp.Candidates[0].FinishReason != genai.FinishReasonStop {
			t.Errorf("modelVersion %q responseId %q finish %q", resp.ModelVersion, resp.ResponseID, resp.Candidates[0].FinishReason)
		}
		if u := resp.UsageMetadata; u == nil || u.CandidatesTokenCount != 5 || u.PromptTokenCount == 0 || u.TotalTokenCount != u.PromptTokenCount+5 {
			t.Errorf("usage %+v", u)
		}

		chunks, err := geminiStream(t, client, m.ID, prompt, nil)
		if err != nil {
			t.Fatal(err)
		}
		var streamed strings.Builder
		for _, c := range chunks {
			streamed.WriteString(c.Text())
			if c.ModelVersion != m.ID {
				t.Errorf("chunk modelVersion %q", c.ModelVersion)
			}
		}
		sameReply(t, m, streamed.String(), plain, 5)
		last := chunks[len(chunks)-1]
		if last.Candidates[0].FinishReason != genai.FinishReasonStop || last.UsageMetadata.CandidatesTokenCount != 5 {
			t.Errorf("last chunk %+v usage %+v", last.Candidates[0], last.UsageMetadata)
		}
	})
}

// TestGeminiToolsSDK: two parallel calls come back with ids (Gemini's own have none) and
// exact args, plain and streamed; the client sends the results back and gets the text.
func TestGeminiToolsSDK(t *testing.T) {
	env := startEnv(t)
	client := googleClient(t, env, env.Key)
	cfg := &genai.GenerateContentConfig{Tools: geminiTools()}
	ask := genai.Text(parallelPrompt)
	forEachModel(t, env, func(t *testing.T, m model) {
		check := func(t *testing.T, calls []*genai.FunctionCall) {
			t.Helper()
			if len(calls) != len(wantCalls) {
				t.Fatalf("%d calls, want %d", len(calls), len(wantCalls))
			}
			var ids []string
			for i, c := range calls {
				args, _ := json.Marshal(c.Args)
				if c.Name != wantCalls[i].name {
					t.Errorf("call %d is %q, want %q", i, c.Name, wantCalls[i].name)
				}
				checkArgs(t, c.Name, string(args), wantCalls[i].args)
				ids = append(ids, c.ID)
			}
			if m.Format != catalog.FormatGemini { // Gemini's own calls have no ids, and pass through
				checkDistinct(t, "functionCall ids", ids)
			}
		}
		resp, err := client.Models.GenerateContent(ctx(t), m.ID, ask, cfg)
		if err != nil {
			t.Fatal(err)
		}
		check(t, resp.FunctionCalls())
		if resp.Candidates[0].FinishReason != genai.FinishReasonStop {
			t.Errorf("finishReason %q, want STOP (a function-call turn ends with STOP)", resp.Candidates[0].FinishReason)
		}
		chunks, err := geminiStream(t, client, m.ID, ask, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var streamed []*genai.FunctionCall
		for _, c := range chunks {
			streamed = append(streamed, c.FunctionCalls()...)
		}
		check(t, streamed)

		// The round trip: the model's turn as it came, then one response per call.
		results := &genai.Content{Role: genai.RoleUser}
		for _, c := range resp.FunctionCalls() {
			results.Parts = append(results.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{
				ID: c.ID, Name: c.Name, Response: map[string]any{"output": "done"}}})
		}
		history := append(ask, resp.Candidates[0].Content, results)
		final, err := client.Models.GenerateContent(ctx(t), m.ID, history, cfg)
		if err != nil {
			t.Fatal(err)
		}
		checkReply(t, m, final.Text(), 16) // the simulator's default length
	})
}

// TestGeminiThinkingSDK: thinkingConfig reaches every format; thought parts come back for
// models that return reasoning, and Gemini's signature on a text part (Gemini 3) reaches the
// client on that part and goes back to Gemini byte for byte.
func TestGeminiThinkingSDK(t *testing.T) {
	env := startEnv(t)
	client := googleClient(t, env, env.Key)
	cfg := &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: genai.Ptr[int32](4096)}}
	ask := genai.Text("Think, then reply with 5 words.")
	forEachModel(t, env, func(t *testing.T, m model) {
		resp, err := client.Models.GenerateContent(ctx(t), m.ID, ask, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var thought string
		var signed *genai.Part
		for _, p := range resp.Candidates[0].Content.Parts {
			if p.Thought {
				thought += p.Text
			} else if len(p.ThoughtSignature) > 0 {
				signed = p
			}
		}
		checkReply(t, m, textOfParts(resp.Candidates[0].Content), 5)
		if !m.thinks() {
			if thought != "" {
				t.Errorf("thoughts from a model that shows none: %q", thought)
			}
			return
		}
		if thought != reasoningText {
			t.Errorf("thoughts %q, want %q", thought, reasoningText)
		}
		// 8 words of reasoning, 5 of answer; the messages format counts thinking inside its
		// output tokens, so only the total tells there.
		if u := resp.UsageMetadata; u.CandidatesTokenCount+u.ThoughtsTokenCount != 13 || m.Format != catalog.FormatMessages && u.ThoughtsTokenCount != 8 {
			t.Errorf("candidates %d thoughts %d, want 5 and 8", u.CandidatesTokenCount, u.ThoughtsTokenCount)
		}
		if m.Format != catalog.FormatGemini {
			if signed != nil {
				t.Errorf("a foreign signature reached a gemini client: %+v", signed)
			}
			return
		}
		want := simSignature("thought", reasoningText)
		if signed == nil || base64.StdEncoding.EncodeToString(signed.ThoughtSignature) != want || signed.Text == "" {
			t.Fatalf("signed text part %+v, want the text signed with %s", signed, want)
		}
		history := append(ask, resp.Candidates[0].Content, genai.NewContentFromText("Go on, reply with 4 words.", genai.RoleUser))
		if _, err := client.Models.GenerateContent(ctx(t), m.ID, history, cfg); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(env.Sim.LastRequest("g"), []byte(`"thoughtSignature":"`+want+`"`)) {
			t.Errorf("the text part's signature did not go back to gemini: %s", env.Sim.LastRequest("g"))
		}
	})
}

// TestGeminiCountTokensAndModelsSDK: countTokens answers from the gateway's estimate for every
// model; the model list and one model read as go-genai Models.
func TestGeminiCountTokensAndModelsSDK(t *testing.T) {
	env := startEnv(t)
	client := googleClient(t, env, env.Key)
	forEachModel(t, env, func(t *testing.T, m model) {
		resp, err := client.Models.CountTokens(ctx(t), m.ID, genai.Text("Hello there"), nil)
		if err != nil {
			t.Fatal(err)
		}
		want := int32(8) // 4 per message + ceil(11 bytes / 3)
		if m.ID == "resp" || m.ID == "azr" {
			want = 6 // o200k_base: "Hello", " there"
		}
		if resp.TotalTokens != want {
			t.Errorf("totalTokens %d, want %d", resp.TotalTokens, want)
		}
		got, err := client.Models.Get(ctx(t), m.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "models/"+m.ID || !slices.Contains(got.SupportedActions, "generateContent") {
			t.Errorf("model %+v", got)
		}
	})
	var names []string
	for mdl, err := range client.Models.All(ctx(t)) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, mdl.Name)
	}
	if want := []string{"models/az", "models/azr", "models/bdr", "models/chat", "models/cnv", "models/gem", "models/msg", "models/open-only", "models/resp", "models/vgem", "models/vmsg"}; !slices.Equal(names, want) {
		t.Errorf("models %q, want %q", names, want)
	}
}

// checkGoogleError asserts err is go-genai's APIError with the status and status name, and
// returns it. The gateway's own refusals carry its request id as a RequestInfo detail.
func checkGoogleError(t *testing.T, err error, code int, status string) genai.APIError {
	t.Helper()
	apiErr := checkStreamError(t, err, code, status)
	for _, d := range apiErr.Details {
		if d["@type"] == "type.googleapis.com/google.rpc.RequestInfo" && strings.HasPrefix(d["requestId"].(string), "req_") {
			return apiErr
		}
	}
	t.Errorf("no RequestInfo with the request id in %v", apiErr.Details)
	return apiErr
}

// checkStreamError asserts err is go-genai's APIError with the status and status name (an
// error inside a stream, which has no place for the request id but the header).
func checkStreamError(t *testing.T, err error, code int, status string) genai.APIError {
	t.Helper()
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error = %v (%T), want genai.APIError", err, err)
	}
	if apiErr.Code != code || apiErr.Status != status || apiErr.Message == "" {
		t.Errorf("APIError %d %q %q, want %d %q", apiErr.Code, apiErr.Status, apiErr.Message, code, status)
	}
	return apiErr
}

// TestGeminiErrorsSDK: refusals and failures reach go-genai as APIError with Google's status
// names, whole and streamed.
func TestGeminiErrorsSDK(t *testing.T) {
	env := nodetest.Start(t, nodetest.DefaultCatalog+"\nplans:\n  - {name: demo, allow_automated: true}\n  - {name: burst3, burst_rpm: 3, window_requests: 1000, allow_automated: true}\n", nodetest.Options{})
	ask := genai.Text("Reply with 4 words.")
	both := func(t *testing.T, client *genai.Client, model string, code int, status string) {
		t.Helper()
		_, err := client.Models.GenerateContent(ctx(t), model, ask, nil)
		checkGoogleError(t, err, code, status)
		_, err = geminiStream(t, client, model, ask, nil)
		checkGoogleError(t, err, code, status)
	}
	t.Run("401", func(t *testing.T) {
		both(t, googleClient(t, env, "sk-user-"+strings.Repeat("x", 40)), "chat", http.StatusUnauthorized, "UNAUTHENTICATED")
	})
	t.Run("404", func(t *testing.T) {
		both(t, googleClient(t, env, env.Key), "no-such-model", http.StatusNotFound, "NOT_FOUND")
	})
	t.Run("upstream failure", func(t *testing.T) {
		env.Sim.SetBehavior("m", simulator.Behavior{FailStatus: http.StatusInternalServerError})
		defer env.Sim.SetBehavior("m", simulator.Behavior{})
		_, err := googleClient(t, env, env.Key).Models.GenerateContent(ctx(t), "msg", ask, nil)
		checkGoogleError(t, err, http.StatusBadGateway, "INTERNAL")
	})
	for _, c := range []struct {
		model  string
		code   int
		status string
	}{{"gem", 503, "UNAVAILABLE"}, {"msg", 529, "UNAVAILABLE"}, {"resp", 500, "INTERNAL"}} {
		t.Run("in-stream failure from "+c.model, func(t *testing.T) {
			chunks, err := geminiStream(t, googleClient(t, env, env.Key), c.model, genai.Text("Trigger a midstream error."), nil)
			if len(chunks) == 0 {
				t.Errorf("no chunk before the failure")
			}
			checkStreamError(t, err, c.code, c.status)
		})
	}
	t.Run("429 from quota", func(t *testing.T) {
		acct, err := env.Node.Store.CreateAccount("burst@example.com", "burst3")
		if err != nil {
			t.Fatal(err)
		}
		env.Account = acct
		client := googleClient(t, env, env.NewKey(persistence.KeySpec{Name: "burst"}))
		for range 3 {
			if _, err := client.Models.GenerateContent(ctx(t), "chat", ask, nil); err != nil {
				t.Fatal(err)
			}
		}
		_, err = client.Models.GenerateContent(ctx(t), "chat", ask, nil)
		apiErr := checkGoogleError(t, err, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED")
		retry := false
		for _, d := range apiErr.Details {
			retry = retry || d["@type"] == "type.googleapis.com/google.rpc.RetryInfo" && strings.HasSuffix(d["retryDelay"].(string), "s")
		}
		if !retry {
			t.Errorf("no RetryInfo in %v", apiErr.Details)
		}
	})
}

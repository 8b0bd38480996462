package sdktest

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// errorCase is one refused request: which key and model, and what the client must see.
type errorCase struct {
	name   string
	key    string
	model  string
	status int
	code   string // the OpenAI-shape error code
	atype  string // the Anthropic error type
}

// errorCases are the refusals every endpoint renders in its client's format.
func errorCases(t *testing.T, env *nodetest.Env) []errorCase {
	revoked := env.NewKey(persistence.KeySpec{Name: "revoked"})
	k, err := env.Node.Store.LookupKey(revoked)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Node.Store.RevokeKey(k.ID); err != nil {
		t.Fatal(err)
	}
	return []errorCase{
		{"unknown_model", env.Key, "no-such-model", http.StatusNotFound, "model_not_found", "not_found_error"},
		{"unknown_key", "sk-user-" + strings.Repeat("x", 40), "chat", http.StatusUnauthorized, "invalid_api_key", "authentication_error"},
		{"malformed_key", "not-a-gateway-key", "chat", http.StatusUnauthorized, "invalid_api_key", "authentication_error"},
		{"revoked_key", revoked, "chat", http.StatusUnauthorized, "invalid_api_key", "authentication_error"},
		{"embedding_model", env.Key, "embed", http.StatusBadRequest, "model_not_supported_on_endpoint", "invalid_request_error"},
	}
}

// checkOpenAIError asserts err is the SDK's *openai.Error with the case's status and code.
func checkOpenAIError(t *testing.T, err error, c errorCase) {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("error = %v (%T), want *openai.Error", err, err)
	}
	if apiErr.StatusCode != c.status {
		t.Errorf("status = %d, want %d; %s", apiErr.StatusCode, c.status, apiErr.RawJSON())
	}
	if apiErr.Code != c.code {
		t.Errorf("code = %q, want %q; %s", apiErr.Code, c.code, apiErr.RawJSON())
	}
	if apiErr.Message == "" {
		t.Errorf("empty error message; %s", apiErr.RawJSON())
	}
}

// TestErrorsOpenAISDK: refusals on /v1/chat/completions and /v1/responses reach openai-go
// as *openai.Error, whole and streamed.
func TestErrorsOpenAISDK(t *testing.T) {
	env := startEnv(t)
	for _, c := range errorCases(t, env) {
		t.Run(c.name, func(t *testing.T) {
			client := openaiClient(env, c.key)
			params := openai.ChatCompletionNewParams{
				Model:    c.model,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Reply with 4 words.")},
			}
			t.Run("chat", func(t *testing.T) {
				_, err := client.Chat.Completions.New(ctx(t), params)
				checkOpenAIError(t, err, c)
			})
			t.Run("chat_stream", func(t *testing.T) {
				stream := client.Chat.Completions.NewStreaming(ctx(t), params)
				defer stream.Close()
				if stream.Next() {
					t.Fatalf("got a chunk %s, want the request refused", stream.Current().RawJSON())
				}
				checkOpenAIError(t, stream.Err(), c)
			})
			t.Run("responses", func(t *testing.T) {
				requireResponses(t, env)
				_, err := client.Responses.New(ctx(t), responses.ResponseNewParams{
					Model: c.model,
					Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Reply with 4 words.")},
				})
				checkOpenAIError(t, err, c)
			})
		})
	}
}

// TestErrorsAnthropicSDK: refusals on /v1/messages and count_tokens reach anthropic-sdk-go as
// *anthropic.Error with the Anthropic error type.
func TestErrorsAnthropicSDK(t *testing.T) {
	env := startEnv(t)
	for _, c := range errorCases(t, env) {
		t.Run(c.name, func(t *testing.T) {
			client := anthropicClient(env, c.key)
			msgs := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Reply with 4 words."))}
			check := func(t *testing.T, err error) {
				t.Helper()
				var apiErr *anthropic.Error
				if !errors.As(err, &apiErr) {
					t.Fatalf("error = %v (%T), want *anthropic.Error", err, err)
				}
				if apiErr.StatusCode != c.status {
					t.Errorf("status = %d, want %d; %s", apiErr.StatusCode, c.status, apiErr.RawJSON())
				}
				if string(apiErr.Type()) != c.atype {
					t.Errorf("error type = %q, want %q; %s", apiErr.Type(), c.atype, apiErr.RawJSON())
				}
			}
			t.Run("messages", func(t *testing.T) {
				_, err := client.Messages.New(ctx(t), anthropic.MessageNewParams{Model: anthropic.Model(c.model), MaxTokens: 64, Messages: msgs})
				check(t, err)
			})
			t.Run("messages_stream", func(t *testing.T) {
				stream := client.Messages.NewStreaming(ctx(t), anthropic.MessageNewParams{Model: anthropic.Model(c.model), MaxTokens: 64, Messages: msgs})
				defer stream.Close()
				if stream.Next() {
					t.Fatalf("got an event %s, want the request refused", stream.Current().RawJSON())
				}
				check(t, stream.Err())
			})
			t.Run("count_tokens", func(t *testing.T) {
				_, err := client.Messages.CountTokens(ctx(t), anthropic.MessageCountTokensParams{Model: anthropic.Model(c.model), Messages: msgs})
				check(t, err)
			})
		})
	}
}

// TestPreviousResponseIDSDK: the gateway keeps no responses, so previous_response_id is
// refused with 400 previous_response_not_found before any upstream is called.
func TestPreviousResponseIDSDK(t *testing.T) {
	env := startEnv(t)
	requireResponses(t, env)
	client := openaiClient(env, env.Key)
	before := env.Sim.Calls("a") + env.Sim.Calls("b")
	_, err := client.Responses.New(ctx(t), responses.ResponseNewParams{
		Model:              "chat",
		PreviousResponseID: openai.String("resp_123"),
		Input:              responses.ResponseNewParamsInputUnion{OfString: openai.String("And then? Reply with 4 words.")},
	})
	checkOpenAIError(t, err, errorCase{status: http.StatusBadRequest, code: "previous_response_not_found"})
	if n := env.Sim.Calls("a") + env.Sim.Calls("b") - before; n != 0 {
		t.Errorf("the upstream was called %d times for a refused request", n)
	}
}

// TestAnthropicSDKWithV1InItsBaseURL is the doubled-version mistake as an Anthropic SDK user
// makes it (the base URL with /v1; the SDK adds its own): the SDK's error tells them to drop it.
func TestAnthropicSDKWithV1InItsBaseURL(t *testing.T) {
	env := startEnv(t)
	base := env.Node.URL
	client := anthropic.NewClient(aoption.WithBaseURL(base+"/v1"), aoption.WithAPIKey(env.Key), aoption.WithMaxRetries(0), aoption.WithHTTPClient(env.Client))
	_, err := client.Messages.New(ctx(t), anthropic.MessageNewParams{Model: "chat", MaxTokens: 8,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || !strings.Contains(err.Error(), "drop /v1 from the base URL (use "+base+")") {
		t.Fatalf("the SDK's error does not tell the user what to fix: %v", err)
	}
}

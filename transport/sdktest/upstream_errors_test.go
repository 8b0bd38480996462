package sdktest

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// TestUpstreamErrorsSDK: an upstream that refuses every call reaches each SDK as that SDK's
// API error, converted to the client's format: a 400 passes through as 400
// invalid_request_error; 500s on every route become 502; 429s become 529 overloaded_error
// (503 for Responses clients: that API has no 529).
func TestUpstreamErrorsSDK(t *testing.T) {
	// No cooldowns, so each case sees every route fail by itself.
	env := nodetest.Start(t, nodetest.CloudCatalog, nodetest.Options{Health: routehealth.Policy{
		MaxFails: 1 << 30, BaseCooldown: time.Nanosecond, MaxCooldown: time.Nanosecond, RateLimited: time.Nanosecond, Now: time.Now}})
	hasResponses := servesResponses(t, env)
	oai := openaiClient(env, env.Key)
	ant := anthropicClient(env, env.Key)

	cases := []struct {
		name     string
		upstream int    // what every route of the model answers
		status   int    // what the client gets
		atype    string // its Anthropic error type
	}{
		{"bad_request", http.StatusBadRequest, http.StatusBadRequest, "invalid_request_error"},
		{"server_error", http.StatusInternalServerError, http.StatusBadGateway, "api_error"},
		{"rate_limited", http.StatusTooManyRequests, 529, "overloaded_error"},
	}
	forEachModel(t, env, func(t *testing.T, m model) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				for _, r := range m.Routes {
					env.Sim.SetBehavior(r, simulator.Behavior{FailStatus: c.upstream})
				}
				defer func() {
					for _, r := range m.Routes {
						env.Sim.SetBehavior(r, simulator.Behavior{})
					}
				}()
				checkOAI := func(t *testing.T, err error, status int) {
					t.Helper()
					var e *openai.Error
					if !errors.As(err, &e) {
						t.Fatalf("error = %v (%T), want *openai.Error", err, err)
					}
					if e.StatusCode != status || e.Message == "" {
						t.Errorf("status %d message %q, want %d with a message; %s", e.StatusCode, e.Message, status, e.RawJSON())
					}
				}
				checkAnt := func(t *testing.T, err error) {
					t.Helper()
					var e *anthropic.Error
					if !errors.As(err, &e) {
						t.Fatalf("error = %v (%T), want *anthropic.Error", err, err)
					}
					if e.StatusCode != c.status || string(e.Type()) != c.atype {
						t.Errorf("status %d type %q, want %d %s; %s", e.StatusCode, e.Type(), c.status, c.atype, e.RawJSON())
					}
				}
				chatParams := openai.ChatCompletionNewParams{Model: m.ID,
					Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Reply with 4 words.")}}
				msgParams := anthropic.MessageNewParams{Model: anthropic.Model(m.ID), MaxTokens: 64,
					Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Reply with 4 words."))}}

				t.Run("chat", func(t *testing.T) {
					_, err := oai.Chat.Completions.New(ctx(t), chatParams)
					checkOAI(t, err, c.status)
				})
				t.Run("chat_stream", func(t *testing.T) {
					s := oai.Chat.Completions.NewStreaming(ctx(t), chatParams)
					defer s.Close()
					for s.Next() {
						t.Fatalf("got a chunk %s from a failing upstream", s.Current().RawJSON())
					}
					checkOAI(t, s.Err(), c.status)
				})
				t.Run("messages", func(t *testing.T) {
					_, err := ant.Messages.New(ctx(t), msgParams)
					checkAnt(t, err)
				})
				t.Run("messages_stream", func(t *testing.T) {
					s := ant.Messages.NewStreaming(ctx(t), msgParams)
					defer s.Close()
					for s.Next() {
						t.Fatalf("got an event %s from a failing upstream", s.Current().RawJSON())
					}
					checkAnt(t, s.Err())
				})
				t.Run("responses", func(t *testing.T) {
					if !hasResponses {
						t.Fatal("the gateway does not serve /v1/responses")
					}
					_, err := oai.Responses.New(ctx(t), responses.ResponseNewParams{Model: m.ID,
						Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Reply with 4 words.")}})
					status := c.status
					if status == 529 {
						status = http.StatusServiceUnavailable
					}
					checkOAI(t, err, status)
				})
			})
		}
	})
}

package sdktest

import (
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// TestAliasSDK: a model called by an alias is named by that alias in every answer, whole
// and streamed, whichever client format asked.
func TestAliasSDK(t *testing.T) {
	env := startEnv(t)
	oai := openaiClient(env, env.Key)
	ant := anthropicClient(env, env.Key)
	const alias = "chat-latest"
	m := model{ID: alias, Upstreams: []string{"up-a", "up-b"}}

	t.Run("chat", func(t *testing.T) {
		p := openai.ChatCompletionNewParams{Model: alias, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Reply with 4 words.")}}
		c, err := oai.Chat.Completions.New(ctx(t), p)
		if err != nil {
			t.Fatal(err)
		}
		if c.Model != alias {
			t.Errorf("model = %q, want %q", c.Model, alias)
		}
		checkReply(t, m, c.Choices[0].Message.Content, 4)
		s := oai.Chat.Completions.NewStreaming(ctx(t), p)
		defer s.Close()
		for s.Next() {
			if got := s.Current().Model; got != alias {
				t.Errorf("chunk model = %q, want %q", got, alias)
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("messages", func(t *testing.T) {
		p := anthropic.MessageNewParams{Model: alias, MaxTokens: 64,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Reply with 4 words."))}}
		msg, err := ant.Messages.New(ctx(t), p)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Model != alias {
			t.Errorf("model = %q, want %q", msg.Model, alias)
		}
		checkReply(t, m, textOf(t, msg), 4)
		smsg, _, err := accumulate(t, ant, p)
		if err != nil {
			t.Fatal(err)
		}
		if smsg.Model != alias {
			t.Errorf("streamed model = %q, want %q", smsg.Model, alias)
		}
	})
	t.Run("responses", func(t *testing.T) {
		requireResponses(t, env)
		p := responses.ResponseNewParams{Model: alias, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Reply with 4 words.")}}
		r, err := oai.Responses.New(ctx(t), p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Model != alias {
			t.Errorf("model = %q, want %q", r.Model, alias)
		}
		checkReply(t, m, r.OutputText(), 4)
		s := streamResponse(t, oai, p)
		if s.err != nil || s.completed == nil {
			t.Fatalf("stream error %v, events %q", s.err, s.types)
		}
		if s.completed.Model != alias {
			t.Errorf("streamed model = %q, want %q", s.completed.Model, alias)
		}
	})
}

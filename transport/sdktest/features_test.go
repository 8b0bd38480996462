package sdktest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// toolControl is one tool_choice setting and the calls it must produce for the prompt
// "Call both tools in parallel please." with both tools offered.
type toolControl struct {
	name  string
	calls []wantCall // nil: a text answer
}

var toolControls = []toolControl{
	{"forced_tool", []wantCall{wantCalls[1]}},  // get_time forced
	{"no_parallel", []wantCall{wantCalls[0]}},  // parallel calls disabled: the first tool only
	{"tool_choice_none", nil},                  // tools offered but not to be called
	{"no_argument_tool", []wantCall{pingCall}}, // a tool without parameters
}

// pingCall is the call of a tool that takes no parameters.
var pingCall = wantCall{"ping", `{}`}

// TestToolControlsSDK: tool_choice (forced, none), disabled parallel calls and a tool without
// parameters, through each client format, against every upstream format.
func TestToolControlsSDK(t *testing.T) {
	env := startEnv(t)
	oai := openaiClient(env, env.Key)
	ant := anthropicClient(env, env.Key)
	hasResponses := servesResponses(t, env)

	forEachModel(t, env, func(t *testing.T, m model) {
		for _, tc := range toolControls {
			t.Run(tc.name, func(t *testing.T) {
				checkCalls := func(t *testing.T, names, args []string, dropped string) {
					t.Helper()
					if tc.name == "no_parallel" && (m.Format == catalog.FormatGemini || m.Format == catalog.FormatConverse) && len(names) == 2 {
						// Gemini and Converse have no switch for parallel calls: the gateway cannot pass it on.
						if !strings.Contains(dropped, "parallel") {
							t.Errorf("got both calls from gemini and X-Modelgate-Dropped %q does not report the parallel setting", dropped)
						}
						return
					}
					if len(names) != len(tc.calls) {
						t.Fatalf("got calls %q %q, want %v", names, args, tc.calls)
					}
					for i, w := range tc.calls {
						if names[i] != w.name {
							t.Errorf("call %d = %q, want %q", i, names[i], w.name)
						}
						checkArgs(t, names[i], args[i], w.args)
					}
				}

				t.Run("chat", func(t *testing.T) {
					p := openai.ChatCompletionNewParams{Model: m.ID,
						Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(parallelPrompt + " Then reply with 4 words.")},
						Tools:    chatTools()}
					switch tc.name {
					case "forced_tool":
						p.ToolChoice = openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_time"})
					case "no_parallel":
						p.ParallelToolCalls = openai.Bool(false)
					case "tool_choice_none":
						p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}
					case "no_argument_tool":
						p.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "ping"})}
					}
					var resp *http.Response
					c, err := oai.Chat.Completions.New(ctx(t), p, option.WithResponseInto(&resp))
					if err != nil {
						t.Fatal(err)
					}
					msg := c.Choices[0].Message
					var names, args []string
					for _, call := range msg.ToolCalls {
						names, args = append(names, call.Function.Name), append(args, call.Function.Arguments)
					}
					checkCalls(t, names, args, resp.Header.Get("X-Modelgate-Dropped"))
					switch fr := c.Choices[0].FinishReason; {
					case tc.calls == nil:
						checkReply(t, m, msg.Content, 4)
						if fr != "stop" {
							t.Errorf("finish_reason = %q, want stop", fr)
						}
					case fr != "tool_calls" && !(fr == "stop" && tc.name == "forced_tool"): // OpenAI says stop for a forced call
						t.Errorf("finish_reason = %q, want tool_calls", fr)
					}
				})

				t.Run("messages", func(t *testing.T) {
					p := anthropic.MessageNewParams{Model: anthropic.Model(m.ID), MaxTokens: 256,
						Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(parallelPrompt + " Then reply with 4 words."))},
						Tools:    messagesTools()}
					switch tc.name {
					case "forced_tool":
						p.ToolChoice = anthropic.ToolChoiceParamOfTool("get_time")
					case "no_parallel":
						p.ToolChoice = anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{DisableParallelToolUse: anthropic.Bool(true)}}
					case "tool_choice_none":
						none := anthropic.NewToolChoiceNoneParam()
						p.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &none}
					case "no_argument_tool":
						p.Tools = []anthropic.ToolUnionParam{anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{Properties: map[string]any{}}, "ping")}
					}
					var resp *http.Response
					msg, err := ant.Messages.New(ctx(t), p, aoption.WithResponseInto(&resp))
					if err != nil {
						t.Fatal(err)
					}
					var names, args []string
					for _, b := range msg.Content {
						if b.Type == "tool_use" {
							names, args = append(names, b.Name), append(args, compact(b.Input))
						}
					}
					checkCalls(t, names, args, resp.Header.Get("X-Modelgate-Dropped"))
					if tc.calls == nil {
						checkReply(t, m, textOf(t, msg), 4)
						if msg.StopReason != anthropic.StopReasonEndTurn {
							t.Errorf("stop_reason = %q, want end_turn", msg.StopReason)
						}
					} else if msg.StopReason != anthropic.StopReasonToolUse {
						t.Errorf("stop_reason = %q, want tool_use", msg.StopReason)
					}
				})

				t.Run("responses", func(t *testing.T) {
					if !hasResponses {
						t.Fatal("the gateway does not serve /v1/responses")
					}
					p := responses.ResponseNewParams{Model: m.ID,
						Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(parallelPrompt + " Then reply with 4 words.")},
						Tools: responsesTools()}
					switch tc.name {
					case "forced_tool":
						p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfFunctionTool: &responses.ToolChoiceFunctionParam{Name: "get_time"}}
					case "no_parallel":
						p.ParallelToolCalls = openai.Bool(false)
					case "tool_choice_none":
						p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsNone)}
					case "no_argument_tool":
						p.Tools = []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "ping", Strict: openai.Bool(false)}}}
					}
					var resp *http.Response
					r, err := oai.Responses.New(ctx(t), p, option.WithResponseInto(&resp))
					if err != nil {
						t.Fatal(err)
					}
					var names, args []string
					for _, it := range r.Output {
						if it.Type == "function_call" {
							names, args = append(names, it.Name), append(args, it.Arguments.OfString)
						}
					}
					checkCalls(t, names, args, resp.Header.Get("X-Modelgate-Dropped"))
					if tc.calls == nil {
						checkReply(t, m, r.OutputText(), 4)
					}
				})
			})
		}
	})
}

// compact is raw JSON without insignificant whitespace.
func compact(raw []byte) string {
	var b strings.Builder
	for _, r := range string(raw) { // tool inputs here hold no strings with spaces
		if r != ' ' && r != '\n' && r != '\t' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// tinyPNG is a 1×1 PNG.
const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// TestInputsSDK: multi-turn conversations and image inputs through each client format,
// against every upstream format; the simulator counts every word the model reads.
func TestInputsSDK(t *testing.T) {
	env := startEnv(t)
	oai := openaiClient(env, env.Key)
	ant := anthropicClient(env, env.Key)
	hasResponses := servesResponses(t, env)

	// Three turns: 4 + 5 + 5 words.
	const turn1, turn2, turn3 = "Hello there, my friend.", "Hello to you as well.", "Now reply with 4 words."
	const turnWords = 4 + 5 + 5
	// Text beside an image: the image carries no words.
	const imageText = "Describe this image and reply with 4 words."

	forEachModel(t, env, func(t *testing.T, m model) {
		t.Run("multi_turn/chat", func(t *testing.T) {
			c, err := oai.Chat.Completions.New(ctx(t), openai.ChatCompletionNewParams{Model: m.ID,
				Messages: []openai.ChatCompletionMessageParamUnion{
					openai.UserMessage(turn1), openai.AssistantMessage(turn2), openai.UserMessage(turn3)}})
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, m, c.Choices[0].Message.Content, 4)
			if c.Usage.PromptTokens != turnWords {
				t.Errorf("prompt_tokens = %d, want %d", c.Usage.PromptTokens, turnWords)
			}
		})
		t.Run("multi_turn/messages", func(t *testing.T) {
			msg, err := ant.Messages.New(ctx(t), anthropic.MessageNewParams{Model: anthropic.Model(m.ID), MaxTokens: 64,
				Messages: []anthropic.MessageParam{
					anthropic.NewUserMessage(anthropic.NewTextBlock(turn1)),
					anthropic.NewAssistantMessage(anthropic.NewTextBlock(turn2)),
					anthropic.NewUserMessage(anthropic.NewTextBlock(turn3))}})
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, m, textOf(t, msg), 4)
			if msg.Usage.InputTokens != turnWords {
				t.Errorf("input_tokens = %d, want %d", msg.Usage.InputTokens, turnWords)
			}
		})
		t.Run("multi_turn/responses", func(t *testing.T) {
			if !hasResponses {
				t.Fatal("the gateway does not serve /v1/responses")
			}
			r, err := oai.Responses.New(ctx(t), responses.ResponseNewParams{Model: m.ID,
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
					responses.ResponseInputItemParamOfMessage(turn1, responses.EasyInputMessageRoleUser),
					responses.ResponseInputItemParamOfMessage(turn2, responses.EasyInputMessageRoleAssistant),
					responses.ResponseInputItemParamOfMessage(turn3, responses.EasyInputMessageRoleUser)}}})
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, m, r.OutputText(), 4)
			if r.Usage.InputTokens != turnWords {
				t.Errorf("input_tokens = %d, want %d", r.Usage.InputTokens, turnWords)
			}
		})

		t.Run("image/chat", func(t *testing.T) {
			c, err := oai.Chat.Completions.New(ctx(t), openai.ChatCompletionNewParams{Model: m.ID,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
					openai.TextContentPart(imageText),
					openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64," + tinyPNG}),
				})}})
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, m, c.Choices[0].Message.Content, 4)
			if want := int64(len(strings.Fields(imageText))); c.Usage.PromptTokens != want {
				t.Errorf("prompt_tokens = %d, want %d", c.Usage.PromptTokens, want)
			}
		})
		t.Run("image/messages", func(t *testing.T) {
			msg, err := ant.Messages.New(ctx(t), anthropic.MessageNewParams{Model: anthropic.Model(m.ID), MaxTokens: 64,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(
					anthropic.NewImageBlockBase64("image/png", tinyPNG), anthropic.NewTextBlock(imageText))}})
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, m, textOf(t, msg), 4)
			if want := int64(len(strings.Fields(imageText))); msg.Usage.InputTokens != want {
				t.Errorf("input_tokens = %d, want %d", msg.Usage.InputTokens, want)
			}
		})
		t.Run("image/responses", func(t *testing.T) {
			if !hasResponses {
				t.Fatal("the gateway does not serve /v1/responses")
			}
			r, err := oai.Responses.New(ctx(t), responses.ResponseNewParams{Model: m.ID,
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
					responses.ResponseInputItemParamOfInputMessage(responses.ResponseInputMessageContentListParam{
						responses.ResponseInputContentParamOfInputText(imageText),
						{OfInputImage: &responses.ResponseInputImageParam{Detail: responses.ResponseInputImageDetailAuto,
							ImageURL: openai.String("data:image/png;base64," + tinyPNG)}},
					}, "user")}}})
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, m, r.OutputText(), 4)
			if want := int64(len(strings.Fields(imageText))); r.Usage.InputTokens != want {
				t.Errorf("input_tokens = %d, want %d", r.Usage.InputTokens, want)
			}
		})
	})
}

package conversion

import "github.com/modelgate/modelgate/codec/reasoning"

// testCase is one directory of testdata/conversion and the catalog model it is sent to.
type testCase struct {
	name string
	// model is what the client's model resolves to.
	model model
	// noUsageChunk leaves stream_options.include_usage off in the streamed chat request, so the
	// chat client must get no usage chunk.
	noUsageChunk bool
	// streamOnly: the case is about a stream (a failure after the first bytes); its answers are
	// SSE only.
	streamOnly bool
}

// model is what the gateway reads of a catalog model here: its reasoning decides what
// thinking the upstream request carries, its max_output_tokens the messages default.
type model struct {
	reasoning       reasoning.Model
	maxOutputTokens int
}

var (
	plainModel  = model{reasoning: reasoning.Model{Class: reasoning.ClassNone}}
	effortModel = model{reasoning: reasoning.Model{Class: reasoning.ClassEffort, Efforts: []string{"low", "high"}}}
	toggleModel = model{reasoning: reasoning.Model{Class: reasoning.ClassToggle}}
	// adaptiveModel takes only adaptive thinking sized by an effort (Claude 4.7 and later).
	adaptiveModel = model{reasoning: reasoning.Model{Class: reasoning.ClassEffort,
		Efforts: []string{"low", "medium", "high", "max"}, Adaptive: true}}
	// inlineModel always thinks and writes its reasoning as <think>…</think> at the start of the
	// text, which the gateway moves out of the content.
	inlineModel = model{reasoning: reasoning.Model{Class: reasoning.ClassAlwaysOn, Inline: true}}
)

var cases = []testCase{
	{name: "text", model: plainModel, noUsageChunk: true},
	{name: "system_mid", model: plainModel},
	{name: "system_mid_messages", model: plainModel},
	{name: "tools_parallel", model: plainModel},
	{name: "tool_results", model: plainModel},
	{name: "tool_choice_required", model: plainModel},
	{name: "tool_choice_named", model: plainModel},
	{name: "tool_choice_none", model: plainModel},
	{name: "images", model: plainModel},
	{name: "empty_args", model: plainModel},
	{name: "stop_length", model: plainModel},
	{name: "reasoning_effort", model: effortModel},
	{name: "reasoning_toggle", model: toggleModel},
	{name: "adaptive_effort", model: adaptiveModel},
	{name: "usage_cache", model: plainModel},
	{name: "upstream_error_midstream", model: plainModel, streamOnly: true},
	{name: "unknown_fields", model: plainModel},
	{name: "inline_think", model: inlineModel},
	{name: "reasoning_history", model: effortModel},
	{name: "text_signature", model: plainModel},
}

package gemini

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/check/checktest"
)

// TestGeminiChecksRangesEnumsAndTools: generationConfig out of the Gemini API's ranges,
// an unknown role, a bad or repeated function name and an allowed name that no
// declaration has are a 400 INVALID_ARGUMENT naming the field in a BadRequest field
// violation, in Google's envelope.
func TestGeminiChecksRangesEnumsAndTools(t *testing.T) {
	const turn = `"contents":[{"role":"user","parts":[{"text":"hi"}]}]`
	config := func(members string) string { return `{` + turn + `,"generationConfig":{` + members + `}}` }
	decl := `{"functionDeclarations":[{"name":"get_weather"}]}`
	cases := []checktest.Refusal{
		{"unknown role", `{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"wizard","parts":[{"text":"b"}]}]}`,
			"contents[1].role", `contents[1].role "wizard" is not valid: use user or model`},
		{"no contents", `{"contents":[]}`, "contents", "contents is not specified"},
		{"temperature of 99", config(`"temperature":99`), "generationConfig.temperature", "generationConfig.temperature must be a number from 0 to 2; got 99"},
		{"topP above 1", config(`"topP":1.2`), "generationConfig.topP", "generationConfig.topP must be a number from 0 to 1; got 1.2"},
		{"topK of 0", config(`"topK":0`), "generationConfig.topK", "generationConfig.topK must be a number of at least 1; got 0"},
		{"candidateCount of 9", config(`"candidateCount":9`), "generationConfig.candidateCount", "generationConfig.candidateCount must be an integer from 1 to 8; got 9"},
		{"maxOutputTokens of 0", config(`"maxOutputTokens":0`), "generationConfig.maxOutputTokens", "generationConfig.maxOutputTokens must be an integer of at least 1; got 0"},
		{"presencePenalty below -2", config(`"presencePenalty":-2.5`), "generationConfig.presencePenalty", "generationConfig.presencePenalty must be a number from -2 to 2; got -2.5"},
		{"frequencyPenalty above 2", config(`"frequencyPenalty":3`), "generationConfig.frequencyPenalty", "generationConfig.frequencyPenalty must be a number from -2 to 2; got 3"},
		{"logprobs above 20", config(`"logprobs":21`), "generationConfig.logprobs", "generationConfig.logprobs must be an integer from 0 to 20; got 21"},
		{"six stop sequences", config(`"stopSequences":["a","b","c","d","e","f"]`), "generationConfig.stopSequences", "generationConfig.stopSequences takes at most 5 sequences; got 6"},
		{"stopSequences a number", config(`"stopSequences":5`), "generationConfig.stopSequences", "generationConfig.stopSequences must be an array"},
		{"allowed name without a declaration", `{` + turn + `,"tools":[` + decl + `],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["get_time"]}}}`,
			"toolConfig.functionCallingConfig.allowedFunctionNames[0]", `toolConfig.functionCallingConfig.allowedFunctionNames[0] names the tool "get_time", which is not one of the tools offered (get_weather)`},
		{"duplicate function names", `{` + turn + `,"tools":[` + decl + `,` + decl + `]}`,
			"tools[1].functionDeclarations[0].name", `tools[1].functionDeclarations[0].name "get_weather" is already the name of tools[0].functionDeclarations[0].name: tool names must be unique`},
		{"function name with a space", `{` + turn + `,"tools":[{"functionDeclarations":[{"name":"get weather"}]}]}`,
			"tools[0].functionDeclarations[0].name", `tools[0].functionDeclarations[0].name "get weather" must be 1 to 128 characters of a-z, A-Z, 0-9, '_' and '-' (and '.', ':')`},
	}
	checkRefusals(t, cases)
}

// TestGeminiAcceptsTheBounds: the ends of each range, a float topK as SDKs send it, and
// names with dots and colons pass.
func TestGeminiAcceptsTheBounds(t *testing.T) {
	for _, extra := range []string{
		`"generationConfig":{"temperature":0,"topP":1,"topK":1,"candidateCount":8,"maxOutputTokens":1,"presencePenalty":-2,"frequencyPenalty":2,"logprobs":20}`,
		`"generationConfig":{"temperature":2,"topP":0,"topK":40.0,"logprobs":0,"stopSequences":["a","b","c","d","e"]}`,
		`"tools":[{"functionDeclarations":[{"name":"mcp.fs:read_file-2"},{"name":"` + strings.Repeat("x", 128) + `"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["mcp.fs:read_file-2"]}}`,
	} {
		body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],` + extra + `}`
		if _, err := Format.DecodeRequest([]byte(body)); err != nil {
			t.Errorf("%s: %v", extra, err)
		}
	}
}

// checkRefusals checks each case's 400 INVALID_ARGUMENT in Google's envelope, the param a
// BadRequest field violation.
func checkRefusals(t *testing.T, cases []checktest.Refusal) {
	t.Helper()
	envelope := func(param, message string) string {
		msg := checktest.Quoted(message)
		return `{"error":{"code":400,"message":` + msg + `,"status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"description":` + msg + `,"field":"` + param + `"}]}]}}`
	}
	checktest.Refuses(t, cases, Format.EncodeError, envelope, func(b []byte) error { _, err := Format.DecodeRequest(b); return err })
}

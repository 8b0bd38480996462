package messages

import (
	"encoding/json"
	"strconv"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/claude"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonpatch"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

// PassBody is a messages client's body for a messages route: as the client sent it, with the
// route's model id, the thinking the model's reasoning class resolved (t, said as
// EncodeRequest says it: thinking, output_config.effort, max_tokens above a budget) and, when
// maxTokens > 0, that output cap. The client's thinking.display survives a change of type.
// Only those members are rewritten (codec/jsonpatch); every other byte is the client's.
func PassBody(body []byte, upstreamModel string, t ir.Thinking, maxTokens int) ([]byte, error) {
	obj, err := jsonpatch.Scan(body)
	if err != nil {
		return nil, bad("", "the request body must be a JSON object")
	}
	ops := make([]jsonpatch.Op, 0, 4)
	ops = append(ops, jsonpatch.Set("model", marshal(upstreamModel)))
	plan := claude.PlanThinking(t)
	if plan.On() {
		th := map[string]any{}
		for k, v := range plan.Thinking {
			th[k] = v
		}
		if given := obj.Value("thinking"); len(given) > 0 && given[0] == '{' {
			if d, ok := jsonscan.Member(given, "display"); ok && !isNull(given[d.Start:d.End]) {
				th["display"] = json.RawMessage(given[d.Start:d.End])
			}
		}
		ops = append(ops, jsonpatch.Set("thinking", marshal(th)))
	} else {
		ops = append(ops, jsonpatch.Remove("thinking"))
	}
	var n int
	json.Unmarshal(obj.Value("max_tokens"), &n)
	if maxTokens > 0 {
		n = maxTokens
	}
	ops = append(ops, jsonpatch.Set("max_tokens", strconv.AppendInt(nil, int64(plan.MaxTokens(n)), 10)))

	var effort []jsonpatch.Op
	if plan.Effort != "" {
		effort = []jsonpatch.Op{jsonpatch.Set("effort", marshal(plan.Effort))}
	}
	return obj.Apply(append(ops, jsonpatch.Sub(obj, "output_config", effort, "effort"))...), nil
}

// UsageOf normalizes a usage object (a whole answer's usage member), decoding nothing else: a
// same-format relay bills from it.
func UsageOf(raw []byte) (codec.Usage, bool) {
	return codec.UsageFrom(raw, (*wireUsage).normalize)
}

// RelayWhole implements ir.WholeRelayer: the top-level model and usage of a whole message.
func (format) RelayWhole(body []byte, model string) ([]byte, codec.Usage) {
	out, raw := jsonpatch.Answer(body, "model", marshal(model), "usage")
	u, _ := UsageOf(raw)
	return out, u
}

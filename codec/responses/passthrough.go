package responses

import (
	"encoding/json"
	"strconv"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonpatch"
)

// PassBody is a responses client's body for a responses route: as the client sent it, with
// the route's model id, reasoning.effort and reasoning.summary as the model's reasoning class
// resolved them (t; the client's other reasoning members stay) and, when maxTokens > 0, that
// output cap. Unlike a converted request it asks for no summary the client did not ask for.
// Only those members are rewritten (codec/jsonpatch); every other byte is the client's.
func PassBody(body []byte, upstreamModel string, t ir.Thinking, maxTokens int) ([]byte, error) {
	obj, err := jsonpatch.Scan(body)
	if err != nil {
		return nil, invalid("", "the request body must be a JSON object")
	}
	m, _ := json.Marshal(upstreamModel)
	ops := make([]jsonpatch.Op, 0, 3)
	ops = append(ops, jsonpatch.Set("model", m))
	var reasoning []jsonpatch.Op
	if e := nativeEffort(t); e != "" {
		b, _ := json.Marshal(e)
		reasoning = append(reasoning, jsonpatch.Set("effort", b))
	}
	if t.Summary != "" {
		b, _ := json.Marshal(t.Summary)
		reasoning = append(reasoning, jsonpatch.Set("summary", b))
	}
	ops = append(ops, jsonpatch.Sub(obj, "reasoning", reasoning, "effort", "summary", "generate_summary"))
	if maxTokens > 0 {
		ops = append(ops, jsonpatch.Set("max_output_tokens", strconv.AppendInt(nil, int64(maxTokens), 10)))
	}
	return obj.Apply(ops...), nil
}

// UsageOf normalizes a usage object (a whole answer's usage member, or response.usage of a
// stream's last event), decoding nothing else: a same-format relay bills from it.
func UsageOf(raw []byte) (codec.Usage, bool) {
	return codec.UsageFrom(raw, (*wireUsage).normalize)
}

// RelayWhole implements ir.WholeRelayer: the top-level model and usage of a whole response.
func (format) RelayWhole(body []byte, model string) ([]byte, codec.Usage) {
	m, _ := json.Marshal(model)
	out, raw := jsonpatch.Answer(body, "model", m, "usage")
	u, _ := UsageOf(raw)
	return out, u
}

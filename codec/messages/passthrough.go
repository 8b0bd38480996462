package messages

import (
	"encoding/json"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

// PassBody is a messages client's body for a messages route: as the client sent it, with the
// route's model id, the thinking the model's reasoning class resolved (t, said as
// EncodeRequest says it: thinking, output_config.effort, max_tokens above a budget) and, when
// maxTokens > 0, that output cap. The client's thinking.display survives a change of type.
func PassBody(body []byte, upstreamModel string, t ir.Thinking, maxTokens int) ([]byte, error) {
	fields, err := codec.Fields(body)
	if err != nil {
		return nil, bad("", "%v", err)
	}
	fields["model"] = marshal(upstreamModel)
	plan := planThinking(t)
	if plan.on() {
		th := map[string]any{}
		for k, v := range plan.thinking {
			th[k] = v
		}
		var given struct {
			Display json.RawMessage `json:"display"`
		}
		if json.Unmarshal(fields["thinking"], &given) == nil && !isNull(given.Display) {
			th["display"] = given.Display
		}
		fields["thinking"] = marshal(th)
	} else {
		delete(fields, "thinking")
	}
	var n int
	json.Unmarshal(fields["max_tokens"], &n)
	if maxTokens > 0 {
		n = maxTokens
	}
	fields["max_tokens"] = marshal(plan.maxTokens(n))

	var oc map[string]json.RawMessage
	json.Unmarshal(fields["output_config"], &oc)
	delete(oc, "effort")
	if plan.effort != "" {
		if oc == nil {
			oc = map[string]json.RawMessage{}
		}
		oc["effort"] = marshal(plan.effort)
	}
	if len(oc) > 0 {
		fields["output_config"] = marshal(oc)
	} else {
		delete(fields, "output_config")
	}
	return marshal(fields), nil
}

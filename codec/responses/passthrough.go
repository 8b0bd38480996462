package responses

import (
	"encoding/json"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

// PassBody is a responses client's body for a responses route: as the client sent it, with
// the route's model id, reasoning.effort and reasoning.summary as the model's reasoning class
// resolved them (t; the client's other reasoning members stay) and, when maxTokens > 0, that
// output cap. Unlike a converted request it asks for no summary the client did not ask for.
func PassBody(body []byte, upstreamModel string, t ir.Thinking, maxTokens int) ([]byte, error) {
	fields, err := codec.Fields(body)
	if err != nil {
		return nil, invalid("", "%v", err)
	}
	fields["model"], _ = json.Marshal(upstreamModel)
	var reasoning map[string]json.RawMessage
	json.Unmarshal(fields["reasoning"], &reasoning)
	for _, k := range []string{"effort", "summary", "generate_summary"} {
		delete(reasoning, k)
	}
	if reasoning == nil {
		reasoning = map[string]json.RawMessage{}
	}
	if e := nativeEffort(t); e != "" {
		reasoning["effort"], _ = json.Marshal(e)
	}
	if t.Summary != "" {
		reasoning["summary"], _ = json.Marshal(t.Summary)
	}
	if len(reasoning) > 0 {
		fields["reasoning"], _ = json.Marshal(reasoning)
	} else {
		delete(fields, "reasoning")
	}
	if maxTokens > 0 {
		fields["max_output_tokens"], _ = json.Marshal(maxTokens)
	}
	return codec.Marshal(fields)
}

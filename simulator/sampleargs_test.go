package simulator

import "testing"

func TestSampleArgumentsArePlainest(t *testing.T) {
	cases := []struct {
		name, schema, want string
		props              int
	}{
		{"no schema", ``, `{}`, 0},
		{"no required properties", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{}`, 0},
		{"optional background flag left out", `{"type":"object","required":["command"],"properties":{
			"command":{"type":"string"},"run_in_background":{"type":"boolean"}}}`, `{"command":"sample"}`, 1},
		{"schema order, not required order", `{"type":"object","required":["b","a"],"properties":{"a":{"type":"string"},"b":{"type":"integer"}}}`,
			`{"a":"sample","b":1}`, 2},
		{"boolean false", `{"required":["x"],"properties":{"x":{"type":"boolean"}}}`, `{"x":false}`, 1},
		{"gemini capitals", `{"type":"OBJECT","required":["x","y"],"properties":{"x":{"type":"BOOLEAN"},"y":{"type":"STRING"}}}`,
			`{"x":false,"y":"sample"}`, 2},
		{"integer minimum", `{"required":["n"],"properties":{"n":{"type":"integer","minimum":5,"maximum":9}}}`, `{"n":5}`, 1},
		{"fractional minimum rounds up", `{"required":["n"],"properties":{"n":{"type":"integer","minimum":0.5}}}`, `{"n":1}`, 1},
		{"exclusive minimum", `{"required":["n","x"],"properties":{"n":{"type":"integer","exclusiveMinimum":0},"x":{"type":"number","exclusiveMinimum":2.5}}}`,
			`{"n":1,"x":3.5}`, 2},
		{"draft-4 exclusive minimum", `{"required":["n"],"properties":{"n":{"type":"integer","minimum":3,"exclusiveMinimum":true}}}`, `{"n":4}`, 1},
		{"number without bounds", `{"required":["n"],"properties":{"n":{"type":"number"}}}`, `{"n":1}`, 1},
		{"maximum below one", `{"required":["n"],"properties":{"n":{"type":"number","maximum":0}}}`, `{"n":0}`, 1},
		{"enum first value", `{"required":["m"],"properties":{"m":{"type":"string","enum":["use_default","require_escalated"]}}}`,
			`{"m":"use_default"}`, 1},
		{"const", `{"required":["k"],"properties":{"k":{"const":"fixed"}}}`, `{"k":"fixed"}`, 1},
		{"formats", `{"required":["t","d","e","u","id"],"properties":{"t":{"type":"string","format":"date-time"},
			"d":{"type":"string","format":"date"},"e":{"type":"string","format":"email"},"u":{"type":"string","format":"uri"},
			"id":{"type":"string","format":"uuid"}}}`,
			`{"t":"2026-01-01T00:00:00Z","d":"2026-01-01","e":"sample@example.com","u":"https://example.com/sample","id":"00000000-0000-4000-8000-000000000000"}`, 5},
		{"string lengths", `{"required":["short","long"],"properties":{"short":{"type":"string","maxLength":3},"long":{"type":"string","minLength":8}}}`,
			`{"short":"sam","long":"ssssssss"}`, 2},
		{"array empty unless minItems", `{"required":["a","b"],"properties":{"a":{"type":"array","items":{"type":"string"}},
			"b":{"type":"array","minItems":2,"items":{"type":"integer","minimum":3}}}}`, `{"a":[],"b":[3,3]}`, 2},
		{"nested required object", `{"required":["o"],"properties":{"o":{"type":"object","required":["deep"],"properties":{
			"skip":{"type":"string"},"deep":{"type":"object","required":["flag"],"properties":{"flag":{"type":"boolean"}}}}}}}`,
			`{"o":{"deep":{"flag":false}}}`, 1},
		{"nullable type list", `{"required":["s"],"properties":{"s":{"type":["null","string"]}}}`, `{"s":"sample"}`, 1},
		{"anyOf skips null", `{"required":["s"],"properties":{"s":{"anyOf":[{"type":"null"},{"type":"integer","minimum":2}]}}}`, `{"s":2}`, 1},
		{"local $ref", `{"required":["p"],"properties":{"p":{"$ref":"#/$defs/Point"}},
			"$defs":{"Point":{"type":"object","required":["x"],"properties":{"x":{"type":"number","minimum":0}}}}}`, `{"p":{"x":0}}`, 1},
		{"self reference stops", `{"required":["n"],"properties":{"n":{"$ref":"#"}}}`,
			`{"n":{"n":{"n":{"n":{"n":null}}}}}`, 1},
		{"untyped with properties is an object", `{"required":["o"],"properties":{"o":{"properties":{"a":{"type":"string"}},"required":["a"]}}}`,
			`{"o":{"a":"sample"}}`, 1},
		{"quotes escaped", `{"required":["a\"b"],"properties":{"a\"b":{"type":"string"}}}`, `{"a\"b":"sample"}`, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, props := sampleArguments([]byte(c.schema))
			if got != c.want || props != c.props {
				t.Errorf("got %s (%d properties), want %s (%d)", got, props, c.want, c.props)
			}
		})
	}
}

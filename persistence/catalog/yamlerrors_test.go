package catalog

import (
	"fmt"
	"testing"
)

// TestCatalogErrorsNameTheFieldInTheFilesWords (found by FuzzParse): what the YAML library
// refuses is said like the validator's errors — the file, the line and the field's path, no
// Go types; a float where a whole number belongs is refused, not truncated — and what the
// validator accepts the file can say back: a quota_multiplier of .nan, a time whose UTC
// year has five digits and errors in a random order are gone, and a plan with a burst of 1
// has no throttle by default.
func TestCatalogErrorsNameTheFieldInTheFilesWords(t *testing.T) {
	const model = "models:\n  - {id: m, kind: chat%s, routes: [{id: r, format: chat, base_url: 'http://x'}]}\n"
	cases := []struct{ name, yaml, want string }{
		{"a value of the wrong type", "models:\n  - id: m\n    context_length: [1]\n",
			`f.yaml: line 3: models[0].context_length: must be a whole number, not a list`},
		{"a fraction for a whole number", fmt.Sprintf(model, ", context_length: 1e3") + "plans: [{name: p, burst_rpm: 10.5}]\n",
			"f.yaml: line 2: models[0].context_length: must be a whole number, not \"1e3\"\nf.yaml: line 3: plans[0].burst_rpm: must be a whole number, not \"10.5\""},
		{"a mapping for a string", "models:\n  - id: m\n    pricing: {prompt: {usd: 1}}\n",
			`f.yaml: line 3: models[0].pricing.prompt: must be a string, not a mapping`},
		{"a list for the mapping of a section", "server: [1]\nmodels: []\n",
			`f.yaml: line 1: server: must be a mapping, not a list`},
		{"an unknown section", "modles: []\n",
			`f.yaml: line 1: unknown section "modles" (docs/catalog.md lists the fields)`},
		{"a field given twice", "models:\n  - id: m\n    id: n\n",
			`f.yaml: line 3: models[0]: "id" is given twice (first on line 2)`},
		{"a list as a key", "models:\n  - {[a]: 1}\n",
			`f.yaml: line 2: models[0]: keys must be field names, not a list`},
		{"a file that is a list", "- a\n",
			`f.yaml: line 1: the file must be a mapping of the catalog's sections (server, models, …), not a list`},
		{"a file that is not YAML", "models: [\n",
			`f.yaml: yaml: line 1: did not find expected node content`},
		{"an empty file", "",
			`f.yaml: models: at least one model is required`},
		{"a quota_multiplier that is not a number", fmt.Sprintf(model, ", quota_multiplier: .nan"),
			`f.yaml: model m: quota_multiplier: NaN must be between 1 and 1000`},
		{"a deprecation in the year 10000 UTC", fmt.Sprintf(model, ", deprecated_at: '9999-12-31T23:00:00-02:00'"),
			`f.yaml: model m: deprecated_at: "9999-12-31T23:00:00-02:00" is not an RFC 3339 time such as 2026-12-31T00:00:00Z`},
		{"errors of signals in order", "clients: {signals: {b: [''], a: ['']}}\n" + fmt.Sprintf(model, ""),
			"f.yaml: clients.signals.a: an empty prefix would match every client\nf.yaml: clients.signals.b: an empty prefix would match every client"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(c.yaml))
			if err == nil || err.Error() != c.want {
				t.Fatalf("error = %v\nwant %s", err, c.want)
			}
		})
	}
	c, err := Parse("f.yaml", []byte(fmt.Sprintf(model, "")+"plans: [{name: p, burst_rpm: 1}, {name: q, burst_rpm: 2}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, rpm := range map[string]int64{"p": 0, "q": 1} {
		if p, _ := c.Plan(name); p.Throttle.RPM != rpm {
			t.Errorf("plan %s: throttle rpm %d, want %d", name, p.Throttle.RPM, rpm)
		}
	}
}

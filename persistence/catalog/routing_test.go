package catalog

import (
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec/money"
)

// routingOf is a model's routing fields (tools, fallbacks, route policy, auto) and what an auto
// model chooses by (context, output limit, prices), in one comparable value.
type routingOf struct {
	Tools           bool
	Fallbacks       []string
	RoutePolicy     string
	Auto            *Auto
	ContextLength   int64
	MaxOutputTokens int64
	Pricing         Pricing
	RoutePricing    []*Pricing
}

func routingFields(m *Model) routingOf {
	r := routingOf{Tools: m.Tools, Fallbacks: m.Fallbacks, RoutePolicy: m.RoutePolicy, Auto: m.Auto,
		ContextLength: m.ContextLength, MaxOutputTokens: m.MaxOutputTokens, Pricing: m.Pricing}
	for _, rt := range m.Routes {
		r.RoutePricing = append(r.RoutePricing, rt.Pricing)
	}
	return r
}

func loadRouting(t *testing.T) *Catalog {
	t.Helper()
	c, err := LoadFile("../../testdata/catalog/routing.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func price(prompt, completion string, p, cp money.Amount) Pricing {
	return Pricing{PromptText: prompt, CompletionText: completion, Prompt: p, Completion: cp, CacheRead: p, CacheWrite: p}
}

func TestRoutingFieldsLoadWithTheirDefaults(t *testing.T) {
	c := loadRouting(t)
	noPrice := Pricing{PromptText: "0", CompletionText: "0"}
	withCacheRead := price("0.0000011", "0.0000022", 1_100_000, 2_200_000)
	withCacheRead.CacheRead = 100_000
	cases := []struct {
		model string
		want  routingOf
	}{
		{"auto-coding", routingOf{Tools: true, Pricing: noPrice, ContextLength: 1_000_000, MaxOutputTokens: 65536,
			Auto: &Auto{Policy: AutoCheapest, Candidates: []string{"chat-small", "chat-long", "claude-x"},
				MaxPrice: Pricing{PromptText: "0.00001", CompletionText: "0.00003", Prompt: 10_000_000, Completion: 30_000_000},
				Prefer:   []string{"anthropic"}}}},
		{"auto-short", routingOf{Tools: true, Pricing: noPrice, ContextLength: 100_000, MaxOutputTokens: 65536,
			Auto: &Auto{Policy: AutoOrdered, Candidates: []string{"chat-long"}}}},
		{"chat-small", routingOf{Tools: false, Fallbacks: []string{"chat-long", "claude-x"}, RoutePolicy: RouteLowestLatency,
			ContextLength: 32000, MaxOutputTokens: 4096, Pricing: price("0.000001", "0.000002", 1_000_000, 2_000_000),
			RoutePricing: []*Pricing{new(price("0.0000009", "0.0000018", 900_000, 1_800_000)), &withCacheRead}}},
		{"chat-long", routingOf{Tools: true, Fallbacks: []string{"chat-small"}, RoutePolicy: RouteLowestPrice,
			ContextLength: 1_000_000, MaxOutputTokens: 65536, Pricing: price("0.000002", "0.000008", 2_000_000, 8_000_000),
			RoutePricing: []*Pricing{nil}}},
		{"claude-x", routingOf{Tools: true, RoutePolicy: RouteLeastBusy, ContextLength: 200_000, MaxOutputTokens: 8192,
			Pricing: price("0.000003", "0.000015", 3_000_000, 15_000_000), RoutePricing: []*Pricing{nil}}},
		{"embed-x", routingOf{Tools: false, RoutePolicy: RouteWeighted, Pricing: price("0.00000002", "0", 20_000, 0),
			RoutePricing: []*Pricing{new(price("0.00000001", "0", 10_000, 0))}}},
	}
	for _, tc := range cases {
		m, _ := c.Lookup(tc.model)
		if got := routingFields(m); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.model, got, tc.want)
		}
	}
	if c.Server.MaxRequestModels != 8 {
		t.Errorf("max_request_models = %d, want 8", c.Server.MaxRequestModels)
	}
}

// A file without the routing fields reads as before they existed: chat models take tools,
// routes are weighted, a route costs the model's prices, a request lists up to five models.
func TestRoutingDefaultsOfAnOlderFile(t *testing.T) {
	t.Setenv("CATALOG_TEST_KEY", "secret")
	c, err := LoadFile("../../testdata/catalog/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	chat, _ := c.Lookup("chat-a")
	embed, _ := c.Lookup("embed-a")
	checks := []struct {
		name      string
		got, want any
	}{
		{"max request models", c.Server.MaxRequestModels, DefaultMaxRequestModels},
		{"chat tools", chat.Tools, true},
		{"chat route policy", chat.RoutePolicy, RouteWeighted},
		{"chat fallbacks", len(c.FallbacksOf(chat)), 0},
		{"chat is no auto model", chat.IsAuto(), false},
		{"route pricing absent", chat.Routes[0].Pricing == nil, true},
		{"route cost is the model's", chat.Routes[0].Cost(chat), chat.Pricing},
		{"embedding tools", embed.Tools, false},
		{"embedding route policy", embed.RoutePolicy, RouteWeighted},
	}
	for _, ck := range checks {
		if !reflect.DeepEqual(ck.got, ck.want) {
			t.Errorf("%s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
}

// What the loader accepted, written back with every value explicit, loads the same.
func TestRoutingFileReloadsEqual(t *testing.T) {
	c := loadRouting(t)
	c2 := reload(t, c)
	if !reflect.DeepEqual(c2.Server, c.Server) {
		t.Errorf("server %+v, want %+v", c2.Server, c.Server)
	}
	for _, m := range c.Models() {
		m2, _ := c2.Lookup(m.ID)
		if got, want := routingFields(m2), routingFields(m); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", m.ID, got, want)
		}
	}
}

func TestCandidatesAndFallbacksResolveInOrder(t *testing.T) {
	c := loadRouting(t)
	ids := func(ms []*Model) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	model := func(name string) *Model { m, _ := c.Lookup(name); return m }
	cases := []struct {
		name string
		got  []*Model
		want []string
	}{
		{"auto candidates, an alias resolved", c.Candidates(model("coder")), []string{"chat-small", "chat-long", "claude-x"}},
		{"a chat model has no candidates", c.Candidates(model("chat-small")), nil},
		{"fallbacks", c.FallbacksOf(model("chat-small")), []string{"chat-long", "claude-x"}},
		{"a cycle back", c.FallbacksOf(model("chat-long")), []string{"chat-small"}},
		{"no fallbacks", c.FallbacksOf(model("claude-x")), nil},
		{"an auto model has no fallbacks", c.FallbacksOf(model("auto-coding")), nil},
	}
	for _, tc := range cases {
		if got := ids(tc.got); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, got, tc.want)
		}
		for _, m := range tc.got {
			if m2, _ := c.Lookup(m.ID); m2 != m {
				t.Errorf("%s: %s is not the catalog's model", tc.name, m.ID)
			}
		}
	}
}

func TestAcceptsImages(t *testing.T) {
	cases := []struct {
		inputs []string
		want   bool
	}{
		{[]string{"text"}, false},
		{[]string{"text", "image"}, true},
		{[]string{"image"}, true},
		{[]string{"text", "audio", "video"}, false},
		{nil, false},
	}
	for _, tc := range cases {
		m := &Model{Architecture: Architecture{InputModalities: tc.inputs}}
		if got := m.AcceptsImages(); got != tc.want {
			t.Errorf("input_modalities %v: AcceptsImages = %v, want %v", tc.inputs, got, tc.want)
		}
	}
}

// Every refusal of the routing fields, exactly: each names the file, the model and the field.
func TestRoutingErrorsNameFileModelAndField(t *testing.T) {
	const base = "models:\n" +
		"  - {id: c1, kind: chat, owned_by: acme, aliases: [c1-latest], routes: [{id: r1, format: chat, base_url: 'http://x'}]}\n" +
		"  - {id: c2, kind: chat, routes: [{id: r2, format: chat, base_url: 'http://x'}]}\n" +
		"  - {id: e1, kind: embedding, routes: [{id: r3, format: chat, base_url: 'http://x'}]}\n" +
		"  - {id: a1, kind: chat, auto: {candidates: [c1]}}\n"
	route := ", routes: [{id: rm, format: chat, base_url: 'http://x'}]"
	chat := func(fields string) string { return base + "  - {id: m, kind: chat, " + fields + route + "}\n" }
	auto := func(fields string) string { return base + "  - {id: m, kind: chat, " + fields + "}\n" }
	other := func(kind, fields string) string {
		return base + "  - {id: m, kind: " + kind + ", " + fields + route + "}\n"
	}
	cases := []struct {
		name, yaml, want string
	}{
		{"max request models 0", "server: {max_request_models: 0}\n" + base, "f.yaml: server.max_request_models: 0 must be between 1 and 32"},
		{"max request models 33", "server: {max_request_models: 33}\n" + base, "f.yaml: server.max_request_models: 33 must be between 1 and 32"},
		{"max request models 2.5", "server: {max_request_models: 2.5}\n" + base, `f.yaml: line 1: server.max_request_models: must be a whole number, not "2.5"`},

		{"auto multiplier 2", auto("quota_multiplier: 2, auto: {candidates: [c1]}"), "f.yaml: model m: quota_multiplier: an auto model counts 1 call; write 1 or leave it out, not 2"},
		{"auto multiplier 0.5", auto("quota_multiplier: 0.5, auto: {candidates: [c1]}"), "f.yaml: model m: quota_multiplier: an auto model counts 1 call; write 1 or leave it out, not 0.5"},
		{"auto with routes", chat("auto: {candidates: [c1]}"), "f.yaml: model m: routes: an auto model has no routes of its own: its candidates' routes serve it"},
		{"auto with pricing", auto("pricing: {prompt: '0.1'}, auto: {candidates: [c1]}"), "f.yaml: model m: pricing: an auto model has no pricing of its own: a call is charged at the rates of the model that served it"},
		{"auto with tools", auto("tools: true, auto: {candidates: [c1]}"), "f.yaml: model m: tools: an auto model takes tools when a candidate does: a request with tools goes to a candidate that takes them"},
		{"auto with fallbacks", auto("fallbacks: [c2], auto: {candidates: [c1]}"), "f.yaml: model m: fallbacks: an auto model has no fallbacks: list the models it may use as candidates"},
		{"auto with route policy", auto("route_policy: weighted, auto: {candidates: [c1]}"), "f.yaml: model m: route_policy: an auto model has no routes to choose among: set route_policy on its candidates"},
		{"auto of kind embedding", base + "  - {id: m, kind: embedding, auto: {candidates: [c1]}}\n", "f.yaml: model m: auto: only a chat model can be an auto model (this one is embedding)"},
		{"auto policy", auto("auto: {policy: random, candidates: [c1]}"), `f.yaml: model m: auto.policy: "random" must be ordered, cheapest or fastest`},
		{"auto without candidates", auto("auto: {policy: ordered}"), "f.yaml: model m: auto.candidates: an auto model needs at least one candidate"},
		{"auto with an empty list", auto("auto: {candidates: []}"), "f.yaml: model m: auto.candidates: an auto model needs at least one candidate"},
		{"auto unknown field", auto("auto: {candidates: [c1], colour: red}"), `f.yaml: line 6: models[4].auto: unknown field "colour" (docs/catalog.md lists the fields)`},
		{"candidate unknown", auto("auto: {candidates: [c1, c9]}"), `f.yaml: model m: auto.candidates: model "c9" is not in the catalog`},
		{"candidate itself", auto("auto: {candidates: [m]}"), `f.yaml: model m: auto.candidates: "m" is this model itself`},
		{"candidate auto", auto("auto: {candidates: [a1]}"), `f.yaml: model m: auto.candidates: "a1" is an auto model; name chat models with routes`},
		{"candidate embedding", auto("auto: {candidates: [e1]}"), `f.yaml: model m: auto.candidates: "e1" is not a chat model (its kind is embedding)`},
		{"candidate twice", auto("auto: {candidates: [c1, c2, c1]}"), `f.yaml: model m: auto.candidates: "c1" is listed twice`},
		{"candidate twice by alias", auto("auto: {candidates: [c1, c1-latest]}"), `f.yaml: model m: auto.candidates: "c1-latest" is listed twice (it is an alias of c1)`},
		{"max price not exact", auto("auto: {candidates: [c1], max_price: {prompt: '1e-5'}}"), `f.yaml: model m: auto.max_price.prompt: amount "1e-5" is not a plain non-negative decimal number (write USD per token as a decimal string, e.g. "0.0000025")`},
		{"max price cache field", auto("auto: {candidates: [c1], max_price: {cache_read: '1'}}"), `f.yaml: line 6: models[4].auto.max_price: unknown field "cache_read" (docs/catalog.md lists the fields)`},
		{"prefer twice", auto("auto: {candidates: [c1], prefer: [acme, acme]}"), `f.yaml: model m: auto.prefer: "acme" is listed twice`},
		{"prefer no candidate's", auto("auto: {candidates: [c1, c2], prefer: [acme, anthropic]}"), `f.yaml: model m: auto.prefer: "anthropic" is the owned_by of none of the candidates`},

		{"fallback unknown", chat("fallbacks: [c9]"), `f.yaml: model m: fallbacks: model "c9" is not in the catalog`},
		{"fallback itself", chat("fallbacks: [c1, m]"), `f.yaml: model m: fallbacks: "m" is this model itself`},
		{"fallback auto", chat("fallbacks: [a1]"), `f.yaml: model m: fallbacks: "a1" is an auto model; name chat models with routes`},
		{"fallback embedding", chat("fallbacks: [e1]"), `f.yaml: model m: fallbacks: "e1" is not a chat model (its kind is embedding)`},
		{"fallback twice", chat("fallbacks: [c2, c2]"), `f.yaml: model m: fallbacks: "c2" is listed twice`},
		{"fallback twice by alias", chat("fallbacks: [c1-latest, c1]"), `f.yaml: model m: fallbacks: "c1" is listed twice`},
		{"fallback alias after id", chat("fallbacks: [c1, c1-latest]"), `f.yaml: model m: fallbacks: "c1-latest" is listed twice (it is an alias of c1)`},
		{"route policy", chat("route_policy: random"), `f.yaml: model m: route_policy: "random" must be weighted, lowest_price, lowest_latency or least_busy`},
		{"tools not a bool", chat("tools: maybe"), `f.yaml: line 6: models[4].tools: must be true or false, not "maybe"`},

		{"embedding fallbacks", other("embedding", "fallbacks: [e1]"), "f.yaml: model m: fallbacks: only chat models have fallbacks (this one is embedding)"},
		{"image tools", other("image", "tools: false"), "f.yaml: model m: tools: only chat models take tools (this one is image)"},
		{"video route policy", other("video", "route_policy: weighted"), "f.yaml: model m: route_policy: only chat models choose routes by a policy; others' routes are weighted (this one is video)"},

		{"route price not exact", base + "  - {id: m, kind: chat, routes: [{id: rm, format: chat, base_url: 'http://x', pricing: {prompt: '0.1', completion: '-1'}}]}\n",
			`f.yaml: model m: routes[0].pricing.completion: amount "-1" is not a plain non-negative decimal number (write USD per token as a decimal string, e.g. "0.0000025")`},
		{"route price half given", base + "  - {id: m, kind: chat, routes: [{id: rm, format: chat, base_url: 'http://x', pricing: {prompt: '0.1'}}]}\n",
			"f.yaml: model m: routes[0].pricing: must give both prompt and completion: a price left out would be 0 in the request log's upstream cost"},
		{"route price unknown field", base + "  - {id: m, kind: chat, routes: [{id: rm, format: chat, base_url: 'http://x', pricing: {prompt: '0', completion: '0', input: '1'}}]}\n",
			`f.yaml: line 6: models[4].routes[0].pricing: unknown field "input" (docs/catalog.md lists the fields)`},

		{"every problem at once", auto("quota_multiplier: 3, tools: false, auto: {policy: best, candidates: [e1, c9]}"),
			"f.yaml: model m: quota_multiplier: an auto model counts 1 call; write 1 or leave it out, not 3\n" +
				"f.yaml: model m: tools: an auto model takes tools when a candidate does: a request with tools goes to a candidate that takes them\n" +
				"f.yaml: model m: auto.policy: \"best\" must be ordered, cheapest or fastest\n" +
				"f.yaml: model m: auto.candidates: \"e1\" is not a chat model (its kind is embedding)\n" +
				"f.yaml: model m: auto.candidates: model \"c9\" is not in the catalog"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(tc.yaml))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error = %v\nwant    %s", err, tc.want)
			}
		})
	}
	if _, err := Parse("f.yaml", []byte(base)); err != nil {
		t.Fatalf("the base file is refused: %v", err)
	}
}

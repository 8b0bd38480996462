package catalog

import (
	"fmt"
	"slices"
)

// autoDoc is a model's auto: block, the models it may pick and the rules.
type autoDoc struct {
	Policy     string   `yaml:"policy"`
	Candidates []string `yaml:"candidates"`
	MaxPrice   struct {
		Prompt     string `yaml:"prompt"`
		Completion string `yaml:"completion"`
	} `yaml:"max_price"`
	Prefer []string `yaml:"prefer"`
}

// routing reads what a model says about choosing among routes and models: tools, fallbacks,
// route_policy and auto. Names of other models are kept as written; resolveRouting checks
// them once every model is read.
func (v *validator) routing(m *Model, d *modelDoc) {
	if m.Kind != KindChat {
		only := []struct {
			field, msg string
			set        bool
		}{
			{"auto", "only a chat model can be an auto model", d.Auto != nil},
			{"fallbacks", "only chat models have fallbacks", len(d.Fallbacks) > 0},
			{"tools", "only chat models take tools", d.Tools != nil},
			{"route_policy", "only chat models choose routes by a policy; others' routes are weighted", d.RoutePolicy != ""},
		}
		for _, o := range only {
			if o.set {
				v.fail(m.ID, o.field, fmt.Sprintf("%s (this one is %s)", o.msg, m.Kind))
			}
		}
		m.RoutePolicy = RouteWeighted
		return
	}
	if d.Auto != nil {
		v.autoModel(m, d)
		return
	}
	m.Tools = d.Tools == nil || *d.Tools
	m.Fallbacks = d.Fallbacks
	m.RoutePolicy = d.RoutePolicy
	if m.RoutePolicy == "" {
		m.RoutePolicy = RouteWeighted
	} else if !oneOf(m.RoutePolicy, RouteWeighted, RouteLowestPrice, RouteLowestLatency, RouteLeastBusy) {
		v.fail(m.ID, "route_policy", fmt.Sprintf("%q must be weighted, lowest_price, lowest_latency or least_busy", m.RoutePolicy))
	}
}

// autoModel reads an auto model's own fields. What it can do comes from its candidates
// (autoDefaults): it has no tools setting, routes, route policy or fallbacks of its own.
func (v *validator) autoModel(m *Model, d *modelDoc) {
	a := d.Auto
	if d.Tools != nil {
		v.fail(m.ID, "tools", "an auto model takes tools when a candidate does: a request with tools goes to a candidate that takes them")
	}
	if d.RoutePolicy != "" {
		v.fail(m.ID, "route_policy", "an auto model has no routes to choose among: set route_policy on its candidates")
	}
	if len(d.Fallbacks) > 0 {
		v.fail(m.ID, "fallbacks", "an auto model has no fallbacks: list the models it may use as candidates")
	}
	m.Auto = &Auto{Policy: a.Policy, Candidates: a.Candidates}
	if m.Auto.Policy == "" {
		m.Auto.Policy = AutoOrdered
	} else if !oneOf(m.Auto.Policy, AutoOrdered, AutoCheapest, AutoFastest) {
		v.fail(m.ID, "auto.policy", fmt.Sprintf("%q must be ordered, cheapest or fastest", a.Policy))
	}
	if len(a.Candidates) == 0 {
		v.fail(m.ID, "auto.candidates", "an auto model needs at least one candidate")
	}
	m.Auto.MaxPrice = Pricing{
		PromptText: a.MaxPrice.Prompt, CompletionText: a.MaxPrice.Completion,
		Prompt:     v.price(m.ID, "auto.max_price.prompt", a.MaxPrice.Prompt, 0),
		Completion: v.price(m.ID, "auto.max_price.completion", a.MaxPrice.Completion, 0),
	}
	if len(a.Prefer) > 0 {
		m.Auto.Prefer = a.Prefer
	}
}

// resolveRouting checks the models each auto model's candidates and each model's fallbacks
// name, storing their ids (an alias becomes the model's id), and fills an auto model's
// defaults from its candidates.
func (v *validator) resolveRouting(c *Catalog) {
	for _, m := range c.models {
		if m.Auto == nil {
			m.Fallbacks = v.chatModels(c, m, "fallbacks", m.Fallbacks)
			continue
		}
		m.Auto.Candidates = v.chatModels(c, m, "auto.candidates", m.Auto.Candidates)
		v.preferred(c, m)
		autoDefaults(c, m)
	}
}

// chatModels resolves the model names m lists at field: each must be another chat model
// with routes of its own (never an auto model), listed once.
func (v *validator) chatModels(c *Catalog, m *Model, field string, names []string) []string {
	var ids []string
	for _, name := range names {
		t, ok := c.byName[name]
		switch {
		case !ok:
			v.fail(m.ID, field, fmt.Sprintf("model %q is not in the catalog", name))
		case t == m:
			v.fail(m.ID, field, fmt.Sprintf("%q is this model itself", name))
		case t.Kind != KindChat:
			v.fail(m.ID, field, fmt.Sprintf("%q is not a chat model (its kind is %s)", name, t.Kind))
		case t.IsAuto():
			v.fail(m.ID, field, fmt.Sprintf("%q is an auto model; name chat models with routes", name))
		case slices.Contains(ids, t.ID) && name == t.ID:
			v.fail(m.ID, field, fmt.Sprintf("%q is listed twice", name))
		case slices.Contains(ids, t.ID):
			v.fail(m.ID, field, fmt.Sprintf("%q is listed twice (it is an alias of %s)", name, t.ID))
		default:
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// preferred checks an auto model's prefer list: each an owned_by of one of its candidates
// (a misspelt family would silently prefer nothing), listed once.
func (v *validator) preferred(c *Catalog, m *Model) {
	for i, family := range m.Auto.Prefer {
		owns := func(id string) bool { return c.byName[id].OwnedBy == family }
		switch {
		case slices.Contains(m.Auto.Prefer[:i], family):
			v.fail(m.ID, "auto.prefer", fmt.Sprintf("%q is listed twice", family))
		case !slices.ContainsFunc(m.Auto.Candidates, owns):
			v.fail(m.ID, "auto.prefer", fmt.Sprintf("%q is the owned_by of none of the candidates", family))
		}
	}
}

// autoDefaults: an auto model takes tools when a candidate does, and, unless the file says,
// publishes the largest context and output of its candidates (never an output above its
// own context).
func autoDefaults(c *Catalog, m *Model) {
	var context, output int64
	for _, id := range m.Auto.Candidates {
		t := c.byName[id]
		context, output = max(context, t.ContextLength), max(output, t.MaxOutputTokens)
		m.Tools = m.Tools || t.Tools
	}
	if m.ContextLength == 0 {
		m.ContextLength = context
	}
	if m.MaxOutputTokens == 0 {
		m.MaxOutputTokens = output
		if m.ContextLength > 0 {
			m.MaxOutputTokens = min(output, m.ContextLength)
		}
	}
}

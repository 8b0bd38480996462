package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/codec/jsonpatch"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/codec/reasoning"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// A request may be served by one of several models — an auto model's eligible
// candidates, the client's "models" list, or the model it names followed by that model's
// catalog fallbacks. choice is that list and where the request is in it: generate tries the
// models in turn, each with its own routes, until one answers.

// choice is the ordered models a request may be served by.
type choice struct {
	auto   *catalog.Model   // the auto model the request named; nil for any other
	models []*catalog.Model // in the order they are tried
	at     int              // the one being tried
	// priced: the dearest estimated cost among models, as the auto choice already worked it
	// out (0: not yet; estimate works it out)
	priced money.Amount
}

// units is what the call reserves in the plan: an auto model's 1.0 whatever it picks, else
// the dearest model of the list (the settle counts the one that served: quota.Outcome.Units).
func (ch *choice) units() int64 {
	if ch.auto != nil {
		return quota.Units(ch.auto.QuotaMultiplier)
	}
	var most int64
	for _, m := range ch.models {
		most = max(most, quota.Units(m.QuotaMultiplier))
	}
	return most
}

// servedUnits is what the call counts once model m served it.
func (ch *choice) servedUnits(m *catalog.Model) int64 {
	if ch.auto != nil {
		return quota.Units(ch.auto.QuotaMultiplier)
	}
	return quota.Units(m.QuotaMultiplier)
}

// modelsKey is the request member that lists fallback models (OpenRouter's "models").
const modelsKey = "models"

// modelsField reads the request's "models" list and takes it out of the body (no provider
// knows the member). Without "model", the list's first entry becomes it. A body without the
// word costs no scan.
func modelsField(body []byte, limit int) (list []string, out []byte, e *apiError) {
	if !bytes.Contains(body, []byte(`"models"`)) {
		return nil, body, nil
	}
	o, err := jsonpatch.Scan(body)
	if err != nil {
		return nil, body, nil // not an object: the format's decoder says so in its own words
	}
	raw := o.Value(modelsKey)
	if raw == nil || string(raw) == "null" {
		return nil, body, nil
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, nil, errInvalid(modelsKey, "models must be an array of model ids (strings), tried in order")
	}
	switch {
	case len(list) == 0:
		return nil, nil, errInvalid(modelsKey, "models must list at least one model id")
	case len(list) > limit:
		return nil, nil, errInvalid(modelsKey, fmt.Sprintf("models lists %d models; this gateway tries at most %d", len(list), limit))
	}
	for i, name := range list {
		if name == "" {
			return nil, nil, errInvalid(modelsParam(i), modelsParam(i)+" is empty: each entry must be a model id")
		}
	}
	ops := []jsonpatch.Op{jsonpatch.Remove(modelsKey)}
	if v := o.Value("model"); v == nil || string(v) == "null" {
		q, _ := json.Marshal(list[0])
		ops = append(ops, jsonpatch.Set("model", q))
	}
	return list, o.Apply(ops...), nil
}

func modelsParam(i int) string { return modelsKey + "[" + strconv.Itoa(i) + "]" }

// choose makes the request's list of models from the one it names, m.
func (s *Server) choose(c *call, g *generation, m *catalog.Model) *apiError {
	switch {
	case m.IsAuto():
		return s.chooseAuto(c, g, m)
	case g.listed != nil:
		models, e := s.listedModels(c, m, g.listed)
		if e != nil {
			return e
		}
		g.choice = &choice{models: models}
	default:
		g.choice = &choice{models: append([]*catalog.Model{m}, usableFallbacks(c, m)...)}
	}
	return g.useFirst()
}

// listedModels resolves the client's list, after the model it names: every entry must exist,
// serve this endpoint and be open to the key (ZDR included), or the request is refused
// naming the entry; a repeated entry is tried once.
func (s *Server) listedModels(c *call, first *catalog.Model, names []string) ([]*catalog.Model, *apiError) {
	models := []*catalog.Model{first}
	for i, name := range names {
		m, e := s.resolveModel(c, name, catalog.KindChat)
		if e == nil && m.IsAuto() {
			e = errInvalid(modelsParam(i), strconv.Quote(name)+" is an auto model: it cannot be a fallback; name it in model instead")
		}
		if e != nil {
			e.Param = modelsParam(i)
			e.Message = modelsParam(i) + ": " + e.Message
			return nil, e
		}
		if !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	return models, nil
}

// usableFallbacks are m's catalog fallbacks the key may use: the client did not name them, so
// one the key may not use is left out rather than refused.
func usableFallbacks(c *call, m *catalog.Model) []*catalog.Model {
	var out []*catalog.Model
	for _, f := range c.catalog.FallbacksOf(m) {
		if keyAllows(c.key, f, f.ID) && (!c.key.ZDR || f.HasZDRRoute()) && f != m && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// useFirst sets the generation to the first model of its list that can take the request; when
// none can, the first one's reason is the answer.
func (g *generation) useFirst() *apiError {
	var first *apiError
	for i, m := range g.choice.models {
		e := g.use(m)
		if e == nil {
			g.choice.at = i
			return nil
		}
		if first == nil {
			first = e
		}
	}
	return first
}

// next moves the generation to the next model of its list that can take the request; false
// when none is left.
func (g *generation) next() bool {
	ch := g.choice
	for ch != nil && ch.at+1 < len(ch.models) {
		ch.at++
		if g.use(ch.models[ch.at]) == nil {
			return true
		}
	}
	return false
}

// more reports whether a model after the current one is left to try.
func (g *generation) more() bool { return g.choice != nil && g.choice.at+1 < len(g.choice.models) }

// use makes m the model the request goes to: its input modalities, the whole request
// checked when a route of m speaks another format, its reasoning decision, its context rule
// and the output cap it implies.
func (g *generation) use(m *catalog.Model) *apiError {
	g.model = m
	if e := g.takesInput(m); e != nil {
		return e
	}
	if g.needsCanonical() {
		if _, e := g.canonical(); e != nil {
			return e
		}
		if e := g.oneChoice(); e != nil {
			return e
		}
	}
	return g.fit(m)
}

// fit sets m's reasoning decision and applies its context rule: what a candidate is judged and
// priced by, whatever format its routes speak (a chat body is decoded only for the model that
// is tried and needs it).
func (g *generation) fit(m *catalog.Model) *apiError {
	g.model, g.windowCap, g.clamped, g.inputTokens = m, 0, 0, 0
	g.decision = g.resolveThinking(m)
	return g.applyContextRule()
}

// estimate is the admission's estimated cost: the most any model of the list may cost (a
// fallback may be dearer than the first).
func (g *generation) estimate() money.Amount {
	most := g.estimatedCost()
	if g.choice == nil || len(g.choice.models) == 1 {
		return most
	}
	if g.choice.priced > 0 {
		return max(most, g.choice.priced)
	}
	s := g.modelState()
	for _, m := range g.choice.models {
		if g.fit(m) == nil {
			most = max(most, g.estimatedCost())
		}
	}
	g.setModelState(s)
	return most
}

// modelState is what use sets.
type modelState struct {
	model                           *catalog.Model
	decision                        reasoning.Decision
	windowCap, clamped, inputTokens int
}

func (g *generation) modelState() modelState {
	return modelState{g.model, g.decision, g.windowCap, g.clamped, g.inputTokens}
}

func (g *generation) setModelState(s modelState) {
	g.model, g.decision, g.windowCap, g.clamped, g.inputTokens = s.model, s.decision, s.windowCap, s.clamped, s.inputTokens
}

// served names the model that serves to the client where it is not the one the client named
// (an auto pick, a fallback): the answer's model and the log say which served.
func (g *generation) served() {
	if g.model != g.named {
		g.clientModel = g.model.ID
	}
}

// errNoCandidate is the refusal when no candidate of an auto model can take the request: why
// lists each candidate's reason.
func errNoCandidate(auto *catalog.Model, why []string) *apiError {
	msg := "no candidate of " + strconv.Quote(auto.ID) + " can serve this request:"
	for _, w := range why {
		msg += " " + w + ";"
	}
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "no_candidate", Param: "model", Message: msg[:len(msg)-1]}
}

package api

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/codec/reasoning"
	"github.com/modelgate/modelgate/codec/tokens"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// A request may be served by one of several models: an auto model's eligible candidates,
// the client's "models" list, or the model it names followed by that model's catalog
// fallbacks. Which list it gets is a model policy's job, one per kind of list, as a proxy's
// load-balancing selector is picked by name; the turn then tries the models in turn, each
// with its own routes (the route board picks among those by the model's route_policy),
// until one answers.

// modelPolicy lists the models that may serve a request naming m, in the order they are to
// be tried, and sets the turn to the first that can take the request.
type modelPolicy interface {
	choose(x *exchange, t *turn, m *catalog.Model) *apiError
}

// The model policies.
type (
	// fallbackPolicy: the model named, then its catalog fallbacks the key may use.
	fallbackPolicy struct{}
	// listPolicy: the model named, then the client's "models" list.
	listPolicy struct{}
	// autoPolicy: an auto model's candidates that can serve the request, ordered by its
	// auto.policy (auto.go).
	autoPolicy struct{ board *routehealth.Board }
)

// chooser picks the model policy for a request.
type chooser struct{ board *routehealth.Board }

// policyFor is the policy for a request naming m.
func (c chooser) policyFor(t *turn, m *catalog.Model) modelPolicy {
	switch {
	case m.IsAuto():
		return autoPolicy{board: c.board}
	case t.listed != nil:
		return listPolicy{}
	}
	return fallbackPolicy{}
}

func (fallbackPolicy) choose(x *exchange, t *turn, m *catalog.Model) *apiError {
	t.choice = &choice{models: append([]*catalog.Model{m}, usableFallbacks(x, m)...)}
	return t.useFirst()
}

func (listPolicy) choose(x *exchange, t *turn, m *catalog.Model) *apiError {
	models, e := listedModels(x, m, t.listed)
	if e != nil {
		return e
	}
	t.choice = &choice{models: models}
	return t.useFirst()
}

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

// listedModels resolves the client's list, after the model it names: every entry must exist,
// serve this endpoint and be open to the key (ZDR included), or the request is refused
// naming the entry; a repeated entry is tried once.
func listedModels(x *exchange, first *catalog.Model, names []string) ([]*catalog.Model, *apiError) {
	models := []*catalog.Model{first}
	for i, name := range names {
		m, e := resolveModel(x, name, catalog.KindChat)
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
func usableFallbacks(x *exchange, m *catalog.Model) []*catalog.Model {
	var out []*catalog.Model
	for _, f := range x.catalog.FallbacksOf(m) {
		if keyAllows(x.key, f, f.ID) && (!x.key.ZDR || f.HasZDRRoute()) && f != m && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// useFirst sets the turn to the first model of its list that can take the request; when
// none can, the first one's reason is the answer.
func (t *turn) useFirst() *apiError {
	var first *apiError
	for i, m := range t.choice.models {
		e := t.use(m)
		if e == nil {
			t.choice.at = i
			return nil
		}
		if first == nil {
			first = e
		}
	}
	return first
}

// next moves the turn to the next model of its list that can take the request; false
// when none is left.
func (t *turn) next() bool {
	ch := t.choice
	for ch != nil && ch.at+1 < len(ch.models) {
		ch.at++
		if t.use(ch.models[ch.at]) == nil {
			return true
		}
	}
	return false
}

// more reports whether a model after the current one is left to try.
func (t *turn) more() bool { return t.choice != nil && t.choice.at+1 < len(t.choice.models) }

// use makes m the model the request goes to: its input modalities, the whole request
// checked when a route of m speaks another format, its reasoning decision, its context rule
// and the output cap it implies.
func (t *turn) use(m *catalog.Model) *apiError {
	t.model = m
	if e := t.takesInput(m); e != nil {
		return e
	}
	if t.needsCanonical() {
		if _, e := t.canonical(); e != nil {
			return e
		}
		if e := t.oneChoice(); e != nil {
			return e
		}
	}
	return t.fit(m)
}

// fit sets m's reasoning decision and applies its context rule: what a candidate is judged and
// priced by, whatever format its routes speak (a chat body is decoded only for the model that
// is tried and needs it).
func (t *turn) fit(m *catalog.Model) *apiError {
	t.model, t.windowCap, t.clamped, t.inputTokens = m, 0, 0, 0
	t.decision = t.resolveThinking(m)
	return t.applyContextRule()
}

// needsCanonical reports whether any route of the model speaks another format, so a chat
// body is fully validated before the first attempt rather than in the middle of failover.
func (t *turn) needsCanonical() bool {
	for _, r := range t.model.Routes {
		if r.Format != t.spec.name {
			return true
		}
	}
	return false
}

// oneChoice refuses more than one choice (chat n, gemini candidateCount) for a model that
// has a route of another format: a converted answer has exactly one, and failover may reach
// such a route, so the client would silently get fewer answers than it asked for.
func (t *turn) oneChoice() *apiError {
	if t.req == nil || t.req.Choices <= 1 {
		return nil
	}
	param := "n"
	if t.spec.name == codec.FormatGemini {
		param = "generationConfig.candidateCount"
	}
	return errInvalid(param, fmt.Sprintf("%s must be 1 for model %s: it is served by routes of another format, which answer with one choice; "+
		"send one request per answer", param, t.clientModel))
}

// hasImages reports an image in the request: a chat body's from its light parse, which read
// every content part, else the IR's.
func (t *turn) hasImages() bool {
	if t.chatReq != nil {
		return t.chatReq.Images
	}
	return t.req.HasImages()
}

// takesInput refuses images to a model whose catalog input_modalities lack image (the
// predicate an auto model's choice applies to its candidates), before any upstream is called.
func (t *turn) takesInput(m *catalog.Model) *apiError {
	if m.AcceptsImages() || !t.hasImages() {
		return nil
	}
	return errInvalid("model", fmt.Sprintf("model %s does not take images (its input_modalities: %s): send the request without images, or to a model that takes them",
		strconv.Quote(m.ID), strings.Join(m.Architecture.InputModalities, ", ")))
}

// thinking is what the client asked for, before the model's class is applied.
func (t *turn) thinking() ir.Thinking {
	if t.req != nil {
		return t.req.Thinking
	}
	return t.chatReq.Thinking()
}

// resolveThinking is the client's reasoning request resolved for model m.
func (t *turn) resolveThinking(m *catalog.Model) reasoning.Decision {
	return reasoning.Resolve(m.Reasoning.Model(), t.thinking())
}

// serving records the model about to serve: the log names it, its prices are the client's,
// and the answer names it where the client named another.
func serving(x *exchange, t *turn) {
	x.resolved(t.model)
	x.units = t.choice.servedUnits(t.model)
	t.served()
}

// estimate is the admission's estimated cost: the most any model of the list may cost (a
// fallback may be dearer than the first).
func (t *turn) estimate() money.Amount {
	most := t.estimatedCost()
	if t.choice == nil || len(t.choice.models) == 1 {
		return most
	}
	if t.choice.priced > 0 {
		return max(most, t.choice.priced)
	}
	s := t.modelState()
	for _, m := range t.choice.models {
		if t.fit(m) == nil {
			most = max(most, t.estimatedCost())
		}
	}
	t.setModelState(s)
	return most
}

// modelState is what use sets.
type modelState struct {
	model                           *catalog.Model
	decision                        reasoning.Decision
	windowCap, clamped, inputTokens int
}

func (t *turn) modelState() modelState {
	return modelState{t.model, t.decision, t.windowCap, t.clamped, t.inputTokens}
}

func (t *turn) setModelState(s modelState) {
	t.model, t.decision, t.windowCap, t.clamped, t.inputTokens = s.model, s.decision, s.windowCap, s.clamped, s.inputTokens
}

// served names the model that serves to the client where it is not the one the client named
// (an auto pick, a fallback): the answer's model and the log say which served.
func (t *turn) served() {
	if t.model != t.named {
		t.clientModel = t.model.ID
	}
}

// defaultMaxTokens is what an answer may take when neither the client nor the model says.
const defaultMaxTokens = 4096

// estimateInput is the request's input tokens: counted with the model's tokenizer when the
// catalog names one, else estimated from the IR, or from the body's size for a chat body
// passed through without a full decode.
func (t *turn) estimateInput() int {
	if t.model.Tokenizer != "" {
		if count, err := tokens.For(t.model.Tokenizer); err == nil {
			if req, e := t.canonical(); e == nil {
				return ir.CountTokens(req, count)
			}
		}
	}
	if t.req != nil {
		return ir.EstimateTokens(t.req)
	}
	return len(t.body) / 4
}

// requestedMax is the client's max tokens (0 when absent).
func (t *turn) requestedMax() int {
	if t.req != nil {
		return t.req.MaxTokens
	}
	return t.chatReq.MaxTokens
}

// applyContextRule checks the request against the model's window (decisions.md, "Context")
// and works out the output cap to send when the client gave none.
//   - shared_window: input + output must fit in context_length, output in max_output_tokens.
//   - input_budget: context_length is the input's own budget.
func (t *turn) applyContextRule() *apiError {
	m := t.model
	in, want := t.estimateInput(), t.requestedMax()
	t.inputTokens = in
	ctx, maxOut := int(m.ContextLength), int(m.MaxOutputTokens)
	if maxOut > 0 && want > maxOut {
		// Clients send generic defaults (32000, 64000) to every model: more than this model
		// writes is served as its maximum, and the header says so.
		want, t.clamped = maxOut, maxOut
	}
	if ctx == 0 {
		return nil
	}
	if m.ContextRule == catalog.ContextInputBudget {
		if in > ctx {
			return contextErr(fmt.Sprintf("the input is about %d tokens, over model %s's input budget of %d tokens", in, m.ID, ctx))
		}
		return nil
	}
	out := max(want, 1)
	if in+out > ctx {
		return contextErr(fmt.Sprintf("the input is about %d tokens and the answer may take %d, over model %s's context window of %d tokens", in, out, m.ID, ctx))
	}
	if want == 0 {
		room := ctx - in
		if maxOut == 0 || maxOut > room {
			t.windowCap = room // the model's default answer would not fit: cap it
		}
	}
	return nil
}

// maxTokens is the client's max tokens as the gateway sends them (clamped to the model's).
func (t *turn) maxTokens() int {
	if t.clamped > 0 {
		return t.clamped
	}
	return t.requestedMax()
}

func contextErr(msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "context_length_exceeded", Param: "messages", Message: msg}
}

// outputBound is the most the answer may take, for the cost reserved at admission.
func (t *turn) outputBound() int {
	switch {
	case t.maxTokens() > 0:
		return t.maxTokens()
	case t.windowCap > 0:
		return t.windowCap
	case t.model.MaxOutputTokens > 0:
		return int(t.model.MaxOutputTokens)
	}
	return defaultMaxTokens
}

// estimatedCost bounds what the call can cost: the input estimate at the prompt price and the
// output bound at the completion price.
func (t *turn) estimatedCost() money.Amount {
	p := t.model.Pricing
	return p.Prompt.Times(int64(t.inputTokens)) + p.Completion.Times(int64(t.outputBound()))
}

// maxTokensToSend is the cap a converted request carries when the client gave none, or the
// client's clamped to the model's.
func (t *turn) maxTokensToSend(routeFormat string) int {
	if t.clamped > 0 {
		return t.clamped
	}
	if t.windowCap > 0 {
		return t.windowCap
	}
	if routeFormat == catalog.FormatMessages { // required by the format
		return t.outputBound()
	}
	return 0
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

package api

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// An auto model picks, per request, among its candidates: those that can serve
// this request — the key may use them (and, for a ZDR key, they have a ZDR route), they take
// its tools, images and reasoning, their prices are under the auto model's ceiling, and the
// request fits their context — ordered by the auto model's preferred families, then by its
// policy, healthy ones first. The first is tried first; the rest are its fallbacks.

// candidate is one candidate judged for a request.
type candidate struct {
	model   *catalog.Model
	why     string // why it cannot serve ("" when it can)
	healthy bool   // a route of it takes requests now
	cost    int64  // this request's estimated cost on it (money units)
	ttft    time.Duration
}

// choose orders auto's candidates for the request into the turn's list, or refuses it naming
// why each candidate cannot serve.
func (p autoPolicy) choose(x *exchange, t *turn, auto *catalog.Model) *apiError {
	why := map[*catalog.Model]string{}
	var models []*catalog.Model
	var priced money.Amount
	for _, cd := range p.judge(x, t, auto) {
		if cd.why != "" {
			why[cd.model] = cd.why
			continue
		}
		models = append(models, cd.model)
		priced = max(priced, money.Amount(cd.cost))
	}
	t.choice = &choice{auto: auto, models: models, priced: priced}
	// The first that takes the whole request: a chat body decoded for a candidate of another
	// format has its input counted exactly now, which may not fit where the estimate did.
	for i, m := range models {
		e := t.use(m)
		if e == nil {
			t.choice.at = i
			return nil
		}
		why[m] = e.Message
	}
	var reasons []string
	for _, m := range x.catalog.Candidates(auto) {
		reasons = append(reasons, m.ID+": "+why[m])
	}
	return errNoCandidate(auto, reasons)
}

// judge is every candidate of auto for the request, the eligible ones first in the order they
// are to be tried.
func (p autoPolicy) judge(x *exchange, t *turn, auto *catalog.Model) []candidate {
	need := needsOf(t)
	defer t.setModelState(t.modelState()) // use() of each candidate; chooseAuto sets the first
	var out []candidate
	for _, m := range x.catalog.Candidates(auto) {
		cd := candidate{model: m, why: unfit(x, auto, m, need)}
		if cd.why == "" {
			if e := t.fit(m); e != nil {
				cd.why = e.Message
			} else {
				cd.cost = int64(t.estimatedCost())
			}
		}
		if cd.why == "" {
			cd.healthy = p.board.CanServe(m.Routes, x.key.ZDR, nil)
			cd.ttft = fastestRoute(p.board, m, x.key.ZDR)
		}
		out = append(out, cd)
	}
	order(out, auto.Auto)
	return out
}

// needs is what a request asks of the model that serves it.
type needs struct {
	tools, images, reasoning bool
}

// needsOf reads what the request asks; a chat body from its light parse, without a decode.
func needsOf(t *turn) needs {
	n := needs{images: t.hasImages(), reasoning: thinks(t.thinking())}
	if t.req == nil {
		n.tools = t.chatReq.HasTools()
	} else {
		n.tools = len(t.req.Tools) > 0
	}
	return n
}

// thinks reports a request for reasoning: an effort other than none, thinking on, a budget.
func thinks(t ir.Thinking) bool {
	return t.Effort != "" && t.Effort != "none" || t.Enabled != nil && *t.Enabled || t.BudgetTokens > 0
}

// unfit says why candidate m of auto cannot serve a request with need for this key ("" when
// it can, as far as the catalog tells: the context is checked apart).
func unfit(x *exchange, auto, m *catalog.Model, need needs) string {
	ceiling := auto.Auto.MaxPrice
	switch {
	case !candidateAllowed(x, auto, m):
		return "this API key may not use it"
	case x.key.ZDR && !m.HasZDRRoute():
		return "it has no zero-data-retention route"
	case need.tools && !m.Tools:
		return "it does not take tools"
	case need.images && !m.AcceptsImages():
		return "it does not take images"
	case need.reasoning && !m.Reasoning.Supported():
		return "it does not reason"
	case ceiling.Prompt > 0 && m.Pricing.Prompt > ceiling.Prompt:
		return "its prompt price " + m.Pricing.Prompt.String() + " is over the ceiling " + ceiling.Prompt.String()
	case ceiling.Completion > 0 && m.Pricing.Completion > ceiling.Completion:
		return "its completion price " + m.Pricing.Completion.String() + " is over the ceiling " + ceiling.Completion.String()
	}
	return ""
}

// candidateAllowed: a restricted key gets a candidate when it lists the auto model (which
// grants its candidates) or the candidate itself.
func candidateAllowed(x *exchange, auto, m *catalog.Model) bool {
	return len(x.key.Models) == 0 || keyAllows(x.key, auto, auto.ID) || keyAllows(x.key, m, m.ID)
}

// autoAllowed: a restricted key may call an auto model it lists or one with a candidate it
// lists.
func autoAllowed(x *exchange, auto *catalog.Model) bool {
	if keyAllows(x.key, auto, auto.ID) {
		return true
	}
	for _, m := range x.catalog.Candidates(auto) {
		if keyAllows(x.key, m, m.ID) {
			return true
		}
	}
	return false
}

// autoZDR: an auto model serves a ZDR key when a candidate has a ZDR route.
func autoZDR(x *exchange, auto *catalog.Model) bool {
	for _, m := range x.catalog.Candidates(auto) {
		if m.HasZDRRoute() {
			return true
		}
	}
	return false
}

// fastestRoute is the lowest measured time to first byte among m's routes the key may use
// (0: none measured yet, which sorts first so an unmeasured candidate gets measured).
func fastestRoute(board *routehealth.Board, m *catalog.Model, zdrOnly bool) time.Duration {
	var best time.Duration
	seen := false
	for _, rt := range m.Routes {
		if zdrOnly && !rt.ZDR {
			continue
		}
		var l time.Duration
		if st := board.State(rt.ID); st != nil {
			l = st.TTFT
		}
		if !seen || l < best {
			best, seen = l, true
		}
	}
	return best
}

// order sorts the eligible candidates first: healthy before cooling, then the preferred
// families in their order, then by the policy (stable: ties keep the catalog's order).
func order(cands []candidate, a *catalog.Auto) {
	rank := func(cd candidate) int {
		if i := slices.Index(a.Prefer, cd.model.OwnedBy); i >= 0 {
			return i
		}
		return len(a.Prefer)
	}
	slices.SortStableFunc(cands, func(x, y candidate) int {
		switch {
		case (x.why == "") != (y.why == ""):
			return boolOrder(x.why == "")
		case x.healthy != y.healthy:
			return boolOrder(x.healthy)
		case rank(x) != rank(y):
			return rank(x) - rank(y)
		}
		if by := autoOrders[a.Policy]; by != nil {
			return by(x, y)
		}
		return 0 // ordered: the catalog's order
	})
}

// autoOrders are the auto policies that rank candidates past health and preferred families,
// by name (the catalog refuses any other; "ordered" keeps the catalog's order).
var autoOrders = map[string]func(x, y candidate) int{
	catalog.AutoCheapest: func(x, y candidate) int { return cmp.Compare(x.cost, y.cost) },
	catalog.AutoFastest:  func(x, y candidate) int { return cmp.Compare(x.ttft, y.ttft) },
}

func boolOrder(first bool) int {
	if first {
		return -1
	}
	return 1
}

// candidateView is one candidate in GET /v1/models/{auto}: whether this key could get it now.
type candidateView struct {
	ID        string `json:"id"`
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
}

// candidatesNow is what GET /v1/models/{auto} shows: each candidate the key may use, whether
// a route of it takes requests now, and why not.
func (c chooser) candidatesNow(x *exchange, auto *catalog.Model) []candidateView {
	out := []candidateView{}
	for _, m := range x.catalog.Candidates(auto) {
		v := candidateView{ID: m.ID}
		switch {
		case !candidateAllowed(x, auto, m):
			continue // not this key's business
		case x.key.ZDR && !m.HasZDRRoute():
			v.Reason = "no zero-data-retention route"
		case !c.board.CanServe(m.Routes, x.key.ZDR, nil):
			v.Reason = "every route is cooling down; retry in " + strconv.Itoa(max(ceilSeconds(c.board.Wait(m.Routes, x.key.ZDR, nil)), 1)) + " s"
		default:
			v.Available = true
		}
		out = append(out, v)
	}
	return out
}

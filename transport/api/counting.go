package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// What an answer counts (the table in docs/decisions.md, "Counting"). One
// rule, by the answer's status, on every endpoint that calls a model:
//
//   - served (2xx, or 499 once admitted: the upstream was working for the client): counts the
//     model's units, and a call beyond the plan pays its exact cost;
//   - a client error (any other 4xx: the request itself is wrong, whoever found it): counts
//     the units of the model it names, even in a body refused for another field (one call
//     when it names none the gateway knows), never refused and never paid: it costs 0 USD;
//   - a refusal (401 of a revoked key, 402, 403, 429: the key, the plan or the quota said no)
//     and a failure (5xx, 529): count nothing and cost nothing.
//
// A counted call takes its slot in the burst window; every answer to a known account is
// logged, durably, before its last byte.

// countClass is what an answer counts.
type countClass int

const (
	countsNothing     countClass = iota // a refusal or a failure
	countsServed                        // an answer: the model's units, and its cost beyond the plan
	countsClientError                   // the request's fault: the model's units, at no cost
)

// classify is the rule above.
func classify(status int, admitted bool) countClass {
	switch {
	case status < 400:
		return countsServed
	case status == 499:
		if admitted {
			return countsServed
		}
		return countsNothing // the client left before anything was asked of an upstream
	case status == http.StatusUnauthorized, status == http.StatusPaymentRequired,
		status == http.StatusForbidden, status == http.StatusTooManyRequests:
		return countsNothing
	case status < 500:
		return countsClientError
	}
	return countsNothing
}

// ledgerTimeout bounds the wait for a settle to be durable: a store that cannot write in that
// time gets the client an error instead of an answer it could not record.
const ledgerTimeout = 30 * time.Second

// close writes the call's outcome to its account's ledger — the settle of an admitted call,
// or the record of one answered without admission — and returns once it is durable. It runs
// once, just before the answer's last byte. Unauthenticated calls have no account: nothing.
func (r *record) close() error {
	if r.closed {
		return r.closeErr
	}
	r.closed = true
	acct, keyID := r.c.key.AccountID, r.c.key.ID
	if keyID == "" && r.c.revoked != nil {
		acct, keyID = r.c.revoked.AccountID, r.c.revoked.ID
	}
	if keyID == "" || r.s.Quota == nil || r.c.unrecorded {
		return nil
	}
	if r.units == 0 && r.named != "" { // a fault found before the model was resolved
		if m, ok := r.c.catalog.Lookup(r.named); ok {
			r.entry.Model, r.units = m.ID, quota.Units(m.QuotaMultiplier)
		}
	}
	e := r.entry
	total := time.Since(r.c.start)
	e.Time = r.c.arrived.UnixNano()
	e.AccountID, e.KeyID = acct, keyID
	e.Route, e.Status, e.Attempts = r.route, r.status, len(r.tried)
	r.usage = r.usage.Counted()
	e.InputTokens, e.CachedTokens, e.CacheWriteTokens = r.usage.Input, r.usage.CacheRead, r.usage.CacheWrite
	e.OutputTokens, e.ReasoningTokens = r.usage.Output, r.usage.Reasoning
	e.LatencyMs = total.Milliseconds()
	if !r.first.IsZero() {
		e.TTFTMs = r.first.Sub(r.c.start).Milliseconds()
	}
	class := classify(r.status, r.adm != nil)
	var cost money.Amount
	if class == countsServed {
		cost = r.usage.Cost(r.prices)
		e.ListCost = int64(cost)
		e.UpstreamCost = int64(r.usage.Cost(r.upstreamPrices()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), ledgerTimeout)
	defer cancel()
	if a := r.adm; a != nil {
		o := quota.Outcome{Counts: class != countsNothing, Cost: cost, Log: &e, Units: r.units}
		if r.media != nil {
			o.Media = &quota.MediaUse{Reservation: *r.media, N: r.produced}
		}
		var st quota.Settlement
		st, r.closeErr = r.s.Quota.Settle(ctx, a.reservation, o)
		r.charged, r.billed = st.Charged, r.closeErr == nil
	} else {
		u := quota.Unadmitted{Account: acct, KeyID: keyID, Units: r.units, Log: &e}
		if class == countsClientError {
			u.Plan = r.s.planOf(r.c)
			u.Counts = u.Plan != nil
			u.KeyLimits = r.c.key.Limits
		}
		if r.ownerDown {
			// The owner that did not answer the admission is the one the entry goes to: the
			// client is not held for it a second time (the refusal costs nothing, and the
			// shared wait budget, quota.MaxWait, is spent), and the entry follows once the
			// owner answers.
			supervise.Go("api.record-refusal", func() {
				ctx, cancel := context.WithTimeout(context.Background(), ledgerTimeout)
				defer cancel()
				if err := r.s.Quota.Record(ctx, u); err != nil {
					r.s.Logger.Warn("a refusal by an unavailable quota owner was not logged", "request_id", r.c.id, "account", acct, "err", err)
				}
			})
			return nil
		}
		r.closeErr = r.s.Quota.Record(ctx, u)
	}
	// A full disk is logged once by the store, not once per call in flight.
	if r.closeErr != nil && !persistence.IsDiskFull(r.closeErr) {
		r.s.Logger.Error("the call could not be recorded; the client gets an error instead of its answer",
			"request_id", r.c.id, "account", acct, "status", r.status, "err", r.closeErr)
	}
	return r.closeErr
}

// upstreamPrices are the serving route's own prices (catalog.Route.Cost): what the call cost
// the operator, for the log, while the client pays the model's (r.prices, the model's when
// the route has none).
func (r *record) upstreamPrices() codec.Prices {
	if rt, ok := r.c.catalog.Route(r.route); ok && rt.Pricing != nil {
		return pricesFrom(*rt.Pricing)
	}
	return r.prices
}

// namedModel is the top-level "model" string of a JSON object, if it has one: the model a
// request names, read even when the gateway refuses the rest of it.
func namedModel(body []byte) string {
	v, ok := jsonscan.Member(body, "model")
	if !ok {
		return ""
	}
	var name string
	if json.Unmarshal(body[v.Start:v.End], &name) != nil {
		return ""
	}
	return name
}

// planOf is the plan of the calling key's account (nil when it cannot be read).
func (s *Server) planOf(c *call) *catalog.Plan {
	name, err := s.Accounts.AccountPlan(c.key.AccountID)
	if err != nil {
		return nil
	}
	p, _ := c.catalog.Plan(name)
	return p
}

package api

import (
	"context"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/respond"
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

// settle writes the call's outcome to its account's ledger — the settle of an admitted call,
// or the record of one answered without admission — and returns once it is durable. It runs
// once, just before the answer's last byte. Unauthenticated calls have no account: nothing.
func (l *ledger) settle(x *exchange) error {
	if x.settled {
		return x.settleErr
	}
	x.settled = true
	acct, keyID := x.key.AccountID, x.key.ID
	if keyID == "" && x.revoked != nil {
		acct, keyID = x.revoked.AccountID, x.revoked.ID
	}
	if keyID == "" || l.quota == nil || x.unrecorded {
		return nil
	}
	if x.units == 0 && x.named != "" { // a fault found before the model was resolved
		if m, ok := x.catalog.Lookup(x.named); ok {
			x.entry.Model, x.units = m.ID, quota.Units(m.QuotaMultiplier)
		}
	}
	e := x.entry
	total := time.Since(x.start)
	e.Time = x.arrived.UnixNano()
	e.AccountID, e.KeyID = acct, keyID
	e.Route, e.Status, e.Attempts = x.route, x.status, len(x.tried)
	x.usage = x.usage.Counted()
	e.InputTokens, e.CachedTokens, e.CacheWriteTokens = x.usage.Input, x.usage.CacheRead, x.usage.CacheWrite
	e.OutputTokens, e.ReasoningTokens = x.usage.Output, x.usage.Reasoning
	e.LatencyMs = total.Milliseconds()
	if !x.first.IsZero() {
		e.TTFTMs = x.first.Sub(x.start).Milliseconds()
	}
	class := classify(x.status, x.adm != nil)
	var cost money.Amount
	if class == countsServed {
		cost = x.usage.Cost(x.prices)
		e.ListCost = int64(cost)
		e.UpstreamCost = int64(x.usage.Cost(x.upstreamPrices()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), ledgerTimeout)
	defer cancel()
	if a := x.adm; a != nil {
		o := quota.Outcome{Counts: class != countsNothing, Cost: cost, Log: &e, Units: x.units}
		if x.media != nil {
			o.Media = &quota.MediaUse{Reservation: *x.media, N: x.produced}
		}
		var st quota.Settlement
		st, x.settleErr = l.quota.Settle(ctx, a.reservation, o)
		x.charged, x.billed = st.Charged, x.settleErr == nil
	} else {
		u := quota.Unadmitted{Account: acct, KeyID: keyID, Units: x.units, Log: &e}
		if class == countsClientError {
			u.Plan = l.planOf(x)
			u.Counts = u.Plan != nil
			u.KeyLimits = x.key.Limits
		}
		if x.ownerDown {
			// The owner that did not answer the admission is the one the entry goes to: the
			// client is not held for it a second time (the refusal costs nothing, and the
			// shared wait budget, quota.MaxWait, is spent), and the entry follows once the
			// owner answers.
			supervise.Go("api.record-refusal", func() {
				ctx, cancel := context.WithTimeout(context.Background(), ledgerTimeout)
				defer cancel()
				if err := l.quota.Record(ctx, u); err != nil {
					l.logger.Warn("a refusal by an unavailable quota owner was not logged", "request_id", x.id, "account", acct, "err", err)
				}
			})
			return nil
		}
		x.settleErr = l.quota.Record(ctx, u)
	}
	// A full disk is logged once by the store, not once per call in flight.
	if x.settleErr != nil && !persistence.IsDiskFull(x.settleErr) {
		l.logger.Error("the call could not be recorded; the client gets an error instead of its answer",
			"request_id", x.id, "account", acct, "status", x.status, "err", x.settleErr)
	}
	return x.settleErr
}

// upstreamPrices are the serving route's own prices (catalog.Route.Cost): what the call cost
// the operator, for the log, while the client pays the model's (x.prices, the model's when
// the route has none).
func (x *exchange) upstreamPrices() codec.Prices {
	if rt, ok := x.catalog.Route(x.route); ok && rt.Pricing != nil {
		return pricesFrom(*rt.Pricing)
	}
	return x.prices
}

// planOf is the plan of the calling key's account (nil when it cannot be read).
func (l *ledger) planOf(x *exchange) *catalog.Plan {
	name, err := l.accounts.AccountPlan(x.key.AccountID)
	if err != nil {
		return nil
	}
	p, _ := x.catalog.Plan(name)
	return p
}

// fail answers with the gateway's own error, once the call is recorded.
func (l *ledger) fail(x *exchange, e *apiError) {
	x.status = e.Status
	x.ownerDown = e.Code == codeQuotaUnavailable
	if err := l.settle(x); err != nil {
		e = errRecordFailed(err)
		x.status = e.Status
	}
	if x.status == 499 {
		return // nobody is listening
	}
	l.render(x, e)
}

// costHeader carries a whole answer's cost in USD, money.Amount's exact text: the cost its
// log entry holds (what the call took from the credits; "0" within the plan's allowance).
const costHeader = "X-Modelgate-Cost"

// deliver writes a whole answer once the call is recorded (settle): its charge, counters and
// log entry are on disk before the client gets its first byte, so a crash never loses an
// answer the client has; an admitted call's answer says what it cost (X-Modelgate-Cost). A
// call that cannot be recorded is answered 503 instead, and deliver reports false.
func (l *ledger) deliver(x *exchange, status int, contentType string, body []byte) bool {
	x.status = status
	x.firstByte()
	if err := l.settle(x); err != nil {
		e := errRecordFailed(err)
		x.status = e.Status
		l.render(x, e)
		return false
	}
	w := x.w
	if x.billed {
		w.Header().Set(costHeader, x.charged.String())
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	w.Write(body)
	return true
}

// deliverJSON is deliver for a JSON answer.
func (l *ledger) deliverJSON(x *exchange, status int, v any) bool {
	return l.deliver(x, status, "application/json", respond.Marshal(v))
}

// settleStream records a stream that has its end held back (streamOut.finishing), then sends
// that end: the client gets the end marker only once the call is durable in its account's
// ledger. What the stream has so far goes out first, not after the wait for the record.
func (l *ledger) settleStream(x *exchange) {
	x.out.flushPending()
	l.sendTail(x, l.settle(x))
}

// sendTail sends the held end of the stream once the call is recorded (err nil), or in its
// place an error event saying the answer could not be recorded: without its end marker the
// client takes the answer for incomplete, which it is, being unacknowledged.
func (l *ledger) sendTail(x *exchange, err error) {
	o := x.out
	if !o.ending || x.clientGone() {
		return
	}
	tail := o.takeTail()
	if err != nil {
		e := errRecordFailed(err)
		if !o.started { // nothing went out: the client gets the error as its answer
			l.render(x, e)
			return
		}
		// An encoder made only to end the stream in the client's format.
		enc := x.turn.spec.format.NewStreamEncoder(o, x.turn.req, x.turn.clientModel)
		enc.Encode(ir.Event{Kind: ir.EvError, Err: &ir.Error{Status: e.Status, Kind: ir.ErrOverloaded,
			Code: e.Code, Message: e.Message + " (request " + x.id + ")"}})
		return
	}
	o.sendTail(tail)
}

// done records a call that did not record itself on the way out (a refusal the handler
// returned early from, the client gone, a broken stream), ends the client's stream after
// it, and counts the request in the metrics. Deferred by every recorded handler, it is also
// where a panic of the handler ends as that request's 500 (panics.go), recorded like any
// other answer.
func (s *Server) done(x *exchange) {
	if v := recover(); v != nil {
		s.recovered(x, v)
	}
	defer s.inflight.Add(-1) // after the record, so "idle" means "all recorded"
	s.Metrics.InFlight(-1)
	if x.out != nil {
		s.settleStream(x)
	} else {
		s.settle(x)
	}
	var ttfb time.Duration
	if !x.first.IsZero() {
		ttfb = x.first.Sub(x.start)
	}
	model := x.entry.Model
	if model == "" {
		model = "unknown" // bounded label: never the client's free text
	}
	s.Metrics.Request(x.endpoint, model, x.route, x.status, time.Since(x.start), ttfb)
	if x.turn != nil {
		if d := x.turn.loss.Fields(); len(d) > 0 {
			s.Metrics.Dropped(x.entry.ClientFormat, x.entry.UpstreamFormat, d)
		}
	}
}

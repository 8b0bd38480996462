package api

import (
	"context"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/respond"
	"github.com/modelgate/modelgate/transport/upstream"
)

// record follows one request to its log entry and metrics. It never holds content.
type record struct {
	s      *Server
	c      *call
	entry  persistence.LogEntry
	model  string // as the client named it, for metrics before resolution
	route  string
	tried  []string
	status int
	usage  codec.Usage
	prices codec.Prices
	first  time.Time
	gen    *generation // nil for endpoints without conversion
	adm    *admission  // the quota reservation, once admitted
	units  int64       // what the model named counts (quota.Units), once resolved
	named  string      // the model the request names, before it is resolved
	// media is the day's media reservation the call holds, and produced what it made of it:
	// both end with the settle.
	media    *quota.MediaReservation
	produced int64
	out      *streamOut // the client's stream, once one was opened
	// streamErr is an error the upstream reported inside a stream.
	streamErr *ir.Error
	// client is the client's request context: done once the client has gone.
	client context.Context
	w      http.ResponseWriter // the client's answer, for a handler that panicked
	// closed: the outcome went to the ledger (close), with closeErr.
	closed   bool
	closeErr error
	// ownerDown: the call is refused because the account's owner did not answer in time
	// (quota_unavailable); its refusal is logged without holding the answer (close).
	ownerDown bool
	// billed: an admitted call was settled (close), and charged is what its log entry
	// holds as its cost: X-Modelgate-Cost of a whole answer.
	billed  bool
	charged money.Amount
}

// observe takes usage and errors from a stream's events.
func (r *record) observe(e ir.Event) {
	switch e.Kind {
	case ir.EvStart: // the input usage, where the format reports it first (messages)
		if e.Usage.Known() {
			r.usage = e.Usage
		}
	case ir.EvUsage:
		r.usage = e.Usage
	case ir.EvFinish:
		if e.Usage.Known() {
			r.usage = e.Usage
		}
	case ir.EvError:
		r.streamErr = e.Err
	}
}

// open starts a request that carries a body: its record, the key, the body. The caller defers
// s.done(rec) and stops when ok is false (the error has been answered).
func (s *Server) open(w http.ResponseWriter, r *http.Request, c *call, clientFormat string) (rec *record, body []byte, ok bool) {
	rec = s.newRecord(c, clientFormat)
	rec.client, rec.w = r.Context(), w
	if e := s.authenticate(r, c); e != nil {
		rec.fail(w, e)
		return rec, nil, false
	}
	body, e := s.readBody(w, r, c)
	if e != nil {
		rec.fail(w, e)
		return rec, nil, false
	}
	rec.named = namedModel(body)
	return rec, body, true
}

func (s *Server) newRecord(c *call, clientFormat string) *record {
	s.Metrics.InFlight(1)
	s.inflight.Add(1)
	return &record{s: s, c: c, entry: persistence.LogEntry{RequestID: c.id, ClientFormat: clientFormat}}
}

func (r *record) firstByte() { r.first = time.Now() }

// clientGone reports that the client closed the request: an upstream read that failed then
// failed because the gateway cancelled it, not because the upstream broke.
func (r *record) clientGone() bool { return r.client != nil && r.client.Err() != nil }

// resolved notes the model the call names: its log label, prices and units.
func (r *record) resolved(m *catalog.Model) {
	r.entry.Model, r.prices, r.units = m.ID, pricesOf(m), quota.Units(m.QuotaMultiplier)
}

// fail answers with the gateway's own error, once the call is recorded.
func (r *record) fail(w http.ResponseWriter, e *apiError) {
	r.status = e.Status
	r.ownerDown = e.Code == codeQuotaUnavailable
	if err := r.close(); err != nil {
		e = errRecordFailed(err)
		r.status = e.Status
	}
	if r.status == 499 {
		return // nobody is listening
	}
	render(w, r.c, e)
}

// passError hands an upstream's verdict on the request (a 4xx) to the client unchanged: the
// route speaks the client's format, so its message is the most precise one available.
func (r *record) passError(w http.ResponseWriter, ue *upstream.Error) {
	ct := ue.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/json"
	}
	r.deliver(w, ue.Status, ct, ue.Body)
}

// costHeader carries a whole answer's cost in USD, money.Amount's exact text: the cost its
// log entry holds (what the call took from the credits; "0" within the plan's allowance).
const costHeader = "X-Modelgate-Cost"

// deliver writes a whole answer once the call is recorded (close): its charge, counters and
// log entry are on disk before the client gets its first byte, so a crash never loses an
// answer the client has; an admitted call's answer says what it cost (X-Modelgate-Cost). A
// call that cannot be recorded is answered 503 instead, and deliver reports false.
func (r *record) deliver(w http.ResponseWriter, status int, contentType string, body []byte) bool {
	r.status = status
	r.firstByte()
	if err := r.close(); err != nil {
		e := errRecordFailed(err)
		r.status = e.Status
		render(w, r.c, e)
		return false
	}
	if r.billed {
		w.Header().Set(costHeader, r.charged.String())
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	w.Write(body)
	return true
}

// deliverJSON is deliver for a JSON answer.
func (r *record) deliverJSON(w http.ResponseWriter, status int, v any) bool {
	return r.deliver(w, status, "application/json", respond.Marshal(v))
}

// done records a call that did not record itself on the way out (the client left; a stream),
// ends the client's stream after it, and counts the request in the metrics. Deferred by every
// recorded handler, it is also where a panic of the handler ends as that request's 500
// (panics.go), recorded like any other answer.
func (s *Server) done(r *record) {
	if v := recover(); v != nil {
		s.recovered(r, v)
	}
	defer s.inflight.Add(-1) // after the record, so "idle" means "all recorded"
	s.Metrics.InFlight(-1)
	if r.out != nil {
		r.out.flushPending() // what the stream has so far goes out before the wait for its record
	}
	err := r.close()
	if r.out != nil {
		r.out.end(err)
	}
	var ttfb time.Duration
	if !r.first.IsZero() {
		ttfb = r.first.Sub(r.c.start)
	}
	model := r.entry.Model
	if model == "" {
		model = "unknown" // bounded label: never the client's free text
	}
	s.Metrics.Request(r.c.endpoint, model, r.route, r.status, time.Since(r.c.start), ttfb)
	if r.gen != nil {
		if d := r.gen.loss.Fields(); len(d) > 0 {
			s.Metrics.Dropped(r.entry.ClientFormat, r.entry.UpstreamFormat, d)
		}
	}
}

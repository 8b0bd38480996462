package api

import (
	"context"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/persistence"
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
	// streamErr is an error the upstream reported inside a stream.
	streamErr *ir.Error
	// client is the client's request context: done once the client has gone.
	client context.Context
	w      http.ResponseWriter // the client's answer, for a handler that panicked
	out    *streamOut          // the client's event stream, once one was opened
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

// fail answers with the gateway's own error.
func (r *record) fail(w http.ResponseWriter, e *apiError) {
	r.status = e.Status
	if e.Status == 499 {
		return // nobody is listening
	}
	render(w, r.c, e)
}

// passError hands an upstream's verdict on the request (a 4xx) to the client unchanged: the
// route speaks the client's format, so its message is the most precise one available.
func (r *record) passError(w http.ResponseWriter, ue *upstream.Error) {
	r.status = ue.Status
	ct := ue.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(ue.Status)
	w.Write(ue.Body)
}

// done writes the log entry and metrics. Deferred by every recorded handler, it is also where
// a panic of the handler ends as that request's 500 (panics.go).
func (s *Server) done(r *record) {
	if v := recover(); v != nil {
		s.recovered(r, v)
	}
	settling := false
	defer func() {
		if !settling {
			s.inflight.Add(-1) // after the entry is queued, so "idle" means "all logged"
		}
	}()
	s.Metrics.InFlight(-1)
	total := time.Since(r.c.start)
	var ttfb time.Duration
	if !r.first.IsZero() {
		ttfb = r.first.Sub(r.c.start)
	}
	model := r.entry.Model
	if model == "" {
		model = "unknown" // bounded label: never the client's free text
	}
	s.Metrics.Request(r.c.endpoint, model, r.route, r.status, total, ttfb)
	if r.gen != nil {
		if d := r.gen.loss.Fields(); len(d) > 0 {
			s.Metrics.Dropped(r.entry.ClientFormat, r.entry.UpstreamFormat, d)
		}
	}
	if r.c.key.ID == "" {
		return // not authenticated: no account to log against
	}
	e := &r.entry
	e.Time = r.c.start.UnixNano()
	e.AccountID, e.KeyID = r.c.key.AccountID, r.c.key.ID
	e.Route, e.Status, e.Attempts = r.route, r.status, len(r.tried)
	e.InputTokens, e.CachedTokens, e.CacheWriteTokens = r.usage.Input, r.usage.CacheRead, r.usage.CacheWrite
	e.OutputTokens, e.ReasoningTokens = r.usage.Output, r.usage.Reasoning
	e.LatencyMs, e.TTFTMs = total.Milliseconds(), ttfb.Milliseconds()
	counts := r.status < 500 // upstream failures and broken streams are refunded
	cost := r.usage.Cost(r.prices)
	if counts {
		e.ListCost = int64(cost)
	}
	if r.adm != nil {
		settling = true
		s.settle(r.adm, counts, cost, *e, func() { s.inflight.Add(-1) })
		return
	}
	s.Log(*e) // not admitted: nothing was charged
}

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
)

// exchange is one client request and its answer: everything the gateway learns and decides
// about it, from the key to the ledger entry. It is built once, when the request arrives
// (Server.begin), and every phase is a function over it, one file each: authenticate.go,
// decode.go, choose.go, admit.go, attempt.go, relay_whole.go, relay_stream.go, settle.go.
// It points at nothing that owns it; it never holds prompt or answer content beyond the
// request being served.
type exchange struct {
	id       string
	endpoint string
	start    time.Time // for latencies (the monotonic clock)
	// arrived is the same moment on the gateway's clock (the one the quota owners use): the
	// call's burst slot and its log entry's time, which the slot is rebuilt from.
	arrived time.Time
	catalog *catalog.Catalog
	// envelope is the format errors are rendered in; nil = chat.
	envelope ir.ClientFormat
	w        http.ResponseWriter // the client's answer (a panicking handler's included)
	// clientCtx is the client's request: done once the client has gone.
	clientCtx context.Context

	// The key (authenticate.go).
	key     persistence.Key
	revoked *persistence.Key // the revoked key a 401 refused: its account's log gets the refusal
	// checked is when the key check began: the key check and the admission share one wait
	// budget from there (quota.MaxWait).
	checked time.Time
	// anyKeyHeader: the endpoint takes x-goog-api-key on /v1 too (the key-holder endpoints,
	// which every format's clients call).
	anyKeyHeader bool
	// ratesCtx bounds the read of the burst budget for the X-RateLimit headers: the request's
	// context once the key is known (kept past a body read's deadline, whose answer still
	// carries the headers).
	ratesCtx context.Context
	// rated says the X-RateLimit headers are decided: set by admission, or by a read of the
	// burst budget for an answer that admitted nothing (publishRates).
	rated bool

	// The admission (admit.go).
	adm *admission // the quota reservation, once admitted
	// unrecorded says the store refused writes at admission: the call is answered 503
	// cannot_record and written nowhere (its record would meet the same full disk).
	unrecorded bool
	// ownerDown: the call is refused because the account's owner did not answer in time
	// (quota_unavailable); its refusal is logged without holding the answer (settle).
	ownerDown bool
	// media is the day's media reservation the call holds, and produced what it made of it:
	// both end with the settle.
	media    *quota.MediaReservation
	produced int64

	// The model (decode.go, choose.go).
	named  string // the model the request names, before it is resolved
	units  int64  // what the model named counts (quota.Units), once resolved
	prices codec.Prices
	turn   *turn // a chat, messages, responses or gemini request; nil for other endpoints

	// The attempts (attempt.go).
	tried []string // route ids, in the order tried
	// failed says an attempt failed for a reason other than "not now" (overloaded, rate
	// limited, cooling down), so a request left without routes is a 502, not a 529.
	failed bool
	live   *attempt // the last attempt dial opened
	route  string   // the route that answered

	// The answer (relay_whole.go, relay_stream.go).
	out       *streamOut // the client's stream, once one was opened
	streamErr *ir.Error  // an error the upstream reported inside a stream
	status    int
	usage     codec.Usage
	first     time.Time // the answer's first byte

	// The record (settle.go).
	entry persistence.LogEntry
	// settled: the outcome went to the ledger (settle), with settleErr.
	settled   bool
	settleErr error
	// billed: an admitted call was settled, and charged is what its log entry holds as its
	// cost: X-Modelgate-Cost of a whole answer.
	billed  bool
	charged money.Amount
}

// begin is a request's exchange, as it arrives.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, endpoint string) *exchange {
	return &exchange{id: requestIDOf(w), start: time.Now(), arrived: s.now(), endpoint: endpoint, catalog: s.Catalog.Load(),
		w: w, clientCtx: r.Context()}
}

// observe takes usage and errors from a stream's events.
func (x *exchange) observe(e ir.Event) {
	switch e.Kind {
	case ir.EvStart: // the input usage, where the format reports it first (messages)
		if e.Usage.Known() {
			x.usage = e.Usage
		}
	case ir.EvUsage:
		x.usage = e.Usage
	case ir.EvFinish:
		if e.Usage.Known() {
			x.usage = e.Usage
		}
	case ir.EvError:
		x.streamErr = e.Err
	}
}

func (x *exchange) firstByte() { x.first = time.Now() }

// clientGone reports that the client closed the request: an upstream read that failed then
// failed because the gateway cancelled it, not because the upstream broke.
func (x *exchange) clientGone() bool { return x.clientCtx != nil && x.clientCtx.Err() != nil }

// resolved notes the model the call names: its log label, prices and units.
func (x *exchange) resolved(m *catalog.Model) {
	x.entry.Model, x.prices, x.units = m.ID, pricesOf(m), quota.Units(m.QuotaMultiplier)
}

// admissionContext is the request's context with what is left of the call's wait budget,
// which began with the key check (quota.MaxWait).
func (x *exchange) admissionContext() context.Context {
	if x.checked.IsZero() {
		return x.clientCtx
	}
	return quota.WithWaitBudget(x.clientCtx, x.checked.Add(quota.MaxWait))
}

func pricesOf(m *catalog.Model) codec.Prices { return pricesFrom(m.Pricing) }

func pricesFrom(p catalog.Pricing) codec.Prices {
	return codec.Prices{Input: p.Prompt, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite, Output: p.Completion}
}

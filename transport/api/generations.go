package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

// generationView is one call's request-log entry as its account sees it. The route (the
// operator's name for a provider deployment) is not shown; the format it spoke is.
type generationView struct {
	ID               string  `json:"id"`
	Object           string  `json:"object"`
	CreatedAt        string  `json:"created_at"`
	Model            string  `json:"model"`
	KeyID            string  `json:"key_id"`
	Status           int     `json:"status"`
	ClientFormat     string  `json:"client_format"`
	UpstreamFormat   string  `json:"upstream_format"`
	Stream           bool    `json:"stream"`
	InputTokens      int64   `json:"input_tokens"`
	CachedTokens     int64   `json:"cached_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	ReasoningTokens  int64   `json:"reasoning_tokens"`
	CostUSD          string  `json:"cost_usd"`
	ListCostUSD      string  `json:"list_cost_usd"`
	AllowanceCalls   float64 `json:"allowance_calls"`
	LatencyMs        int64   `json:"latency_ms"`
	TTFTMs           int64   `json:"ttft_ms"`
	Attempts         int     `json:"attempts"`
}

// generation answers GET /v1/generations/{id}: the log entry of the call the gateway answered
// with X-Request-Id id (a video task's id gives its completion's billing), to any key of the
// same account. An id of another account is the same 404 as an unknown one. The entry is
// read from this node's store: in a cluster, the account shard's local replica.
func (s *Server) generation(w http.ResponseWriter, r *http.Request) {
	x, ok := s.beginKeyHolder(w, r, "generations")
	if !ok {
		return
	}
	e, err := s.Log.LogEntry(x.key.AccountID, muxVar(r, "id"))
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		s.render(x, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "generation_not_found", Param: "id",
			Message: "no call with this request id is logged for this account (the id is the X-Request-Id of the gateway's answer)"})
		return
	case err != nil:
		s.render(x, s.readFailed(x, "generation read failed", err))
		return
	}
	s.answer(x, map[string]any{"data": generationView{
		ID: e.RequestID, Object: "generation", CreatedAt: time.Unix(0, e.Time).UTC().Format(time.RFC3339Nano),
		Model: e.Model, KeyID: e.KeyID, Status: e.Status, ClientFormat: e.ClientFormat, UpstreamFormat: e.UpstreamFormat, Stream: e.Stream,
		InputTokens: e.InputTokens, CachedTokens: e.CachedTokens, CacheWriteTokens: e.CacheWriteTokens,
		OutputTokens: e.OutputTokens, ReasoningTokens: e.ReasoningTokens,
		CostUSD: money.Amount(e.Cost).String(), ListCostUSD: money.Amount(e.ListCost).String(),
		AllowanceCalls: float64(e.AllowanceUnits) / 1000, LatencyMs: e.LatencyMs, TTFTMs: e.TTFTMs, Attempts: e.Attempts,
	}})
}

package admin

import (
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/respond"
)

// usageEntry is a log entry with its exact costs as decimal strings — what the usage is worth
// at the model's per-token prices, and what was charged to credits (calls within the plan's
// allowance are charged nothing) — and the allowance it took, in calls.
type usageEntry struct {
	persistence.LogEntry
	ListCostUSD    string  `json:"list_cost_usd"`
	CostUSD        string  `json:"cost_usd"`
	AllowanceCalls float64 `json:"allowance_calls"`
}

// usageTotals sums every entry of the query, all pages.
type usageTotals struct {
	Count            int64   `json:"count"`
	CostUSD          string  `json:"cost_usd"`
	ListCostUSD      string  `json:"list_cost_usd"`
	InputTokens      int64   `json:"input_tokens"`
	CachedTokens     int64   `json:"cached_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	ReasoningTokens  int64   `json:"reasoning_tokens"`
	AllowanceCalls   float64 `json:"allowance_calls"`
}

// operatorEntry and operatorTotals add, for the operator only, what the usage cost at the
// prices of the routes that served it (catalog route pricing): the route's real cost, which
// is not the customer's business (docs/decisions.md, "Route policies").
type operatorEntry struct {
	usageEntry
	UpstreamCostUSD string `json:"upstream_cost_usd"`
}

type operatorTotals struct {
	usageTotals
	UpstreamCostUSD string `json:"upstream_cost_usd"`
}

// usageParams are the query parameters GET …/usage takes.
var usageParams = []string{"from", "to", "key", "model", "limit", "cursor"}

// usage pages through an account's request log: GET …/usage?from&to&key&model&limit&cursor.
// Every page carries the totals of the whole query; next_cursor is null on the last page.
func (s *Server) usage(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	if _, err := s.store.GetAccount(id); StoreFailed(w, err) {
		return
	}
	serveUsage(w, r, s.store, id, true)
}

// LogReader reads an account's request log.
type LogReader interface {
	QueryLog(q persistence.LogQuery) (persistence.LogPage, error)
}

// ServeUsage answers the account API's GET /account/v1/usage (from&to&key&model&limit&cursor):
// the operator's usage query without the upstream cost.
func ServeUsage(w http.ResponseWriter, r *http.Request, log LogReader, account string) {
	serveUsage(w, r, log, account, false)
}

// serveUsage answers a usage query of the account; operator adds the upstream cost.
func serveUsage(w http.ResponseWriter, r *http.Request, log LogReader, account string, operator bool) {
	q, ok := UsageQuery(w, r, account)
	if !ok {
		return
	}
	q.UpstreamCost = operator
	page, err := log.QueryLog(q)
	if StoreFailed(w, err) {
		return
	}
	out := make([]usageEntry, len(page.Entries))
	for i, e := range page.Entries {
		out[i] = usageEntry{LogEntry: e, ListCostUSD: money.Amount(e.ListCost).String(), CostUSD: money.Amount(e.Cost).String(),
			AllowanceCalls: calls(e.AllowanceUnits)}
	}
	t := page.Totals
	totals := usageTotals{Count: t.Count, CostUSD: money.Amount(t.Cost).String(), ListCostUSD: money.Amount(t.ListCost).String(),
		InputTokens: t.InputTokens, CachedTokens: t.CachedTokens, CacheWriteTokens: t.CacheWriteTokens, OutputTokens: t.OutputTokens,
		ReasoningTokens: t.ReasoningTokens, AllowanceCalls: calls(t.AllowanceUnits)}
	var next *string
	if page.NextCursor != "" {
		next = &page.NextCursor
	}
	body := map[string]any{"object": "list", "data": out, "has_more": next != nil, "next_cursor": next,
		"totals": totals, "total_cost_usd": totals.CostUSD, "total_list_cost_usd": totals.ListCostUSD}
	if operator {
		ops := make([]operatorEntry, len(out))
		for i := range out {
			ops[i] = operatorEntry{usageEntry: out[i], UpstreamCostUSD: money.Amount(out[i].UpstreamCost).String()}
		}
		body["data"] = ops
		body["totals"] = operatorTotals{usageTotals: totals, UpstreamCostUSD: money.Amount(t.UpstreamCost).String()}
		body["total_upstream_cost_usd"] = money.Amount(t.UpstreamCost).String()
	}
	respond.JSON(w, http.StatusOK, body)
}

// UsageQuery reads a usage query's parameters for the account, or answers 400 naming the
// bad one.
func UsageQuery(w http.ResponseWriter, r *http.Request, account string) (persistence.LogQuery, bool) {
	if !onlyParams(w, r.URL.Query(), "the usage API", usageParams) {
		return persistence.LogQuery{}, false
	}
	from, ok1 := parseTime(w, r, "from")
	to, ok2 := parseTime(w, r, "to")
	if !ok1 || !ok2 {
		return persistence.LogQuery{}, false
	}
	qv := r.URL.Query()
	q := persistence.LogQuery{Account: account, From: from, To: to, KeyID: qv.Get("key"), Model: qv.Get("model"), Cursor: qv.Get("cursor")}
	if v := qv.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > persistence.MaxLogLimit {
			respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_limit", "limit",
				"limit must be a whole number from 1 to "+strconv.Itoa(persistence.MaxLogLimit))
			return persistence.LogQuery{}, false
		}
		q.Limit = n
	}
	return q, true
}

// calls converts thousandths of a call into calls.
func calls(units int64) float64 { return float64(units) / 1000 }

package account

import (
	"cmp"
	"encoding/csv"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/admin"
	"github.com/modelgate/modelgate/transport/billing"
	"github.com/modelgate/modelgate/transport/respond"
)

// usage answers GET /account/v1/usage: the operator's usage query, on the caller's account.
func (s *Server) usage(w http.ResponseWriter, r *http.Request, acct persistence.Account) {
	if s.keyFilterOwned(w, r, acct) {
		admin.ServeUsage(w, r, s.Store, acct.ID)
	}
}

// keyFilterOwned answers 404 for a key filter naming no key of the account.
func (s *Server) keyFilterOwned(w http.ResponseWriter, r *http.Request, acct persistence.Account) bool {
	key := r.URL.Query().Get("key")
	if key == "" {
		return true
	}
	_, ok := s.ownKey(w, acct, key, "key")
	return ok
}

// csvHeader names usage.csv's columns: the usage page's fields, money as exact decimals.
var csvHeader = []string{"request_id", "time", "key_id", "model", "status", "input_tokens", "cached_tokens", "cache_write_tokens",
	"output_tokens", "reasoning_tokens", "latency_ms", "ttft_ms", "client_format", "stream", "allowance_calls", "list_cost_usd", "cost_usd"}

// usageCSV answers GET /account/v1/usage.csv: every entry the usage query selects (from the
// cursor's place on, when one is given), one row each, read a page at a time.
func (s *Server) usageCSV(w http.ResponseWriter, r *http.Request, acct persistence.Account) {
	if !s.keyFilterOwned(w, r, acct) {
		return
	}
	q, ok := admin.UsageQuery(w, r, acct.ID)
	if !ok {
		return
	}
	q.Limit = persistence.MaxLogLimit
	page, err := s.Store.QueryLog(q) // the first page before the header: a bad cursor is still a 400
	if admin.StoreFailed(w, err) {
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="usage.csv"`)
	out := csv.NewWriter(w)
	out.Write(csvHeader)
	for {
		for _, e := range page.Entries {
			out.Write([]string{e.RequestID, time.Unix(0, e.Time).UTC().Format(time.RFC3339Nano), e.KeyID, e.Model, strconv.Itoa(e.Status),
				itoa(e.InputTokens), itoa(e.CachedTokens), itoa(e.CacheWriteTokens), itoa(e.OutputTokens), itoa(e.ReasoningTokens),
				itoa(e.LatencyMs), itoa(e.TTFTMs), e.ClientFormat, strconv.FormatBool(e.Stream),
				strconv.FormatFloat(float64(e.AllowanceUnits)/1000, 'f', -1, 64), money.Amount(e.ListCost).String(), money.Amount(e.Cost).String()})
		}
		if page.NextCursor == "" {
			break
		}
		if page, err = s.Store.QueryLog(persistence.LogQuery{Account: acct.ID, Cursor: page.NextCursor}); err != nil {
			// The status is sent: the cut shows as a file without its last rows; the log says why.
			s.Logger.Error("account: usage.csv read failed", "account", acct.ID, "err", err)
			break
		}
	}
	out.Flush()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// ChargeDays is how far back the credit history's charges go.
const ChargeDays = 90

// creditEntry is one line of the credit history: a top-up (with its time and the balance
// after it) or a UTC day's charges (negative, with its number of charged requests).
type creditEntry struct {
	Date       string `json:"date"`
	Time       string `json:"time,omitempty"`
	Kind       string `json:"kind"` // top_up | refund | charge
	AmountUSD  string `json:"amount_usd"`
	Reference  string `json:"reference,omitempty"` // the Stripe session, charge or dispute
	BalanceUSD string `json:"balance_usd,omitempty"`
	Requests   int64  `json:"requests,omitempty"`
}

// credits answers GET /account/v1/credits: the balance, every top-up, and what the request
// log charged to the credits per UTC day over the last ChargeDays days, oldest first.
func (s *Server) credits(w http.ResponseWriter, r *http.Request, acct persistence.Account) {
	v, ok := s.Admin.Quota(w, r, acct)
	if !ok {
		return
	}
	grants, err := s.Grants.CreditGrants(acct.ID)
	if admin.StoreFailed(w, err) {
		return
	}
	history := []creditEntry{}
	for _, kg := range grants {
		g := kg.Grant
		kind, ref, paid := billing.Reference(kg.Key)
		switch {
		case paid:
		case g.Amount <= 0:
			continue // a charge (a video's), which its log entry counts below
		default:
			kind = "top_up" // the operator's
		}
		at := time.Unix(g.At, 0).UTC()
		history = append(history, creditEntry{Date: at.Format(time.DateOnly), Time: at.Format(time.RFC3339), Kind: kind,
			AmountUSD: money.Amount(g.Amount).String(), BalanceUSD: money.Amount(g.Balance).String(), Reference: ref})
	}
	charges, err := s.chargesByDay(acct.ID, s.Now().UTC().AddDate(0, 0, -ChargeDays))
	if admin.StoreFailed(w, err) {
		return
	}
	history = append(history, charges...)
	// Oldest first; on one day the top-ups before the day's charges.
	slices.SortStableFunc(history, func(a, b creditEntry) int {
		return cmp.Or(cmp.Compare(a.Date, b.Date), cmp.Compare(b.Kind, a.Kind), cmp.Compare(a.Time, b.Time))
	})
	out := map[string]any{"balance_usd": v.BalanceUSD, "history": history}
	if s.Payments != nil {
		if o := s.Payments.CreditOffer(); o != nil {
			out["purchase"] = o // what the credits page may sell (absent: no payments)
		}
	}
	respond.JSON(w, http.StatusOK, out)
}

// chargesByDay sums the cost charged to credits per UTC day from since on.
func (s *Server) chargesByDay(account string, since time.Time) ([]creditEntry, error) {
	var out []creditEntry
	var sum money.Amount
	q := persistence.LogQuery{Account: account, From: since, Limit: persistence.MaxLogLimit}
	for {
		page, err := s.Store.QueryLog(q)
		if err != nil {
			return nil, err
		}
		for _, e := range page.Entries {
			if e.Cost <= 0 {
				continue
			}
			day := time.Unix(0, e.Time).UTC().Format(time.DateOnly)
			if n := len(out); n == 0 || out[n-1].Date != day {
				out, sum = append(out, creditEntry{Date: day, Kind: "charge"}), 0
			}
			sum += money.Amount(e.Cost)
			out[len(out)-1].AmountUSD = (-sum).String()
			out[len(out)-1].Requests++
		}
		if page.NextCursor == "" {
			return out, nil
		}
		q = persistence.LogQuery{Account: account, Cursor: page.NextCursor}
	}
}

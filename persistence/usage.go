package persistence

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// LogQuery selects part of an account's request log, read page by page: the usage API of
// the operator, and of the account API after it.
type LogQuery struct {
	Account      string
	From, To     time.Time // From <= Time < To; a zero bound is no bound
	KeyID, Model string    // empty: every key, every model
	Limit        int       // entries per page; <= 0 or above MaxLogLimit: MaxLogLimit
	// Cursor is a previous page's NextCursor: the next page of that query. The query's other
	// fields may be left out with it (a limit left out is the previous page's); given, the
	// selection's must be the cursor's.
	Cursor string
	// UpstreamCost sums the entries' upstream cost into the totals: the operator's query.
	// Without it the totals (and so the cursor, which carries them) hold none, since the
	// route's real cost is not the customer's business.
	UpstreamCost bool
}

// LogTotals sums every entry a query selects, over all its pages.
type LogTotals struct {
	Count            int64 `json:"n"`
	Cost             int64 `json:"c"`            // pico-USD charged to credits
	ListCost         int64 `json:"l"`            // pico-USD the usage is worth at the model's prices
	UpstreamCost     int64 `json:"uc,omitempty"` // pico-USD it cost at the routes' prices (LogQuery.UpstreamCost)
	InputTokens      int64 `json:"in"`
	CachedTokens     int64 `json:"cr"`
	CacheWriteTokens int64 `json:"cw"`
	OutputTokens     int64 `json:"out"`
	ReasoningTokens  int64 `json:"rs"`
	AllowanceUnits   int64 `json:"u"` // thousandths of a call taken from the allowance
}

func (t *LogTotals) add(e *LogEntry) {
	t.Count++
	t.Cost += e.Cost
	t.ListCost += e.ListCost
	t.UpstreamCost += e.UpstreamCost
	t.InputTokens += e.InputTokens
	t.CachedTokens += e.CachedTokens
	t.CacheWriteTokens += e.CacheWriteTokens
	t.OutputTokens += e.OutputTokens
	t.ReasoningTokens += e.ReasoningTokens
	t.AllowanceUnits += e.AllowanceUnits
}

// LogPage is one page of a query, in ascending time order, with the totals of the whole
// query and the cursor of the next page ("" on the last one).
type LogPage struct {
	Entries    []LogEntry
	Totals     LogTotals
	NextCursor string
}

// logCursor is what a cursor carries: the query, the set of entries it reads (those written
// up to the account's log sequence AsOf when the first page was read, so entries written
// meanwhile never shift its pages or its totals), where the next page starts, and the totals
// the first page computed.
type logCursor struct {
	From    int64  `json:"f"`
	To      int64  `json:"t"` // 0: no bound
	Key     string `json:"k,omitempty"`
	Model   string `json:"m,omitempty"`
	Limit   int    `json:"n"`
	AsOf    uint64 `json:"s"`
	AfterT  int64  `json:"at"`
	AfterID string `json:"ar"`
	// AfterKey is the last entry's key after its account prefix (time and id as stored,
	// logcodec.go); a cursor given out before it existed resumes from AfterT and AfterID.
	AfterKey []byte    `json:"ak,omitempty"`
	Totals   LogTotals `json:"tot"`
}

// QueryLog reads one page of q. The first page (no cursor) reads the whole selection once
// for its totals; later pages read from where the previous one ended.
func (s *Store) QueryLog(q LogQuery) (LogPage, error) {
	if err := validateLogAccount(q.Account); err != nil {
		return LogPage{}, fmt.Errorf("usage: %w", err)
	}
	cur, first, err := s.cursorOf(&q)
	if err != nil {
		return LogPage{}, err
	}
	limit := q.Limit
	if limit == 0 && !first {
		limit = cur.Limit
	}
	if limit <= 0 || limit > MaxLogLimit {
		limit = MaxLogLimit
	}
	cur.Limit = limit
	prefix := dbKey(nsLog, q.Account, "/")
	lower := binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), uint64(cur.From))
	if !first {
		after := textLogKey(q.Account, cur.AfterT, cur.AfterID)
		if len(cur.AfterKey) > 0 {
			after = append(append([]byte(nil), prefix...), cur.AfterKey...)
		}
		lower = append(after, 0) // just after the last entry read
	}
	upper := prefixUpper(prefix)
	if cur.To > 0 {
		upper = binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), uint64(cur.To))
	}
	page := LogPage{Entries: []LogEntry{}, Totals: cur.Totals}
	more := false
	var lastKey []byte // of the last entry of the page
	dec := s.logDecoder(q.Account)
	if cur.To == 0 || cur.To > cur.From {
		err = s.scan(lower, upper, func(k, v []byte) (bool, error) {
			e, err := dec.decodeLogPair(k, v)
			if err != nil {
				return false, err
			}
			if e.Seq > cur.AsOf || cur.Key != "" && e.KeyID != cur.Key || cur.Model != "" && e.Model != cur.Model {
				return true, nil
			}
			if first {
				page.Totals.add(&e)
			}
			if len(page.Entries) == limit {
				more = true
				return first, nil // the first page reads on, for the totals
			}
			page.Entries = append(page.Entries, e)
			lastKey = append(lastKey[:0], k[len(prefix):]...)
			return true, nil
		})
	}
	if err != nil {
		return LogPage{}, fmt.Errorf("usage of %s: %w", q.Account, err)
	}
	if first {
		if !q.UpstreamCost {
			page.Totals.UpstreamCost = 0
		}
		cur.Totals = page.Totals
	}
	if more {
		last := page.Entries[len(page.Entries)-1]
		cur.AfterT, cur.AfterID, cur.AfterKey = last.Time, last.RequestID, lastKey
		b, _ := json.Marshal(cur)
		page.NextCursor = base64.RawURLEncoding.EncodeToString(b)
	}
	return page, nil
}

// cursorOf is the query's cursor: decoded from q.Cursor (first false), or a new one whose
// set is the entries written so far (first true).
func (s *Store) cursorOf(q *LogQuery) (cur logCursor, first bool, err error) {
	if q.Cursor == "" {
		rec, _, err := s.LoadQuota(q.Account)
		if err != nil {
			return cur, false, err
		}
		cur = logCursor{From: clampNanos(q.From), Key: q.KeyID, Model: q.Model, AsOf: rec.LogSeq}
		if !q.To.IsZero() {
			cur.To = max(1, clampNanos(q.To))
			if cur.To == math.MaxInt64 {
				cur.To = 0
			}
		}
		return cur, true, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(q.Cursor)
	if err != nil || json.Unmarshal(raw, &cur) != nil || cur.AfterID == "" {
		return cur, false, invalidf("cursor", "the cursor is not one this API gave out; start again without it")
	}
	to := int64(0)
	if !q.To.IsZero() {
		to = clampNanos(q.To)
	}
	if !q.From.IsZero() && clampNanos(q.From) != cur.From || to != 0 && to != cur.To ||
		q.KeyID != "" && q.KeyID != cur.Key || q.Model != "" && q.Model != cur.Model {
		return cur, false, invalidf("cursor", "the cursor belongs to another query: keep from, to, key and model as they were, or leave them out")
	}
	return cur, false, nil
}

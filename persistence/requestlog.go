package persistence

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"
)

// LogEntry is the metadata of one proxied request. It deliberately has no
// room for prompt or completion content.
type LogEntry struct {
	RequestID        string `msgpack:"rid" json:"request_id"`
	Time             int64  `msgpack:"t" json:"time"` // unix nanoseconds UTC (start of request)
	AccountID        string `msgpack:"acct" json:"account_id"`
	KeyID            string `msgpack:"key" json:"key_id"`
	Model            string `msgpack:"model" json:"model"`
	Route            string `msgpack:"route" json:"route"`
	Status           int    `msgpack:"status" json:"status"`
	InputTokens      int64  `msgpack:"in" json:"input_tokens"`      // uncached input
	CachedTokens     int64  `msgpack:"cached" json:"cached_tokens"` // cache read
	CacheWriteTokens int64  `msgpack:"cwrite" json:"cache_write_tokens"`
	OutputTokens     int64  `msgpack:"out" json:"output_tokens"` // excluding reasoning
	ReasoningTokens  int64  `msgpack:"reason" json:"reasoning_tokens"`
	LatencyMs        int64  `msgpack:"lat" json:"latency_ms"`
	TTFTMs           int64  `msgpack:"ttft" json:"ttft_ms"`
	Cost             int64  `msgpack:"cost" json:"-"`  // pico-USD charged to credits (see codec/money)
	ListCost         int64  `msgpack:"lcost" json:"-"` // pico-USD the usage is worth at the model's prices
	// UpstreamCost is pico-USD the usage cost the operator at the serving route's own prices
	// (catalog.Route.Cost): the route's real cost, shown to the operator only. Entries
	// written before it existed read it as ListCost.
	UpstreamCost   int64  `msgpack:"ucost,omitempty" json:"-"`
	ClientFormat   string `msgpack:"cf" json:"client_format"`
	UpstreamFormat string `msgpack:"uf" json:"upstream_format"`
	Attempts       int    `msgpack:"att" json:"attempts"`
	Stream         bool   `msgpack:"stream" json:"stream"`
	// Counted says the call counts (a served answer or a client error, docs/decisions.md
	// "Counting"): it held a slot of the burst window from Time for 60 s and counts toward
	// the throttle. AllowanceUnits is what it took from the window and weekly allowance, in
	// thousandths of a call (0 when it was beyond the plan or did not count).
	Counted        bool  `msgpack:"cnt,omitempty" json:"counted"`
	AllowanceUnits int64 `msgpack:"units,omitempty" json:"-"`
	// Seq is the entry's place in its account's write order (QuotaRecord.LogSeq); 0 for
	// entries written by AppendLog.
	Seq uint64 `msgpack:"seq,omitempty" json:"-"`
}

// CountedCall is a counted call's burst slot: its time (unix ns) and key.
type CountedCall struct {
	Time  int64
	KeyID string
}

// CountedSince returns the counted calls of an account whose log entries have Time >=
// since (unix ns), in time order: the burst windows a quota actor rebuilds when it starts.
func (s *Store) CountedSince(accountID string, since int64) ([]CountedCall, error) {
	if err := validateLogAccount(accountID); err != nil {
		return nil, fmt.Errorf("counted calls: %w", err)
	}
	prefix := dbKey(nsLog, accountID, "/")
	lower := binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), uint64(max(0, since)))
	var out []CountedCall
	dec := s.logDecoder(accountID)
	err := s.scan(lower, prefixUpper(prefix), func(k, v []byte) (bool, error) {
		e, err := dec.decodeLogPair(k, v)
		if err != nil {
			return false, err
		}
		if e.Counted {
			out = append(out, CountedCall{Time: e.Time, KeyID: e.KeyID})
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("counted calls of %s: %w", accountID, err)
	}
	return out, nil
}

// MaxLogLimit caps how many entries one ListLog call returns.
const MaxLogLimit = 1000

const (
	maxLogIDLen    = 128 // account, key and request ids
	maxLogLabelLen = 256 // model, route, formats
)

// AppendLog durably stores a batch of entries. Either all entries are
// written (one batch, committed with Sync) or, if any entry is invalid, none
// are. An entry is identified by (account, time, request id): re-appending
// the same entry overwrites it instead of duplicating it, while distinct
// requests that share a timestamp are all kept.
func (s *Store) AppendLog(entries []LogEntry) error {
	if len(entries) == 0 {
		return nil
	}
	for i := range entries {
		if err := validateLogEntry(&entries[i]); err != nil {
			return fmt.Errorf("persistence: append log: entries[%d]: %w", i, err)
		}
	}
	b := s.db.NewBatch()
	enc := s.logEncoder(s.db)
	for i := range entries {
		if err := enc.putLogEntry(b, &entries[i]); err != nil {
			b.Close()
			return fmt.Errorf("persistence: append log: entries[%d]: %w", i, err)
		}
	}
	err := s.commit(b)
	enc.done(err)
	if err != nil {
		return fmt.Errorf("persistence: append log: %w", err)
	}
	return nil
}

// ListLog returns an account's entries with from <= Time < to in ascending
// time order. A zero to means no upper bound; a zero from means the
// beginning. limit <= 0 or above MaxLogLimit means MaxLogLimit. The result is
// never nil.
func (s *Store) ListLog(accountID string, from, to time.Time, limit int) ([]LogEntry, error) {
	if err := validateLogAccount(accountID); err != nil {
		return nil, fmt.Errorf("persistence: list log: %w", err)
	}
	if limit <= 0 || limit > MaxLogLimit {
		limit = MaxLogLimit
	}
	prefix := dbKey(nsLog, accountID, "/")
	lower := binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), uint64(clampNanos(from)))
	upper := prefixUpper(prefix)
	if !to.IsZero() {
		toN := clampNanos(to)
		if toN <= clampNanos(from) {
			return []LogEntry{}, nil
		}
		if toN < math.MaxInt64 {
			// Keys at time t sort after log/<acct>/<t>, so this exclusive
			// bound drops exactly the entries with Time == to.
			upper = binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), uint64(toN))
		}
	}
	out := []LogEntry{}
	dec := s.logDecoder(accountID)
	err := s.scan(lower, upper, func(k, v []byte) (bool, error) {
		e, err := dec.decodeLogPair(k, v)
		if err != nil {
			return false, err
		}
		out = append(out, e)
		return len(out) < limit, nil
	})
	if err != nil {
		return nil, fmt.Errorf("persistence: list log of %s: %w", accountID, err)
	}
	return out, nil
}

// clampNanos maps t onto the non-negative int64 nanosecond range that the
// big-endian key encoding orders correctly; time.Time.UnixNano is undefined
// outside 1678..2262, and the zero Time falls far before that.
func clampNanos(t time.Time) int64 {
	switch {
	case t.IsZero() || t.Before(time.Unix(0, 0)):
		return 0
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// logKey is log/<acct>/<8-byte big-endian nanos><rid's key form> (logcodec.go).
func logKey(accountID string, nanos int64, rid string) []byte {
	return appendRID(logTimeKey(accountID, nanos), rid)
}

// textLogKey is the key of an entry written before the compact request id, whose id
// always followed the time as '/' and its text.
func textLogKey(accountID string, nanos int64, rid string) []byte {
	return append(append(logTimeKey(accountID, nanos), ridText), rid...)
}

// logTimeKey is log/<acct>/<8-byte big-endian nanos>: where an account's entries of that
// instant start.
func logTimeKey(accountID string, nanos int64) []byte {
	k := make([]byte, 0, len(nsLog)+len(accountID)+1+8+1+len(gatewayRIDPrefix)+24)
	k = append(k, nsLog...)
	k = append(k, accountID...)
	k = append(k, '/')
	return binary.BigEndian.AppendUint64(k, uint64(nanos))
}

// validateLogAccount rejects account ids that could break key framing: a
// '/' inside the id would let one account's prefix match another's keys.
func validateLogAccount(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: account_id is required", ErrInvalid)
	case len(id) > maxLogIDLen:
		return fmt.Errorf("%w: account_id longer than %d bytes", ErrInvalid, maxLogIDLen)
	case !printableASCII(id) || strings.IndexByte(id, '/') >= 0:
		return fmt.Errorf("%w: account_id %q must be printable ASCII without spaces or '/'", ErrInvalid, id)
	}
	return nil
}

func validateLogEntry(e *LogEntry) error {
	if err := validateLogAccount(e.AccountID); err != nil {
		return err
	}
	switch {
	case e.RequestID == "":
		return fmt.Errorf("%w: request_id is required", ErrInvalid)
	case len(e.RequestID) > maxLogIDLen || !printableASCII(e.RequestID):
		return fmt.Errorf("%w: request_id %q must be 1-%d printable ASCII bytes", ErrInvalid, e.RequestID, maxLogIDLen)
	case len(e.KeyID) > maxLogIDLen || !validText(e.KeyID):
		return fmt.Errorf("%w: key_id %q is too long or not printable", ErrInvalid, e.KeyID)
	case e.Time <= 0:
		// Negative times would sort after every positive one; zero means
		// the caller forgot to set it.
		return fmt.Errorf("%w: time %d must be positive unix nanoseconds", ErrInvalid, e.Time)
	case e.Status < 0 || e.Status > 999:
		return fmt.Errorf("%w: status %d out of range", ErrInvalid, e.Status)
	case e.Attempts < 0:
		return fmt.Errorf("%w: attempts %d is negative", ErrInvalid, e.Attempts)
	}
	for _, f := range [...]struct {
		name string
		v    string
	}{
		{"model", e.Model}, {"route", e.Route},
		{"client_format", e.ClientFormat}, {"upstream_format", e.UpstreamFormat},
	} {
		if len(f.v) > maxLogLabelLen || !validText(f.v) {
			return fmt.Errorf("%w: %s %q is too long or not printable", ErrInvalid, f.name, f.v)
		}
	}
	// Negative counters would silently corrupt usage and billing sums.
	for _, f := range [...]struct {
		name string
		v    int64
	}{
		{"input_tokens", e.InputTokens}, {"cached_tokens", e.CachedTokens},
		{"cache_write_tokens", e.CacheWriteTokens}, {"output_tokens", e.OutputTokens},
		{"reasoning_tokens", e.ReasoningTokens}, {"latency_ms", e.LatencyMs},
		{"ttft_ms", e.TTFTMs}, {"cost", e.Cost}, {"list_cost", e.ListCost},
		{"upstream_cost", e.UpstreamCost},
		{"allowance_units", e.AllowanceUnits},
	} {
		if f.v < 0 {
			return fmt.Errorf("%w: %s %d is negative", ErrInvalid, f.name, f.v)
		}
	}
	return nil
}

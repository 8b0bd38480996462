package persistence

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math/bits"
	mrand "math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/randid"
)

// The request log's disk cost: entries shaped like the gateway's (a few accounts, keys,
// models and routes; rising times; request ids as transport/api makes them: "req_" and 24
// hex digits), written in the ledger's batches, the whole store compacted, and the sstables'
// bytes divided by the number of requests. The by-id index is counted: it is part of it.

// logWorkload makes n realistic entries, in the order a gateway writes them.
type logWorkload struct {
	rng      *mrand.Rand
	accounts []string
	keys     map[string][]string
	seq      map[string]uint64
	now      int64
}

var (
	workloadModels = []string{"gpt-4o-mini", "claude-sonnet-4-5", "gemini-2.5-flash", "gpt-5"}
	workloadRoutes = map[string][]string{
		"gpt-4o-mini":       {"openai-main", "azure-eu"},
		"claude-sonnet-4-5": {"anthropic-main", "bedrock-us"},
		"gemini-2.5-flash":  {"vertex-main"},
		"gpt-5":             {"openai-main"},
	}
	workloadFormats = []string{"chat", "messages", "responses", "gemini"}
	workloadUpFmt   = map[string]string{
		"openai-main": "chat", "azure-eu": "chat", "anthropic-main": "messages",
		"bedrock-us": "messages", "vertex-main": "gemini",
	}
)

func newLogWorkload(seed uint64) *logWorkload {
	w := &logWorkload{
		rng:  mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		keys: map[string][]string{}, seq: map[string]uint64{},
		now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixNano(),
	}
	for range 8 {
		a := accountIDPrefix + w.base62(20)
		w.accounts = append(w.accounts, a)
		for range 1 + w.rng.IntN(4) {
			w.keys[a] = append(w.keys[a], keyIDPrefix+w.base62(20))
		}
	}
	return w
}

func (w *logWorkload) base62(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = randid.Alphabet[w.rng.IntN(len(randid.Alphabet))]
	}
	return string(b)
}

// requestID is transport/api's newRequestID: crypto-random, as in production, so the ids
// compress no better than the real ones.
func workloadRequestID() string {
	var b [12]byte
	rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

// next is the next request: one every ~50 ms across the gateway, the first accounts the
// busiest.
func (w *logWorkload) next() LogEntry {
	w.now += int64(1+w.rng.ExpFloat64()*50e6) + int64(w.rng.IntN(1000))
	a := w.accounts[min(len(w.accounts)-1, 8-bits.Len(uint(w.rng.IntN(256))))]
	keys := w.keys[a]
	model := workloadModels[w.rng.IntN(len(workloadModels))]
	routes := workloadRoutes[model]
	route := routes[w.rng.IntN(len(routes))]
	e := LogEntry{
		RequestID: workloadRequestID(), Time: w.now, AccountID: a, KeyID: keys[w.rng.IntN(len(keys))],
		Model: model, Route: route, Status: 200, Attempts: 1,
		InputTokens: int64(20 + w.rng.IntN(4000)), OutputTokens: int64(1 + w.rng.IntN(1500)),
		LatencyMs: int64(150 + w.rng.IntN(20000)), ClientFormat: workloadFormats[w.rng.IntN(len(workloadFormats))],
		UpstreamFormat: workloadUpFmt[route], Stream: w.rng.IntN(2) == 0, Counted: true, AllowanceUnits: 1000,
	}
	if e.Stream {
		e.TTFTMs = int64(80 + w.rng.IntN(1500))
	}
	if w.rng.IntN(3) == 0 {
		e.CachedTokens = int64(w.rng.IntN(8000))
	}
	if w.rng.IntN(10) == 0 {
		e.CacheWriteTokens = int64(w.rng.IntN(4000))
	}
	if strings.HasPrefix(model, "gpt-5") {
		e.ReasoningTokens = int64(w.rng.IntN(3000))
	}
	switch r := w.rng.IntN(100); {
	case r < 3:
		e.Status, e.OutputTokens, e.LatencyMs, e.TTFTMs, e.Counted = 429, 0, int64(w.rng.IntN(5)), 0, false
	case r < 5:
		e.Status, e.Attempts = 502, 2
	}
	e.ListCost = (e.InputTokens*2500 + e.CachedTokens*1250 + e.OutputTokens*10000) * 1000
	if w.rng.IntN(4) == 0 { // beyond the plan: charged to credits
		e.Cost, e.AllowanceUnits = e.ListCost, 0
	}
	w.seq[a]++
	e.Seq = w.seq[a]
	return e
}

// writeLogWorkload writes n entries in batches of 64, as the ledger's group commits do.
func writeLogWorkload(tb testing.TB, s *Store, w *logWorkload, n int) {
	tb.Helper()
	batch := make([]LogEntry, 0, 64)
	for i := range n {
		batch = append(batch, w.next())
		if len(batch) == cap(batch) || i == n-1 {
			if err := s.AppendLog(batch); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// compactedBytes compacts the whole store and sums the sizes of its live tables (files
// that compaction made obsolete may linger in the directory a moment).
func compactedBytes(tb testing.TB, s *Store) int64 {
	tb.Helper()
	if err := s.db.Compact(context.Background(), nil, []byte{0xff}, true); err != nil {
		tb.Fatal(err)
	}
	levels, err := s.db.SSTables()
	if err != nil {
		tb.Fatal(err)
	}
	var total int64
	for _, tables := range levels {
		for _, t := range tables {
			total += int64(t.Size)
		}
	}
	return total
}

// logDiskPerRequest writes n entries into a fresh store and returns its compacted bytes per
// request.
func logDiskPerRequest(tb testing.TB, n int) float64 {
	s, _ := openStore(tb)
	writeLogWorkload(tb, s, newLogWorkload(1), n)
	return float64(compactedBytes(tb, s)) / float64(n)
}

// BenchmarkRequestLogDisk reports the request log's bytes on disk per request after a full
// compaction, by-id index included (at most 64). Run with -benchtime 1x.
func BenchmarkRequestLogDisk(b *testing.B) {
	const n = 200_000
	for b.Loop() {
		b.ReportMetric(logDiskPerRequest(b, n), "disk-B/req")
	}
}

// TestRequestLogDiskBudget holds the layout to its 64-byte budget on a smaller run (the
// tables' fixed costs weigh more on it than on the benchmark's 200k).
func TestRequestLogDiskBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and compacts 50k entries")
	}
	got := logDiskPerRequest(t, 50_000)
	t.Logf("%.1f disk bytes a request", got)
	if got > 64 {
		t.Errorf("%.1f disk bytes a request after compaction, want <= 64", got)
	}
}

package replay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// drivers are the client formats every recording is replayed through.
var drivers = []struct {
	name string
	run  func(t *testing.T, h *harness, c cell) result
}{
	{"chat", runChat},
	{"messages", runMessages},
	{"responses", runResponses},
	{"gemini", runGemini},
}

// Catalog prices in pico-dollars per token, distinct so the log's cost shows which counts
// were billed how.
const (
	pricePrompt     = 1_000_000 // "0.000001"
	priceCompletion = 4_000_000 // "0.000004"
	priceCacheRead  = 100_000   // "0.0000001"
	priceCacheWrite = 1_250_000 // "0.00000125"
)

var unsafeID = regexp.MustCompile(`[^a-z0-9-]+`)

// cellID names a cell's catalog model, route and fake-upstream prefix.
func cellID(rec recording, client string) string {
	return "rec-" + unsafeID.ReplaceAllString(strings.ToLower(rec.Key), "-") + "-" + client
}

// catalogFor has one model per recording and client, each with one route to the fake
// upstream, of the recording's provider (credentials: the service-account file of vertex
// routes).
func catalogFor(recs []recording, upstreamURL, credentials string, clients ...string) (string, map[string]recording) {
	byID := map[string]recording{}
	var b strings.Builder
	b.WriteString("server: {first_byte_timeout: 5s, idle_stream_timeout: 5s}\nmodels:\n")
	for _, rec := range recs {
		for _, client := range clients {
			id := cellID(rec, client)
			byID[id] = rec
			fmt.Fprintf(&b, "  - id: %s\n    kind: chat\n    max_output_tokens: 4096\n", id)
			b.WriteString("    pricing: {prompt: \"0.000001\", completion: \"0.000004\", cache_read: \"0.0000001\", cache_write: \"0.00000125\"}\n")
			fmt.Fprintf(&b, "    routes:\n      - {id: %s-r, format: %s, base_url: %q, upstream_model: %q, %s}\n",
				id, rec.Meta.Format, upstreamURL+"/"+id, rec.Meta.UpstreamModel, cloudRoute(rec.Meta, credentials))
		}
	}
	return b.String(), byID
}

// TestReplayRecordedTraffic replays every recording through every client format and checks
// what each official SDK got against the recording (see check). The pass/fail matrix is
// logged at the end.
func TestReplayRecordedTraffic(t *testing.T) {
	recs := loadRecordings(t)
	var clients []string
	for _, d := range drivers {
		clients = append(clients, d.name)
	}
	h := startReplay(t, recs, clients...)

	matrix := map[string]map[string]string{}
	for _, rec := range recs {
		want, err := reference(rec)
		if err != nil {
			t.Errorf("%s: the reference reader cannot read the recording: %v", rec.Key, err)
			continue
		}
		matrix[rec.Key] = map[string]string{}
		for _, d := range drivers {
			c := cell{rec: rec, model: cellID(rec, d.name), client: d.name}
			outcome := "skip"
			t.Run(rec.Key+"/"+d.name, func(t *testing.T) {
				defer func() {
					switch {
					case t.Skipped():
						outcome = "skip"
					case t.Failed():
						outcome = "FAIL"
					default:
						outcome = "pass"
					}
				}()
				replayCell(t, h, c, want, func() result { return d.run(t, h, c) })
			})
			matrix[rec.Key][d.name] = outcome
		}
	}
	logMatrix(t, recs, matrix)
}

// startReplay starts the fake upstream serving recs and a gateway node whose catalog has a
// model for each recording and client.
func startReplay(t *testing.T, recs []recording, clients ...string) *harness {
	up := startFakeUpstream(t, nil)
	yaml, byID := catalogFor(recs, up.srv.URL, cloudCredentials(t, up.srv.URL), clients...)
	up.byID = byID
	return newHarness(nodetest.Start(t, yaml, nodetest.Options{}), up)
}

// replayCell runs one cell's client and checks what it got against want: the answer, the
// upstream requests, and the request log.
func replayCell(t *testing.T, h *harness, c cell, want answer, run func() result) {
	t.Helper()
	env := h.env
	start := time.Now()
	counted := len(want.Signatures) > 0 && c.rec.Meta.Stream // only then is the counter read
	var before float64
	if counted {
		before = droppedSignatures(t, env)
	}
	got := run()
	env.WaitIdle() // the counters and the log are written once the answer is out
	if counted {
		got.Dropped = droppedSignatures(t, env) - before
	}
	if c.client == "responses" && len(got.Calls) > 0 && got.NativeStop == "completed" {
		got.Finish = "tool_calls"
	}
	n, wrong := h.up.taken(c.model)
	for _, w := range wrong {
		t.Errorf("upstream request: %s", w)
	}
	if n == 0 && !(want.Err != nil && want.Err.Status == http.StatusTooManyRequests) {
		t.Errorf("the gateway never called the upstream")
	}
	check(t, c, want, got)
	checkLog(t, env, c, want, got, start)
}

// droppedSignatures sums the dropped-fields counter for fields naming a signature.
func droppedSignatures(t *testing.T, env *nodetest.Env) float64 {
	var sum float64
	sc := bufio.NewScanner(strings.NewReader(env.Metrics()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "modelgate_conversion_dropped_fields_total{") && strings.Contains(line, "signature") {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			sum += v
		}
	}
	return sum
}

// logEntry is the admin usage API's view of a request log entry.
type logEntry struct {
	Model            string `json:"model"`
	Status           int    `json:"status"`
	InputTokens      int64  `json:"input_tokens"`
	CachedTokens     int64  `json:"cached_tokens"`
	CacheWriteTokens int64  `json:"cache_write_tokens"`
	OutputTokens     int64  `json:"output_tokens"`
	ReasoningTokens  int64  `json:"reasoning_tokens"`
	ListCostUSD      string `json:"list_cost_usd"`
	ClientFormat     string `json:"client_format"`
}

// checkLog reads the cell's request log entry through the admin usage API: the tokens in
// disjoint counts (uncached input, output without reasoning) and the cost at the catalog
// prices; a failed call costs nothing.
func checkLog(t *testing.T, env *nodetest.Env, c cell, want answer, got result, since time.Time) {
	t.Helper()
	from := strconv.FormatInt(since.Unix()-1, 10)
	resp := env.Admin(http.MethodGet, "/admin/v1/accounts/"+env.Account.ID+"/usage?from="+from, "")
	var page struct {
		Data []logEntry `json:"data"`
	}
	if err := json.Unmarshal(nodetest.Read(t, resp), &page); err != nil {
		t.Fatalf("admin usage: %v", err)
	}
	var mine []logEntry
	for _, e := range page.Data {
		if e.Model == c.model {
			mine = append(mine, e)
		}
	}
	if len(mine) != 1 {
		t.Errorf("request log: %d entries for %s, want 1", len(mine), c.model)
		return
	}
	e := mine[0]
	if want.Err != nil || got.Err != nil {
		if e.ListCostUSD != "0" {
			t.Errorf("request log: a failed call is worth %s USD, want 0", e.ListCostUSD)
		}
		return
	}
	u := want.Usage
	if u == nil {
		return
	}
	wantE := logEntry{Model: c.model, Status: http.StatusOK, InputTokens: u.Input - u.CacheRead - u.CacheWrite,
		CachedTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite, OutputTokens: u.Output - u.Reasoning,
		ReasoningTokens: u.Reasoning, ClientFormat: c.client,
		ListCostUSD: money.Amount(listCost(u)).String()}
	e.ClientFormat = c.client // the log's format names are the gateway's; not compared
	if e != wantE {
		t.Errorf("request log entry = %+v, want %+v", e, wantE)
	}
}

// listCost is the list cost of a usage at the catalog prices, in pico-dollars.
func listCost(u *usage) int64 {
	return (u.Input-u.CacheRead-u.CacheWrite)*pricePrompt + u.CacheRead*priceCacheRead +
		u.CacheWrite*priceCacheWrite + u.Output*priceCompletion
}

// logMatrix prints recording × client outcomes.
func logMatrix(t *testing.T, recs []recording, matrix map[string]map[string]string) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-62s", "recording")
	for _, d := range drivers {
		fmt.Fprintf(&b, " %-9s", d.name)
	}
	pass, fail := 0, 0
	for _, rec := range recs {
		fmt.Fprintf(&b, "\n%-62s", rec.Key)
		for _, d := range drivers {
			o := matrix[rec.Key][d.name]
			if o == "" {
				o = "-"
			}
			pass += btoi(o == "pass")
			fail += btoi(o == "FAIL")
			fmt.Fprintf(&b, " %-9s", o)
		}
	}
	fmt.Fprintf(&b, "\n%d cells passed, %d failed\n", pass, fail)
	t.Log(b.String())
	if path := os.Getenv("REPLAY_MATRIX"); path != "" {
		_ = os.WriteFile(path, []byte(b.String()), 0o644)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

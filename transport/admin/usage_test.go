package admin_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// TestUsage: the usage API lists an account's log entries with their costs, filtered by time.
func TestUsage(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	acct := env.Account.ID
	keyID := func() string { k, _ := env.Node.Store.LookupKey(env.Key); return k.ID }()

	// Three entries written straight to the store at known times, with known costs
	// (pico-USD), to pin the bounds.
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	var old []persistence.LogEntry
	for i, cost := range []int64{1_000_000, 2_500_000, 4_000_000} {
		old = append(old, persistence.LogEntry{RequestID: "req_old" + strconv.Itoa(i), Time: day(i + 1).UnixNano(), AccountID: acct,
			KeyID: keyID, Model: "chat", Route: "a", Status: 200, Cost: cost, ListCost: cost, ClientFormat: "chat", UpstreamFormat: "chat", Attempts: 1})
	}
	if err := env.Node.Store.AppendLog(old); err != nil {
		t.Fatal(err)
	}
	// Another account's traffic never shows.
	other, _ := env.Node.Store.CreateAccount("other@example.com", "default")
	if err := env.Node.Store.AppendLog([]persistence.LogEntry{{RequestID: "req_x", Time: day(2).UnixNano(), AccountID: other.ID, Status: 200, Cost: 7}}); err != nil {
		t.Fatal(err)
	}

	// Two real requests. The simulator counts prompt words as tokens and answers 16 words:
	//   3 prompt words: 3 × 0.000001 + 16 × 0.000002 = 0.000035
	//   7 prompt words: 7 × 0.000001 + 16 × 0.000002 = 0.000039
	start := time.Now().Add(-time.Second).UTC()
	for _, text := range []string{"one two three", "one two three four five six seven"} {
		if s, raw := chatStatus(t, env, env.Key, text); s != 200 {
			t.Fatalf("chat: %d %s", s, raw)
		}
	}
	// No flush here: the usage endpoint must flush the writer itself.

	unix := func(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
	cases := []struct {
		name     string
		query    string
		requests []string // request ids, "live" for the real requests
		costs    []string
		total    string
	}{
		{name: "no bounds", query: "", requests: []string{"req_old0", "req_old1", "req_old2", "live", "live"},
			costs: []string{"0.000001", "0.0000025", "0.000004", "0.000035", "0.000039"}, total: "0.0000815"},
		{name: "rfc3339, to is exclusive", query: "?from=" + day(2).Format(time.RFC3339) + "&to=" + day(3).Format(time.RFC3339),
			requests: []string{"req_old1"}, costs: []string{"0.0000025"}, total: "0.0000025"},
		{name: "rfc3339 with offset", query: "?from=" + url.QueryEscape(day(2).In(time.FixedZone("", -5*3600)).Format(time.RFC3339)),
			requests: []string{"req_old1", "req_old2", "live", "live"}, costs: []string{"0.0000025", "0.000004", "0.000035", "0.000039"}, total: "0.0000805"},
		{name: "unix seconds", query: "?from=" + unix(day(2)) + "&to=" + unix(day(3).Add(time.Second)),
			requests: []string{"req_old1", "req_old2"}, costs: []string{"0.0000025", "0.000004"}, total: "0.0000065"},
		{name: "only to", query: "?to=" + unix(day(2)), requests: []string{"req_old0"}, costs: []string{"0.000001"}, total: "0.000001"},
		{name: "only the live requests", query: "?from=" + start.Format(time.RFC3339Nano),
			requests: []string{"live", "live"}, costs: []string{"0.000035", "0.000039"}, total: "0.000074"},
		{name: "empty window", query: "?from=" + unix(day(5)) + "&to=" + unix(day(6)), requests: []string{}, costs: []string{}, total: "0"},
		{name: "to before from", query: "?from=" + unix(day(3)) + "&to=" + unix(day(1)), requests: []string{}, costs: []string{}, total: "0"},
		{name: "empty values are no bound", query: "?from=&to=", requests: []string{"req_old0", "req_old1", "req_old2", "live", "live"},
			costs: []string{"0.000001", "0.0000025", "0.000004", "0.000035", "0.000039"}, total: "0.0000815"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := admin(t, env, http.MethodGet, "/admin/v1/accounts/"+acct+"/usage"+tc.query, "")
			if status != 200 {
				t.Fatalf("usage: %d %s", status, raw)
			}
			var out usageOut
			Decode(t, raw, &out)
			if out.Object != "list" || out.Total != tc.total || len(out.Data) != len(tc.requests) {
				t.Fatalf("usage = %s, want %d entries totalling %s", raw, len(tc.requests), tc.total)
			}
			if !bytes.Contains(raw, []byte(`"data":[`)) {
				t.Fatalf("data must be an array, not null: %s", raw)
			}
			for i, e := range out.Data {
				if e.AccountID != acct || e.CostUSD != tc.costs[i] || e.KeyID != keyID {
					t.Fatalf("data[%d] = %+v, want cost %s", i, e, tc.costs[i])
				}
				if tc.requests[i] != "live" {
					if e.RequestID != tc.requests[i] {
						t.Fatalf("data[%d] = %s, want %s", i, e.RequestID, tc.requests[i])
					}
					continue
				}
				if strings.HasPrefix(e.RequestID, "req_old") || e.Time < start.UnixNano() || e.Model != "chat" || e.Status != 200 || e.OutputTokens != 16 {
					t.Fatalf("data[%d] = %+v, want a live request", i, e)
				}
			}
			if bytes.Contains(raw, []byte(`"cost"`)) {
				t.Fatalf("the raw pico-USD cost leaks: %s", raw)
			}
		})
	}
	// The live entries carry the exact token counts the costs come from.
	status, raw := admin(t, env, http.MethodGet, "/admin/v1/accounts/"+acct+"/usage?from="+unix(start), "")
	var live usageOut
	Decode(t, raw, &live)
	if status != 200 || len(live.Data) != 2 || live.Data[0].InputTokens != 3 || live.Data[1].InputTokens != 7 {
		t.Fatalf("live usage = %d %s", status, raw)
	}

	errCases := []struct {
		name, path string
		status     int
		code       string
		param      string
	}{
		{"invalid from", "/admin/v1/accounts/" + acct + "/usage?from=yesterday", 400, "invalid_time", "from"},
		{"invalid to", "/admin/v1/accounts/" + acct + "/usage?to=2026-13-01", 400, "invalid_time", "to"},
		{"fractional unix", "/admin/v1/accounts/" + acct + "/usage?from=1.5", 400, "invalid_time", "from"},
		{"date only", "/admin/v1/accounts/" + acct + "/usage?to=2026-01-02", 400, "invalid_time", "to"},
		{"unknown account", "/admin/v1/accounts/acct_doesnotexist000000/usage", 404, "account_not_found", ""},
		{"limit 0", "/admin/v1/accounts/" + acct + "/usage?limit=0", 400, "invalid_limit", "limit"},
		{"limit over 1000", "/admin/v1/accounts/" + acct + "/usage?limit=1001", 400, "invalid_limit", "limit"},
		{"a cursor not given out", "/admin/v1/accounts/" + acct + "/usage?cursor=bm9wZQ", 400, "invalid_request", "cursor"},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := admin(t, env, http.MethodGet, tc.path, "")
			wantError(t, status, raw, tc.status, "invalid_request_error", tc.code, tc.param, tc.param)
		})
	}
}

// TestUsagePagesWithACursorAndTotalsTheWholeSelection: the usage query over HTTP. The
// usage API pages through the selection (time, key, model) with next_cursor, every page
// carrying the totals of the whole selection; a cursor used with other filters is a 400.
func TestUsagePagesWithACursorAndTotalsTheWholeSelection(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	acct := env.Account.ID
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var seeded []persistence.LogEntry
	for i := 0; i < 7; i++ {
		seeded = append(seeded, persistence.LogEntry{RequestID: "req_" + strconv.Itoa(i), Time: day.Add(time.Duration(i) * time.Hour).UnixNano(),
			AccountID: acct, KeyID: []string{"key_a", "key_b"}[i%2], Model: []string{"chat", "msg", "gem"}[i%3], Status: 200,
			InputTokens: int64(10 * i), OutputTokens: int64(i), Cost: int64(i) * 1_000_000, ListCost: int64(i) * 2_000_000,
			AllowanceUnits: 1000, Counted: true})
	}
	if err := env.Node.Store.AppendLog(seeded); err != nil {
		t.Fatal(err)
	}
	type page struct {
		Data []struct {
			RequestID      string  `json:"request_id"`
			AllowanceCalls float64 `json:"allowance_calls"`
			Counted        bool    `json:"counted"`
		} `json:"data"`
		HasMore    bool    `json:"has_more"`
		NextCursor *string `json:"next_cursor"`
		Totals     struct {
			Count          int64   `json:"count"`
			CostUSD        string  `json:"cost_usd"`
			ListCostUSD    string  `json:"list_cost_usd"`
			InputTokens    int64   `json:"input_tokens"`
			OutputTokens   int64   `json:"output_tokens"`
			AllowanceCalls float64 `json:"allowance_calls"`
		} `json:"totals"`
		Total string `json:"total_cost_usd"`
	}
	cases := []struct {
		name, query string
		ids         []string
		pages       int
		cost, list  string
		in, out     int64
	}{
		{"pages of 2", "limit=2", []string{"req_0", "req_1", "req_2", "req_3", "req_4", "req_5", "req_6"}, 4, "0.000021", "0.000042", 210, 21},
		{"one key", "limit=2&key=key_b", []string{"req_1", "req_3", "req_5"}, 2, "0.000009", "0.000018", 90, 9},
		{"one model from a time", "limit=1&model=chat&from=" + day.Add(time.Hour).Format(time.RFC3339), []string{"req_3", "req_6"}, 2, "0.000009", "0.000018", 90, 9},
		{"key and model", "key=key_a&model=gem", []string{"req_2"}, 1, "0.000002", "0.000004", 20, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ids []string
			q := tc.query
			for n := 1; ; n++ {
				status, raw := admin(t, env, http.MethodGet, "/admin/v1/accounts/"+acct+"/usage?"+q, "")
				var p page
				Decode(t, raw, &p)
				if status != 200 || p.Totals.Count != int64(len(tc.ids)) || p.Totals.CostUSD != tc.cost || p.Total != tc.cost ||
					p.Totals.ListCostUSD != tc.list || p.Totals.InputTokens != tc.in || p.Totals.OutputTokens != tc.out ||
					p.Totals.AllowanceCalls != float64(len(tc.ids)) || p.HasMore != (p.NextCursor != nil) {
					t.Fatalf("page %d: %d %s", n, status, raw)
				}
				for _, d := range p.Data {
					if d.AllowanceCalls != 1 || !d.Counted {
						t.Fatalf("page %d entry %+v", n, d)
					}
					ids = append(ids, d.RequestID)
				}
				if p.NextCursor == nil {
					if n != tc.pages || strings.Join(ids, ",") != strings.Join(tc.ids, ",") {
						t.Fatalf("%d pages of %v, want %d of %v", n, ids, tc.pages, tc.ids)
					}
					return
				}
				q = "cursor=" + url.QueryEscape(*p.NextCursor)
				if n == 1 { // the filters may come along, unchanged
					q = tc.query + "&" + q
				}
			}
		})
	}
	status, raw := admin(t, env, http.MethodGet, "/admin/v1/accounts/"+acct+"/usage?limit=1&key=key_a", "")
	var p page
	Decode(t, raw, &p)
	status, raw = admin(t, env, http.MethodGet, "/admin/v1/accounts/"+acct+"/usage?key=key_b&cursor="+url.QueryEscape(*p.NextCursor), "")
	wantError(t, status, raw, 400, "invalid_request_error", "invalid_request", "cursor", "cursor belongs to another query")
}

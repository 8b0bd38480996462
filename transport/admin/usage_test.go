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
			decode(t, raw, &out)
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
	decode(t, raw, &live)
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
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := admin(t, env, http.MethodGet, tc.path, "")
			wantError(t, status, raw, tc.status, "invalid_request_error", tc.code, tc.param, tc.param)
		})
	}
}

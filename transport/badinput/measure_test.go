package badinput_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// quotaView is the part of GET /admin/v1/accounts/{id}/quota a call can move.
type quotaView struct {
	Balance string `json:"balance_usd"`
	Spent   string `json:"spent_usd"`
	Held    string `json:"held_usd"`
	Window  struct {
		Used, Reserved float64
	} `json:"window"`
	Weekly struct {
		Used, Reserved float64
	} `json:"weekly"`
	Burst struct {
		Remaining int64 `json:"remaining"`
	} `json:"burst"`
	Images   dailyView `json:"images"`
	Video    dailyView `json:"video_seconds"`
	InFlight int       `json:"in_flight"`
}

type dailyView struct{ Used, Reserved int64 }

// usageEntry is the part of a usage entry the counting rule decides.
type usageEntry struct {
	RequestID      string  `json:"request_id"`
	Status         int     `json:"status"`
	Counted        bool    `json:"counted"`
	AllowanceCalls float64 `json:"allowance_calls"`
	Cost           string  `json:"cost_usd"`
}

// state is everything a case may move, read as an operator reads it (the admin API) where
// the API shows it; open video tasks and asset files, which it does not list, from the store.
type state struct {
	quota     quotaView
	log       []usageEntry // the case account's request log
	accounts  int          // every account of the gateway
	keys      int          // the case account's keys
	openTasks int
	assets    int
	upstream  int64 // calls every simulator route has had
}

func (s *suite) measure(t *testing.T, c *caseAccount) state {
	t.Helper()
	var st state
	s.adminGet(t, "/admin/v1/accounts/"+c.acct.ID+"/quota", &st.quota)
	var usage struct {
		Data    []usageEntry `json:"data"`
		HasMore bool         `json:"has_more"`
	}
	s.adminGet(t, "/admin/v1/accounts/"+c.acct.ID+"/usage", &usage)
	st.log = usage.Data
	var list struct {
		Data    []json.RawMessage `json:"data"`
		HasMore bool              `json:"has_more"`
	}
	s.adminGet(t, "/admin/v1/accounts?limit=1000", &list)
	if list.HasMore || usage.HasMore {
		t.Fatal("more than one page of accounts or of a case's usage")
	}
	st.accounts = len(list.Data)
	s.adminGet(t, "/admin/v1/accounts/"+c.acct.ID+"/keys", &list)
	st.keys = len(list.Data)
	tasks, err := s.env.Node.Store.ListOpenTasks()
	if err != nil {
		t.Fatal(err)
	}
	st.openTasks, st.assets = len(tasks), assetFiles(t, s.env.DataDir)
	for _, r := range simRoutes {
		st.upstream += s.env.Sim.Calls(r)
	}
	return st
}

func (s *suite) adminGet(t *testing.T, path string, v any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.env.Node.AdminURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+nodetest.AdminToken)
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw := nodetest.Read(t, resp)
	if resp.StatusCode != 200 || json.Unmarshal(raw, v) != nil {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, raw)
	}
}

// checkEffect: the counters moved exactly as the counting rule says for this answer, nothing
// was charged, held or reserved, the log has exactly the answer's entry (or none), no account,
// key or task was added, files only as the effect says, and an upstream was called only for
// a served answer.
func (s *suite) checkEffect(t *testing.T, eff effect, resp *http.Response, before, after state) {
	t.Helper()
	want := before.quota
	if eff.counted {
		calls := float64(eff.units) / 1000
		want.Window.Used += calls
		want.Weekly.Used += calls
		want.Burst.Remaining--
	}
	want.Images.Used += eff.images
	if after.quota != want {
		t.Errorf("quota\n got %+v\nwant %+v", after.quota, want)
	}
	wantLog := len(before.log)
	if eff.logged {
		wantLog++
	}
	if len(after.log) != wantLog {
		t.Fatalf("%d log entries after the case, want %d: %+v", len(after.log), wantLog, after.log)
	}
	if eff.logged {
		got := after.log[len(after.log)-1]
		units := int64(0)
		if eff.counted {
			units = eff.units
		}
		wantEntry := usageEntry{RequestID: resp.Header.Get("X-Request-Id"), Status: resp.StatusCode, Counted: eff.counted,
			AllowanceCalls: float64(units) / 1000, Cost: "0"}
		if got != wantEntry {
			t.Errorf("log entry\n got %+v\nwant %+v", got, wantEntry)
		}
	}
	calls := eff.calls
	if calls == 0 && eff.served {
		calls = 1
	}
	moved := fmt.Sprintf("accounts %+d, keys %+d, open tasks %+d, asset files %+d, upstream calls %+d",
		after.accounts-before.accounts, after.keys-before.keys, after.openTasks-before.openTasks, after.assets-before.assets,
		after.upstream-before.upstream)
	if want := fmt.Sprintf("accounts +0, keys +0, open tasks +0, asset files %+d, upstream calls %+d", eff.files, calls); moved != want {
		t.Errorf("the case moved %s; want %s", moved, want)
	}
}

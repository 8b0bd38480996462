//go:build faults

package clustertest

// The ledger check of the cluster fault suite, on every node's admin API, with the load
// halted: per account,
//
//	balance == top-ups acknowledged − Σ cost_usd of the log;  spent == total == Σ cost_usd
//	window used == Σ allowance_calls of the log (the plans' windows outlast the run)
//	no request id twice in the log; every 200 a client received in full in it exactly once
//	every node shows the same log and the same balance
//
// A 503 the client received may be in the log once (its settle committed, its answer was
// lost to the timeout) or not at all; neither is a lost or double charge.

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
)

type ledgerEntry struct {
	RequestID      string  `json:"request_id"`
	Status         int     `json:"status"`
	AllowanceCalls float64 `json:"allowance_calls"`
	CostUSD        string  `json:"cost_usd"`
}

type ledgerQuota struct {
	Balance string `json:"balance_usd"`
	Spent   string `json:"spent_usd"`
	Window  struct {
		Used float64 `json:"used"`
	} `json:"window"`
	InFlight int `json:"in_flight"`
}

// ledgerTally is what one check saw, for the run's report.
type ledgerTally struct {
	entries, answers, refusedLogged, inFlight int
}

// checkLedger checks every account on every running node; each account gets up to 10 s
// for its nodes to agree (a follower applies a moment after the leader).
func checkLedger(t *testing.T, c *Cluster, accounts []*loadAccount, what string) ledgerTally {
	t.Helper()
	var tally ledgerTally
	for _, a := range accounts {
		deadline := time.Now().Add(10 * time.Second)
		for {
			got, problems := checkAccount(t, c, a)
			if len(problems) == 0 {
				tally.entries += got.entries
				tally.answers += got.answers
				tally.refusedLogged += got.refusedLogged
				tally.inFlight += got.inFlight
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s, %s account %s:\n  %s", what, a.plan, a.id, strings.Join(problems, "\n  "))
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return tally
}

// checkAccount checks one account on every running node and says what does not add up.
func checkAccount(t *testing.T, c *Cluster, a *loadAccount) (ledgerTally, []string) {
	a.mu.Lock()
	topUps, answers := a.topUps, append([]answer(nil), a.answers...)
	a.mu.Unlock()
	var problems []string
	var tally ledgerTally
	first := ""
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		fail := func(format string, args ...any) {
			problems = append(problems, fmt.Sprintf("node %d: ", n.ID)+fmt.Sprintf(format, args...))
		}
		var q ledgerQuota
		adminJSON(t, n, "/admin/v1/accounts/"+a.id+"/quota", &q) // linearizable: the replica has applied all before it
		if q.InFlight != 0 {
			// The load is stopped: every call has ended, and a call cut by a kill no longer
			// holds once its node has started again (and published its new incarnation).
			fail("%d calls still hold a reservation with the load stopped", q.InFlight)
		}
		log, total := usageLog(t, n, a.id)
		var cost money.Amount
		var units int64
		seen := map[string]ledgerEntry{}
		for _, e := range log {
			if _, dup := seen[e.RequestID]; dup {
				fail("request %s is in the log twice", e.RequestID)
			}
			seen[e.RequestID] = e
			cost += mustMoney(t, e.CostUSD)
			units += int64(math.Round(e.AllowanceCalls * 1000))
		}
		if balance := mustMoney(t, q.Balance); balance != topUps-cost || mustMoney(t, q.Spent) != cost || mustMoney(t, total) != cost {
			fail("balance %s, spent %s, usage total %s; want top-ups %s − Σ cost_usd %s = %s, spent and total %s",
				q.Balance, q.Spent, total, topUps, cost, topUps-cost, cost)
		}
		if int64(math.Round(q.Window.Used*1000)) != units {
			fail("window used %v; the log's allowance_calls say %v", q.Window.Used, float64(units)/1000)
		}
		refusedLogged := 0
		for _, ans := range answers {
			e, ok := seen[ans.rid]
			switch {
			case ans.status == http.StatusOK && !ok:
				fail("the answer %s (node %d, stream %v) the client received in full is not in the log", ans.rid, ans.node, ans.stream)
			case ans.status == http.StatusOK && e.Status != http.StatusOK:
				fail("the answer %s: the client got 200, the log says %d", ans.rid, e.Status)
			case ans.status != http.StatusOK && ok:
				refusedLogged++
			}
		}
		if print := fmt.Sprintf("%d entries costing %s, balance %s, window %v", len(log), cost, q.Balance, q.Window.Used); first == "" {
			first = print
		} else if print != first {
			fail("%s; another node: %s", print, first)
		}
		tally = ledgerTally{entries: len(log), answers: len(answers), refusedLogged: refusedLogged, inFlight: q.InFlight}
	}
	return tally, problems
}

// usageLog reads an account's whole log on n through the usage API's cursor, and its total.
func usageLog(t *testing.T, n *Node, acct string) ([]ledgerEntry, string) {
	t.Helper()
	var all []ledgerEntry
	q := url.Values{"limit": {"500"}}
	for {
		var page struct {
			Data       []ledgerEntry `json:"data"`
			NextCursor *string       `json:"next_cursor"`
			Totals     struct {
				CostUSD string `json:"cost_usd"`
			} `json:"totals"`
		}
		adminJSON(t, n, "/admin/v1/accounts/"+acct+"/usage?"+q.Encode(), &page)
		all = append(all, page.Data...)
		if page.NextCursor == nil {
			return all, page.Totals.CostUSD
		}
		q.Set("cursor", *page.NextCursor)
	}
}

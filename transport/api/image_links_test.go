package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/fetch/fetchtest"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// TestAClientThatLeavesDuringTheImageDownload: a client that goes while the gateway downloads
// the image a route linked to is 499, not the route's failure (the download is cut with the
// call, and the route stays healthy), and the day's image is released.
func TestAClientThatLeavesDuringTheImageDownload(t *testing.T) {
	cat := strings.Replace(nodetest.DefaultCatalog, "max_body_bytes: 65536}", "max_body_bytes: 65536, fetch_allow: ["+fetchtest.PublicPrefix+"]}", 1)
	env := nodetest.Start(t, cat, nodetest.Options{})
	arrived, cut := make(chan struct{}), make(chan struct{})
	link := fetchtest.Public(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done() // never answers: only the gateway's leaving ends it
		close(cut)
	}))
	env.Sim.SetBehavior("i", simulator.Behavior{ImageURL: link + "/slow.png"})

	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.Node.URL+"/v1/images/generations", strings.NewReader(`{"model":"img","prompt":"a fox"}`))
	req.Header.Set("Authorization", "Bearer "+env.Key)
	if resp, err := env.Client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the call was answered %d after the client left", resp.StatusCode)
	}
	<-cut
	if e := lastEntry(t, env); e.Status != 499 || e.Route != "i" || e.CostUSD != "0" {
		t.Fatalf("log %+v cost %s", e.LogEntry, e.CostUSD)
	}
	st := waitState(t, env, "i", func(s *routehealth.State) bool { return s.InFlight == 0 && s.Successes+s.Failures == 1 })
	if st.Failures != 0 || st.Streak != 0 {
		t.Fatalf("route i: %+v", st)
	}
	q := string(nodetest.Read(t, env.Admin(http.MethodGet, "/admin/v1/accounts/"+env.Account.ID+"/quota", "")))
	if !strings.Contains(q, `"images":{"used":0,"reserved":0`) {
		t.Fatalf("quota %s", q)
	}
}

package admin_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

type routeOut struct {
	Route     string  `json:"route"`
	Successes uint64  `json:"successes"`
	InFlight  int64   `json:"in_flight"`
	LatencyMS float64 `json:"latency_ms"`
	TTFTMS    float64 `json:"ttft_ms"`
}

// GET /admin/v1/routes lists every catalog route in id order with its health; a route that
// never had a report is available with nothing to tell.
func TestRoutesView(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	status, raw := admin(t, env, http.MethodGet, "/admin/v1/routes", "")
	if status != 200 {
		t.Fatalf("status %d: %s", status, raw)
	}
	var all struct {
		Object string            `json:"object"`
		Data   []json.RawMessage `json:"data"`
	}
	Decode(t, raw, &all)
	var ids []string
	for _, r := range all.Data {
		var v routeOut
		Decode(t, r, &v)
		ids = append(ids, v.Route)
	}
	if all.Object != "list" || strings.Join(ids, ",") != "a,b,c,e,g,gi,i,m,r,v" {
		t.Fatalf("object %q routes %v", all.Object, ids)
	}
	want := `{"route":"a","model":"chat","format":"chat","provider":"","auth":"api_key","token_refresh_at":null,"weight":3,"zdr":true,"state":"healthy","available":true,"last_resort":false,` +
		`"error_rate":0,"window_calls":0,"window_failures":0,"effective_weight":3,"cooldown_until":null,` +
		`"cooldown_remaining_seconds":0,"cooldown_reason":null,"probing":false,"last_refusal":null,"streak":0,"successes":0,` +
		`"failures":0,"in_flight":0,"latency_ms":0,"ttft_ms":0}`
	if string(all.Data[0]) != want {
		t.Fatalf("route a:\n got %s\nwant %s", all.Data[0], want)
	}

	// A served request shows on its route once the route's actor has recorded it, its time
	// to first byte (the headers of a whole answer) within its latency.
	nodetest.Read(t, env.Post("/v1/embeddings", env.Key, `{"model":"embed","input":"hi"}`))
	for deadline := time.Now().Add(3 * time.Second); ; {
		_, raw = admin(t, env, http.MethodGet, "/admin/v1/routes", "")
		var view struct{ Data []routeOut }
		Decode(t, raw, &view)
		e := view.Data[3]
		if e.Route == "e" && e.Successes == 1 && e.InFlight == 0 && e.LatencyMS > 0 && e.TTFTMS > 0 && e.TTFTMS <= e.LatencyMS {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("route e after one request: %+v", e)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type frozenClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *frozenClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// The routes view and /metrics show each route's health state, its error
// rate over the window, the window's counts and the weight picking uses now. Route c is the
// only route of its model; 20 calls fail in the simulator's exact pattern.
func TestRouteHealthIsVisible(t *testing.T) {
	cases := []struct {
		name     string
		fraction float64
		want     string // the view's health fields
		metrics  []string
	}{
		{"10 % failing: degraded, weight halved", 0.1,
			`{"state":"degraded","available":true,"last_resort":false,"error_rate":0.1,"window_calls":20,"window_failures":2,` +
				`"effective_weight":0.5,"cooldown_until":null,"cooldown_remaining_seconds":0,"cooldown_reason":null,"probing":false}`,
			[]string{`modelgate_route_state{route="c",state="degraded"} 1`, `modelgate_route_state{route="c",state="healthy"} 0`,
				`modelgate_route_error_rate{route="c"} 0.1`, `modelgate_route_effective_weight{route="c"} 0.5`, `modelgate_route_available{route="c"} 1`}},
		{"30 % failing: resting for its error rate, the last resort", 0.3,
			`{"state":"cooling","available":false,"last_resort":true,"error_rate":0.3,"window_calls":20,"window_failures":6,` +
				`"effective_weight":0,"cooldown_until":"2026-11-22T12:00:30Z","cooldown_remaining_seconds":30,"cooldown_reason":"error_rate","probing":true}`,
			[]string{`modelgate_route_state{route="c",state="cooling"} 1`, `modelgate_route_state{route="c",state="degraded"} 0`,
				`modelgate_route_error_rate{route="c"} 0.3`, `modelgate_route_effective_weight{route="c"} 0`, `modelgate_route_available{route="c"} 0`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := &frozenClock{now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
			p := routehealth.DefaultPolicy()
			p.Now = clk.Now
			env := nodetest.Start(t, "", nodetest.Options{Health: p})
			env.Sim.SetBehavior("c", simulator.Behavior{FailStatus: 500, FailFraction: c.fraction})
			for i := 0; i < 20; i++ {
				nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, `{"model":"open-only","messages":[{"role":"user","content":"hi"}]}`))
			}
			for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(2 * time.Millisecond) {
				if st := env.Node.Board.State("c"); st != nil && st.Successes+st.Failures == 20 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("route c never recorded 20 attempts: %+v", env.Node.Board.State("c"))
				}
			}
			_, raw := admin(t, env, http.MethodGet, "/admin/v1/routes", "")
			var view struct{ Data []map[string]json.RawMessage }
			Decode(t, raw, &view)
			var got []string
			for _, r := range view.Data {
				if string(r["route"]) != `"c"` {
					continue
				}
				for _, k := range []string{"state", "available", "last_resort", "error_rate", "window_calls", "window_failures",
					"effective_weight", "cooldown_until", "cooldown_remaining_seconds", "cooldown_reason", "probing"} {
					got = append(got, `"`+k+`":`+string(r[k]))
				}
			}
			if g := "{" + strings.Join(got, ",") + "}"; g != c.want {
				t.Fatalf("route c:\n got %s\nwant %s", g, c.want)
			}
			metrics := env.Metrics()
			for _, want := range c.metrics {
				if !strings.Contains(metrics, want+"\n") {
					t.Errorf("metrics lack %s", want)
				}
			}
		})
	}
}

package admin_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

type routeOut struct {
	Route     string  `json:"route"`
	Successes uint64  `json:"successes"`
	InFlight  int64   `json:"in_flight"`
	LatencyMS float64 `json:"latency_ms"`
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
	decode(t, raw, &all)
	var ids []string
	for _, r := range all.Data {
		var v routeOut
		decode(t, r, &v)
		ids = append(ids, v.Route)
	}
	if all.Object != "list" || strings.Join(ids, ",") != "a,b,c,e,g,gi,i,m,r,v" {
		t.Fatalf("object %q routes %v", all.Object, ids)
	}
	want := `{"route":"a","model":"chat","format":"chat","weight":3,"zdr":true,"available":true,"cooldown_until":null,` +
		`"cooldown_remaining_seconds":0,"cooldown_reason":null,"probing":false,"last_refusal":null,"streak":0,"successes":0,` +
		`"failures":0,"in_flight":0,"latency_ms":0}`
	if string(all.Data[0]) != want {
		t.Fatalf("route a:\n got %s\nwant %s", all.Data[0], want)
	}

	// A served request shows on its route once the route's actor has recorded it.
	nodetest.Read(t, env.Post("/v1/embeddings", env.Key, `{"model":"embed","input":"hi"}`))
	for deadline := time.Now().Add(3 * time.Second); ; {
		_, raw = admin(t, env, http.MethodGet, "/admin/v1/routes", "")
		var view struct{ Data []routeOut }
		decode(t, raw, &view)
		e := view.Data[3]
		if e.Route == "e" && e.Successes == 1 && e.InFlight == 0 && e.LatencyMS > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("route e after one request: %+v", e)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

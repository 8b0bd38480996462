package badinput_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/fetch/fetchtest"
)

// The gateway's own downloads (transport/fetch): an image route whose answer links somewhere
// the gateway must not go. Each case has image models of its own, one route each (a failing
// route cools down after three failures, which would turn a later case's 502 into a 529), and
// the catalog admits 127.0.0.2 on purpose (server.fetch_allow): the link's first host stands
// for one of the internet, which a test has no other address for.
func init() {
	models := ""
	for _, m := range []struct{ id, routes string }{
		{"img-to-loopback", route("fa", 1)},
		{"img-to-metadata", route("fb", 1)},
		{"img-to-localhost", route("fc", 1)},
		{"img-to-a-page", route("fd", 1)},
		{"img-failover", route("fe", 1) + route("ff", 0)},
	} {
		models += "  - id: " + m.id + "\n    kind: image\n    routes:\n" + m.routes
	}
	suiteCatalog = strings.Replace(suiteCatalog, "removed:\n", models+"removed:\n", 1)
	suiteCatalog = strings.Replace(suiteCatalog, "max_body_bytes: 65536, ", "max_body_bytes: 65536, fetch_allow: ["+fetchtest.PublicPrefix+"], ", 1)
	simRoutes = append(simRoutes, "fa", "fb", "fc", "fd", "fe", "ff")
}

func route(id string, weight int) string {
	return fmt.Sprintf("      - {id: %s, format: chat, base_url: \"{{SIM}}/r/%s/v1\", upstream_model: up-%s, credential_env: NODETEST_SIM_KEY, weight: %d}\n",
		id, id, id, weight)
}

// trap is a case's servers (fetchtest): the internal one on loopback, and the link's host
// on 127.0.0.2 that redirects to where the case says, or serves the internal page itself.
type trap struct{ internal *fetchtest.Internal }

// set starts the servers for the case's test and points the simulator route's image links at
// the link's host; to is where it redirects ("" serves the page), {port} the internal server.
func (tr *trap) set(t *testing.T, s *suite, route, to string) {
	tr.internal = fetchtest.StartInternal(t)
	to = strings.ReplaceAll(to, "{port}", tr.internal.Port)
	link := fetchtest.Public(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to == "" {
			fetchtest.Page(w, r)
			return
		}
		http.Redirect(w, r, to, http.StatusFound)
	}))
	s.env.Sim.SetBehavior(route, simulator.Behavior{ImageURL: link + "/images/img_1.png?sig=secret"})
}

// untouched: the internal server saw no connection.
func (tr *trap) untouched(t *testing.T) {
	if n := tr.internal.Accepted(); n != 0 {
		t.Errorf("the internal server on loopback accepted %d connections", n)
	}
}

// fetchCases: /v1/images/generations on routes whose image link the gateway must refuse. No
// route left is a 502 that costs nothing: not counted, the day's image released, nothing
// stored; a route left serves the image, whose asset is served inert.
func fetchCases() []badCase {
	const p = "/v1/images/generations"
	noRouteLeft := chatErr(502, "upstream_error", "upstream_error", "", "failed on every route tried; no charge was made")
	refusedLink := effect{logged: true, calls: 1}
	c := func(name, model, route, to string, want answer, eff effect) badCase {
		tr := &trap{}
		return post("fetch", name, p, `{"model":"`+model+`","prompt":"a lighthouse"}`, want, eff).
			before(func(t *testing.T, s *suite, _ *caseAccount) { tr.set(t, s, route, to) }).
			checking(func(t *testing.T, s *suite, c *caseAccount, raw []byte) {
				tr.untouched(t)
				if strings.Contains(string(raw), "secret") || strings.Contains(string(raw), "127.0.0.2") {
					t.Errorf("the answer names the link: %s", raw)
				}
			})
	}
	failover := c("a link redirecting to loopback, a route left", "img-failover", "fe", "http://127.0.0.1:{port}/admin", ok200,
		effect{logged: true, counted: true, units: 1000, calls: 2, images: 1, files: 1})
	check := failover.check
	failover.check = func(t *testing.T, s *suite, c *caseAccount, raw []byte) {
		check(t, s, c, raw)
		servedInert(t, s, raw)
	}
	return []badCase{
		c("a link redirecting to loopback", "img-to-loopback", "fa", "http://127.0.0.1:{port}/admin", noRouteLeft, refusedLink),
		c("a link redirecting to the metadata address", "img-to-metadata", "fb", "http://169.254.169.254/latest/meta-data/iam/", noRouteLeft, refusedLink),
		c("a link redirecting to localhost", "img-to-localhost", "fc", "http://localhost:{port}/admin", noRouteLeft, refusedLink),
		c("a link to a page labelled image/png", "img-to-a-page", "fd", "", noRouteLeft, refusedLink),
		failover,
	}
}

// servedInert: the image the answer links to is served as the PNG it is, with the headers
// that keep a browser from running it.
func servedInert(t *testing.T, s *suite, raw []byte) {
	t.Helper()
	var out struct{ Data []struct{ URL string } }
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Data) != 1 {
		t.Fatalf("the answer: %v %s", err, raw)
	}
	resp, err := s.client.Get(out.Data[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := fmt.Sprint(resp.StatusCode, resp.Header.Get("Content-Type"), "|", resp.Header.Get("X-Content-Type-Options"), "|",
		resp.Header.Get("Content-Security-Policy"), "|", resp.Header.Get("Cross-Origin-Resource-Policy"))
	if want := "200image/png|nosniff|default-src 'none'; sandbox|cross-origin"; got != want {
		t.Errorf("the asset is served as %s, want %s", got, want)
	}
}

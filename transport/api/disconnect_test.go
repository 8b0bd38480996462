package api_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// TestClientThatLeavesMidStream: a client that closes its request while the answer streams
// (curl … | head -c 1500) is 499 in the log and the metrics, not the upstream's failure: the
// route stays healthy (one success, no failure) and the call is billed by the usage known
// when the client left (messages routes report the input at the start; chat routes only at
// the end). Every path is covered: the chat relay, a same-format relay, a conversion.
func TestClientThatLeavesMidStream(t *testing.T) {
	cases := []struct {
		name, path, model, body string
		route, endpoint         string
		input                   int64  // billed input tokens: the usage known when the client left
		cost                    string // their price
	}{
		{"chat_to_chat", "/v1/chat/completions", "chat", `"messages":[{"role":"user","content":"reply with 60 words"}]`, "a", "chat", 0, "0"},
		{"messages_to_messages", "/v1/messages", "msg", `"max_tokens":200,"messages":[{"role":"user","content":"reply with 60 words"}]`, "m", "messages", 4, "0.000012"},
		{"chat_to_messages", "/v1/chat/completions", "msg", `"messages":[{"role":"user","content":"reply with 60 words"}]`, "m", "chat", 4, "0.000012"},
		{"responses_to_chat", "/v1/responses", "chat", `"input":"reply with 60 words"`, "a", "responses", 0, "0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := nodetest.Start(t, "", nodetest.Options{})
			onlyRoute(env, "a")
			env.Sim.SetBehavior(c.route, simulator.Behavior{TokensPerSecond: 20}) // three seconds of answer
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.Node.URL+c.path, strings.NewReader(`{"model":"`+c.model+`","stream":true,`+c.body+`}`))
			req.Header.Set("Authorization", "Bearer "+env.Key)
			req.Header.Set("anthropic-version", "2023-06-01")
			resp, err := env.Client.Do(req)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("%v %v", resp, err)
			}
			// Read until the answer has begun (its first delta), then leave.
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() && !strings.Contains(sc.Text(), `"delta"`) {
			}
			cancel()
			resp.Body.Close()

			e := lastEntry(t, env)
			if e.Status != 499 || e.Route != c.route || e.InputTokens != c.input || e.OutputTokens != 0 || e.CostUSD != c.cost {
				t.Fatalf("log %+v cost %s", e.LogEntry, e.CostUSD)
			}
			st := waitState(t, env, c.route, func(s *routehealth.State) bool { return s.InFlight == 0 && s.Successes+s.Failures == 1 })
			if st.Failures != 0 || st.Streak != 0 {
				t.Fatalf("route %s: %+v", c.route, st)
			}
			metrics := env.Metrics()
			want := `modelgate_requests_total{endpoint="` + c.endpoint + `",model="` + c.model + `",route="` + c.route + `",status="499"} 1`
			if !strings.Contains(metrics, want+"\n") || strings.Contains(metrics, `status="502"`) ||
				!strings.Contains(metrics, `modelgate_upstream_attempts_total{outcome="ok",route="`+c.route+`"} 1`+"\n") {
				t.Fatalf("/metrics lacks %s, or counts a 502 or a failed attempt:\n%s", want, grepLines(metrics, "modelgate_requests_total", "modelgate_upstream_attempts_total"))
			}
		})
	}
}

// grepLines keeps the lines of text that start with one of the prefixes.
func grepLines(text string, prefixes ...string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(line, p) {
				out = append(out, line)
			}
		}
	}
	return strings.Join(out, "\n")
}

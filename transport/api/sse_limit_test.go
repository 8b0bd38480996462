package api_test

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/codec/sse"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// An upstream stream with a line over sse.MaxLine ends its attempt as an upstream failure,
// whatever the client's format: before the client's first byte the call fails over to the
// standby route and is served (and billed) from it; after it, the client's stream ends with
// its format's error event, and the call is logged 502, counted nothing and charged nothing.
// A line at the limit is read whole and the call is served. The gateway never holds more of
// the line than the limit and one read (codec/sse).
func TestAnUpstreamLineOverTheLimitFailsTheAttempt(t *testing.T) {
	over, at := sse.MaxLine+1, sse.MaxLine
	cases := []struct {
		name      string
		path      string
		body      string
		long      int // the line's length on route p (the standby s is healthy)
		after     int // chunks before it
		status    int // the log's
		route     string
		attempts  int
		ending    string // how the client's stream ends
		counted   int    // calls the window counts
		failedOnP int    // attempts of p counted failed
	}{
		{"before the first byte, chat", "/v1/chat/completions", longChatStream, over, 0, 200, "s", 2, "data: [DONE]\n\n", 1, 1},
		{"before the first byte, messages", "/v1/messages", longMessagesStream, over, 0, 200, "s", 2, "event: message_stop", 1, 1},
		{"after the first byte, chat", "/v1/chat/completions", longChatStream, over, 3, 502, "p", 1, `"code":"stream_interrupted"`, 0, 1},
		{"after the first byte, messages", "/v1/messages", longMessagesStream, over, 3, 502, "p", 1, "event: error", 0, 1},
		{"a line at the limit", "/v1/chat/completions", longChatStream, at, 3, 200, "p", 1, "data: [DONE]\n\n", 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := nodetest.Start(t, failoverCatalog, nodetest.Options{})
			env.Sim.SetBehavior("p", simulator.Behavior{LongLineBytes: c.long, LongLineAfterChunks: c.after})
			resp := env.Post(c.path, env.Key, c.body)
			raw := string(nodetest.Read(t, resp))
			if resp.StatusCode != 200 || !strings.Contains(raw, c.ending) || strings.Contains(raw, "xxxx") {
				t.Fatalf("%d, want 200 ending with %q:\n%.2000s", resp.StatusCode, c.ending, raw)
			}
			if c.status == 502 && !strings.Contains(raw, "a line over 8 MiB") {
				t.Errorf("the error event does not say why: %.2000s", raw)
			}
			es := usage(t, env)
			if len(es) != 1 || es[0].Status != c.status || es[0].Route != c.route || es[0].Attempts != c.attempts {
				t.Fatalf("log %+v; want one entry: status %d, route %s, %d attempts", es, c.status, c.route, c.attempts)
			}
			wantCost := "0"
			if c.status == 200 {
				in, _ := money.Parse("0.000001") // failoverCatalog's prices
				out, _ := money.Parse("0.000002")
				wantCost = (in.Times(es[0].InputTokens) + out.Times(es[0].OutputTokens)).String()
			}
			if es[0].CostUSD != wantCost || es[0].ChargedUSD != "0" {
				t.Errorf("list cost %s, charged %s; want %s and 0 (within the plan)", es[0].CostUSD, es[0].ChargedUSD, wantCost)
			}
			if q := quotaOf(t, env); !strings.Contains(q, `"window":{"used":`+itoa(c.counted)+`,`) {
				t.Errorf("quota %s; want %d call counted", q, c.counted)
			}
			if m := env.Metrics(); c.failedOnP > 0 && !strings.Contains(m, `modelgate_upstream_attempts_total{outcome="failed",route="p"} 1`+"\n") {
				t.Errorf("metrics lack p's failed attempt:\n%s", grepLines(m, "modelgate_upstream_attempts_total"))
			}
		})
	}
}

const (
	longChatStream     = `{"model":"chat","stream":true,"messages":[{"role":"user","content":"reply with 10 words"}]}`
	longMessagesStream = `{"model":"chat","stream":true,"max_tokens":64,"messages":[{"role":"user","content":"reply with 10 words"}]}`
)

package harness

import (
	"fmt"
	"slices"
	"strings"
)

// Targets, in the order every repetition visits them.
const (
	TargetDirect  = "direct"  // the simulator itself
	TargetProxy   = "proxy"   // httputil.ReverseProxy in front of the simulator: the floor
	TargetGateway = "gateway" // modelgate in front of the simulator, billing and logging on
)

// AllTargets is the interleaving order: direct, proxy, gateway, direct, proxy, gateway, ...
var AllTargets = []string{TargetDirect, TargetProxy, TargetGateway}

// Phase kinds.
const (
	PhaseC1        = "c1"         // closed loop, one connection: latency with no queueing
	PhaseSaturated = "saturated"  // closed loop, Config.Concurrency connections: peak throughput
	PhaseFixedRate = "fixed-rate" // open loop at the same offered rate for every target: CPU per request
	PhaseBurst     = "burst"      // open loop at twice the burst plan's limit (gateway only)
)

// Scenario is one kind of call, measured on each target.
type Scenario struct {
	Name        string
	Description string
	Path        string // after the target's .../v1
	Body        string // {{MODEL}} is replaced by the target's model
	Header      map[string]string
	KeyHeader   string // "Authorization" (Bearer) or "x-api-key"
	StreamEnd   string // the stream terminator that makes an answer complete ("" for plain)
	// GatewayModel is the model the gateway is asked for; UpstreamModel what the floor
	// targets send the simulator, on Route.
	GatewayModel, UpstreamModel string
	Route                       string
	CountRoutes                 []string // simulator routes whose calls are counted per run
	Phases                      []string
	Targets                     []string
	OKStatus                    []int // default 200
	// Keys says which gateway keys the scenario uses: "" (the one bench key), "hot" (one key
	// per account of HotAccounts, round-robin), "accounts" (one key per account of the
	// many-accounts set) or "burst" (a fresh burst-plan account per repetition).
	Keys string
	// Peers says the peer targets (peers.go) take part: the scenario is on PeerRoute.
	Peers bool
	// FailRoute, if set, fails FailFraction of its calls with 500 during the scenario.
	FailRoute    string
	FailFraction float64
}

// HotAccounts is how many accounts chat-64-accounts spreads its calls over: few enough that
// every one is called many times a second (its quota actor stays active), many enough that
// the calls of one account rarely queue behind each other.
const HotAccounts = 64

// simModel is the simulator's chat model, what the floor targets and the peers ask for.
const simModel = "sim-model"

// Stream reports whether the scenario's answers are streams.
func (s *Scenario) Stream() bool { return s.StreamEnd != "" }

const chatBody = `{"model":"{{MODEL}}","messages":[{"role":"user","content":"Say hello, reply with 16 words"}]}`
const chatStreamBody = `{"model":"{{MODEL}}","stream":true,"messages":[{"role":"user","content":"Say hello, reply with 16 words"}]}`
const messagesStreamBody = `{"model":"{{MODEL}}","max_tokens":256,"stream":true,"messages":[{"role":"user","content":"Say hello, reply with 16 words"}]}`
const responsesStreamBody = `{"model":"{{MODEL}}","stream":true,"input":"Say hello, reply with 16 words"}`

// Scenarios returns the scenario catalogue, in suite order.
func Scenarios() []*Scenario {
	chat := func(name, desc, body, end string) *Scenario {
		return &Scenario{Name: name, Description: desc, Path: "/chat/completions", Body: body, KeyHeader: "Authorization",
			StreamEnd: end, GatewayModel: "bench-chat", UpstreamModel: simModel, Route: RouteChat, CountRoutes: []string{RouteChat},
			Phases: []string{PhaseC1, PhaseSaturated, PhaseFixedRate}, Targets: AllTargets}
	}
	plain := chat("chat-plain", "POST /v1/chat/completions, a 16-word answer as one JSON body", chatBody, "")
	stream := chat("chat-stream", "POST /v1/chat/completions with stream:true, 18 SSE chunks and data: [DONE]", chatStreamBody, "data: [DONE]")
	plain.Peers, stream.Peers = true, true
	hot := chat("chat-64-accounts", "chat-plain spread round-robin over 64 accounts (one key each), every one kept active: what many callers at once cost, beside chat-plain's one account", chatBody, "")
	hot.Phases, hot.Keys, hot.Targets = []string{PhaseSaturated, PhaseFixedRate}, "hot", []string{TargetProxy, TargetGateway}
	conv := chat("messages-to-chat-stream", "POST /v1/messages streamed, to a model whose route speaks chat (the gateway converts the stream; the floor targets call the simulator's own /v1/messages)",
		messagesStreamBody, "event: message_stop")
	conv.Path, conv.KeyHeader, conv.Header = "/messages", "x-api-key", map[string]string{"anthropic-version": "2023-06-01"}
	conv.Phases, conv.Targets = []string{PhaseC1, PhaseSaturated}, []string{TargetProxy, TargetGateway}
	resp := &Scenario{Name: "responses-stream", Description: "POST /v1/responses streamed, to a Responses-format route",
		Path: "/responses", Body: responsesStreamBody, KeyHeader: "Authorization", StreamEnd: "event: response.completed",
		GatewayModel: "bench-responses", UpstreamModel: "sim-gpt", Route: RouteResponses, CountRoutes: []string{RouteResponses},
		Phases: []string{PhaseC1, PhaseSaturated}, Targets: []string{TargetProxy, TargetGateway}}
	many := chat("accounts-10k", "chat-plain spread round-robin over many accounts (one key each, created through the admin API before the run)", chatBody, "")
	many.Phases, many.Keys, many.Targets = []string{PhaseSaturated, PhaseFixedRate}, "accounts", []string{TargetProxy, TargetGateway}
	fo := chat("failover", "chat-plain on a model with three routes, one failing 30% of its calls with 500, which the gateway rests for its error rate after its first 20 attempts (the floor targets call a healthy route)", chatBody, "")
	fo.GatewayModel, fo.Route, fo.CountRoutes = "bench-failover", RouteFailB, []string{RouteFailA, RouteFailB, RouteFailC}
	fo.FailRoute, fo.FailFraction, fo.Phases, fo.Targets = RouteFailA, 0.3, []string{PhaseC1, PhaseSaturated}, []string{TargetProxy, TargetGateway}
	burst := chat("burst-limit", "chat-plain from one account of a plan with a burst limit, offered at twice the limit: the 429s are expected and counted as correct",
		chatBody, "")
	burst.Phases, burst.Targets, burst.Keys, burst.OKStatus = []string{PhaseBurst}, []string{TargetGateway}, "burst", []int{200, 429}
	auto := chat("auto", "chat-plain to an auto model of three candidates, judged per call (key, ZDR, tools, images, reasoning, price ceiling, context, health) and ordered by price; compare its gateway CPU/req with chat-plain's for the choice's cost", chatBody, "")
	auto.GatewayModel, auto.Route, auto.CountRoutes = "bench-auto", RouteAuto, []string{RouteAuto}
	auto.Phases, auto.Targets = []string{PhaseSaturated, PhaseFixedRate}, []string{TargetProxy, TargetGateway}
	return []*Scenario{plain, stream, hot, conv, resp, many, fo, burst, auto}
}

// ClusterScenario is the scenario with no HTTP target (bench/clusterbench): charges through
// the quota service on one node and on an engine cluster, in the bench's own process. It
// runs after the HTTP scenarios.
const ClusterScenario = "cluster"

// ScenarioNames lists the HTTP scenarios (ClusterScenario is the one more).
func ScenarioNames() []string {
	var out []string
	for _, s := range Scenarios() {
		out = append(out, s.Name)
	}
	return out
}

func allScenarios(names []string) bool {
	return len(names) == 0 || (len(names) == 1 && names[0] == "all")
}

// WantsCluster says whether names ("all" or empty: every one) include the cluster scenario.
func WantsCluster(names []string) bool {
	return allScenarios(names) || slices.Contains(names, ClusterScenario)
}

// SelectScenarios returns the named HTTP scenarios ("all" or empty: every one), in suite
// order; the cluster scenario is known and left out (WantsCluster).
func SelectScenarios(names []string) ([]*Scenario, error) {
	all := Scenarios()
	if allScenarios(names) {
		return all, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = n != ClusterScenario
	}
	var out []*Scenario
	for _, s := range all {
		if want[s.Name] {
			out = append(out, s)
			delete(want, s.Name)
		}
	}
	delete(want, ClusterScenario)
	if len(want) > 0 {
		var unknown []string
		for n := range want {
			unknown = append(unknown, n)
		}
		return nil, fmt.Errorf("unknown scenario %s (known: %s)", strings.Join(unknown, ", "), strings.Join(append(ScenarioNames(), ClusterScenario), ", "))
	}
	return out, nil
}

// ScenarioByName finds one scenario.
func ScenarioByName(name string) (*Scenario, error) {
	s, err := SelectScenarios([]string{name})
	if err != nil {
		return nil, err
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("scenario %s sends no HTTP request", name)
	}
	return s[0], nil
}

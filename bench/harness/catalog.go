package harness

import (
	"strconv"
	"strings"
)

// SimCredentialEnv names the variable that holds the simulator credential in the gateway's
// environment.
const SimCredentialEnv = "MODELGATE_BENCH_SIM_KEY"

// The plans of the bench catalog: PlanBench admits automated clients with no limit at all
// (no window, weekly or burst limit, so no throttle either): the gateway does every
// admission and billing step and refuses nothing. PlanBurst differs only by its burst limit.
const (
	PlanBench = "bench"
	PlanBurst = "bench-burst"
)

// Simulator routes. Every scenario uses its own, so the simulator's per-route call counters
// tell what reached the upstream.
const (
	RouteChat      = "chat"
	RouteResponses = "resp"
	RouteFailA     = "fo-a" // fails 30% of calls in the failover scenario
	RouteFailB     = "fo-b"
	RouteFailC     = "fo-c"
	RouteAuto      = "auto" // the auto scenario's pick
)

// catalogTemplate is the gateway's catalog in launched runs. {{SIM}} is the simulator's base
// URL, {{BURST}} the burst plan's limit per minute.
// The load generator is one address standing for many clients, and an open loop that falls
// behind holds up to 1,024 requests in flight, each on its own connection: the per-address
// connection cap (256 by default, against one greedy client) is raised past that, as a
// trusted proxy would not be capped, so a phase measures the gateway rather than its refusals.
const catalogTemplate = `# modelgate-bench catalog: every route is the upstream simulator.
server: {connect_timeout: 5s, first_byte_timeout: 30s, idle_stream_timeout: 30s, max_conns_per_ip: 4096}
plans:
  - {name: bench, allow_automated: true}
  - {name: bench-burst, allow_automated: true, burst_rpm: {{BURST}}}
models:
  - id: bench-chat
    kind: chat
    context_length: 128000
    max_output_tokens: 8192
    pricing: {prompt: "0.000001", completion: "0.000002", cache_read: "0.0000001"}
    routes:
      - {id: chat, format: chat, base_url: "{{SIM}}/r/chat/v1", upstream_model: sim-model, credential_env: MODELGATE_BENCH_SIM_KEY}
  - id: bench-responses
    kind: chat
    context_length: 400000
    max_output_tokens: 128000
    pricing: {prompt: "0.00000125", completion: "0.00001", cache_read: "0.000000125"}
    routes:
      - {id: resp, format: responses, base_url: "{{SIM}}/r/resp/v1", upstream_model: sim-gpt, credential_env: MODELGATE_BENCH_SIM_KEY}
  - id: bench-failover
    kind: chat
    context_length: 128000
    max_output_tokens: 8192
    pricing: {prompt: "0.000001", completion: "0.000002"}
    routes:
      - {id: fo-a, format: chat, base_url: "{{SIM}}/r/fo-a/v1", upstream_model: sim-model, credential_env: MODELGATE_BENCH_SIM_KEY, weight: 1}
      - {id: fo-b, format: chat, base_url: "{{SIM}}/r/fo-b/v1", upstream_model: sim-model, credential_env: MODELGATE_BENCH_SIM_KEY, weight: 1}
      - {id: fo-c, format: chat, base_url: "{{SIM}}/r/fo-c/v1", upstream_model: sim-model, credential_env: MODELGATE_BENCH_SIM_KEY, weight: 1}
  # The auto scenario: the cheapest candidate that can serve a plain request is bench-auto-small
  # (it takes no tools); bench-chat and bench-auto-dear are judged and passed over each call.
  - id: bench-auto
    kind: chat
    auto: {policy: cheapest, candidates: [bench-auto-dear, bench-chat, bench-auto-small]}
  - id: bench-auto-small
    kind: chat
    tools: false
    context_length: 128000
    max_output_tokens: 8192
    pricing: {prompt: "0.0000005", completion: "0.000001"}
    routes:
      - {id: auto, format: chat, base_url: "{{SIM}}/r/auto/v1", upstream_model: sim-model, credential_env: MODELGATE_BENCH_SIM_KEY}
  - id: bench-auto-dear
    kind: chat
    context_length: 128000
    max_output_tokens: 8192
    pricing: {prompt: "0.000003", completion: "0.000015"}
    routes:
      - {id: auto-dear, format: messages, base_url: "{{SIM}}/r/auto-dear/v1", upstream_model: sim-claude, credential_env: MODELGATE_BENCH_SIM_KEY}
`

// Catalog is the bench catalog for a simulator at simURL.
func Catalog(simURL string, burstRPM int) string {
	return strings.ReplaceAll(CatalogTemplate(burstRPM), "{{SIM}}", simURL)
}

// CatalogTemplate is the bench catalog with {{SIM}} left in place for the simulator's URL
// (the convention of nodetest.Start).
func CatalogTemplate(burstRPM int) string {
	if burstRPM <= 0 {
		burstRPM = DefaultBurstRPM
	}
	return strings.ReplaceAll(catalogTemplate, "{{BURST}}", strconv.Itoa(burstRPM))
}

// DefaultBurstRPM is the burst plan's limit: calls in any sliding 60 s.
const DefaultBurstRPM = 300

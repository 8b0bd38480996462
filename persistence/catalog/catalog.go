// Package catalog loads and validates the operator's YAML file: the models the gateway
// serves, their routes to upstream providers, prices, and the server's limits.
package catalog

import (
	"net/http"
	"sort"
	"time"

	"github.com/modelgate/modelgate/codec/images"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/codec/reasoning"
)

// Kinds of model; each endpoint serves one kind.
const (
	KindChat      = "chat"
	KindEmbedding = "embedding"
	KindImage     = "image"
	KindVideo     = "video"
)

// Upstream wire formats a route can speak.
const (
	FormatChat      = "chat"
	FormatMessages  = "messages"
	FormatGemini    = "gemini"
	FormatResponses = "responses"
)

// Reasoning classes (decisions.md, "Effort values"): codec/reasoning's, which resolves them.
const (
	ReasoningNone     = reasoning.ClassNone     // no chain-of-thought
	ReasoningAlwaysOn = reasoning.ClassAlwaysOn // thinks on every call; flags are ignored
	ReasoningToggle   = reasoning.ClassToggle   // on/off, no effort levels
	ReasoningEffort   = reasoning.ClassEffort   // lists the efforts it accepts
)

// Context rules (decisions.md, "Context").
const (
	ContextSharedWindow = "shared_window"
	ContextInputBudget  = "input_budget"
)

// Catalog is one loaded, validated file. It is immutable: a reload builds a new one.
type Catalog struct {
	Path    string
	Server  Server
	Clients ClientRules
	Auth    Auth    // sign-up and mail (auth.go)
	Billing Billing // payments through Stripe (billing.go)
	models  []*Model
	byName  map[string]*Model // ids and aliases
	routes  map[string]*Route // route id -> route
	removed map[string]string // removed model id -> its replacement ("" = none)
	plans   *planSet
}

// Server holds the request limits the gateway enforces (decisions.md, "Limits not shown").
type Server struct {
	MaxBodyBytes      int64
	ConnectTimeout    time.Duration
	FirstByteTimeout  time.Duration
	IdleStreamTimeout time.Duration
	// MaxCallDuration is the longest a call may take from its arrival, failovers and the
	// whole stream included: one still running then is cut (a stream ends with an error
	// event). Its admission reserves for that long (and a minute), so the reservation of a
	// call whose node died is released then at the latest.
	MaxCallDuration time.Duration
	// PublicURL is the gateway's address as clients reach it (scheme, host and any path
	// prefix, no trailing slash), for links to its own assets; "" = the request's host.
	PublicURL string
	// MetricsAddr is where /metrics listens: host:port, "off", or "" when the file does not
	// say (the node's default applies). Read at start only.
	MetricsAddr string
	// CORSOrigins are the browser origins /v1 answers CORS for: "*" (every origin, the
	// default: API keys carry no cookies) or scheme://host[:port] each; empty: none.
	CORSOrigins []string
	// LogRetentionDays is how long request-log entries are kept: entries older are deleted
	// by a background job (persistence.PruneLog). 0, the default, keeps them forever.
	LogRetentionDays int
	// MaxRequestModels is the most entries a request's "models" fallback list may have
	// (default DefaultMaxRequestModels).
	MaxRequestModels int
	// Edge: TLS, the admin listener, trusted proxies, and the bounds on hostile clients (edge.go).
	Edge
}

// DefaultMaxRequestModels is server.max_request_models when the file does not say.
const DefaultMaxRequestModels = 5

// Model is one entry of the catalog with every field of the spec's model record.
type Model struct {
	ID              string
	Kind            string
	DisplayName     string
	OwnedBy         string
	Created         int64
	ContextLength   int64 // 0 = unpublished
	MaxOutputTokens int64 // 0 = unpublished
	ContextRule     string
	Tokenizer       string // a vocabulary of codec/tokens for input estimates; "" = estimate
	Pricing         Pricing
	QuotaMultiplier float64
	Reasoning       Reasoning
	Architecture    Architecture
	Aliases         []string
	DeprecatedAt    int64 // unix seconds, 0 = not deprecated
	Replacement     string
	Routes          []*Route
	// Tools says the model takes tool definitions (default true for a chat model): an auto
	// model's request with tools skips a candidate without them.
	Tools bool
	// Fallbacks are the models tried, in order, when every route of this one failed before
	// answering or is cooling down. A request's own "models" list replaces them.
	Fallbacks []string
	// RoutePolicy is how one of the model's routes is chosen (RouteWeighted, the default,
	// RouteLowestPrice, RouteLowestLatency, RouteLeastBusy).
	RoutePolicy string
	// Auto, when set, makes this an auto model: it has no routes of its own, and each request
	// is served by one of its candidates.
	Auto *Auto
	// Images is what an image model makes: its sizes, qualities and styles (none: the
	// gateway's defaults, images.Options).
	Images images.Options
}

// Route policies: how one of a model's routes is chosen.
const (
	RouteWeighted      = "weighted"       // by weight, shrunk by the route's error rate (the default)
	RouteLowestPrice   = "lowest_price"   // the cheapest available route by its own pricing
	RouteLowestLatency = "lowest_latency" // the available route with the lowest measured time to first token
	RouteLeastBusy     = "least_busy"     // the available route with the fewest calls in flight
)

// Auto policies: which eligible candidate of an auto model serves a request first.
const (
	AutoOrdered  = "ordered"  // the first eligible candidate in the catalog's order (the default)
	AutoCheapest = "cheapest" // the eligible candidate with the lowest price
	AutoFastest  = "fastest"  // the eligible candidate whose routes answer first (measured)
)

// Auto describes an auto model: the models it may pick and the rules of the pick.
type Auto struct {
	Policy     string
	Candidates []string // catalog model ids, in the file's order: chat models, never auto ones
	// MaxPrice is a ceiling on a candidate's prompt and completion prices (0: none).
	MaxPrice Pricing
	// Prefer lists owned_by values: candidates of these families come first, in this order,
	// before the policy orders the rest.
	Prefer []string
}

// IsAuto reports whether m is an auto model.
func (m *Model) IsAuto() bool { return m.Auto != nil }

// Pricing is USD per token, exact.
type Pricing struct {
	Prompt     money.Amount
	Completion money.Amount
	CacheRead  money.Amount // defaults to Prompt
	CacheWrite money.Amount // defaults to Prompt
	// The operator's original strings, echoed unchanged in the model record.
	PromptText, CompletionText string
}

// Reasoning describes how a model thinks and which controls it accepts.
type Reasoning struct {
	Class   string
	Efforts []string // for ReasoningEffort, in the order low < medium < high < max
	Inline  bool     // emits <think>…</think> at the start of content
	// Adaptive: the model accepts only adaptive thinking (messages thinking {"type":"adaptive"}
	// with output_config.effort), not an explicit budget; Claude 4.7 and later.
	Adaptive bool
}

// Supported reports whether the model can return chain-of-thought.
func (r Reasoning) Supported() bool { return r.Class != ReasoningNone }

// Model is what codec/reasoning resolves a request's thinking against.
func (r Reasoning) Model() reasoning.Model {
	return reasoning.Model{Class: r.Class, Efforts: r.Efforts, Inline: r.Inline, Adaptive: r.Adaptive}
}

// Architecture is the model's modality description.
type Architecture struct {
	Modality         string
	InputModalities  []string
	OutputModalities []string
}

// Route is one upstream way to serve a model.
type Route struct {
	ID            string
	Model         string // the catalog model id it serves
	Format        string
	BaseURL       string
	UpstreamModel string
	CredentialEnv string
	Weight        int
	ZDR           bool
	Timeouts      Timeouts
	// Pricing is what the provider charges on this route when it differs from the model's
	// (nil: the model's). The client always pays the model's pricing; the request log's
	// upstream cost is the route's.
	Pricing *Pricing
	// Provider runs the upstream when it is a cloud (ProviderBedrock, ProviderVertex,
	// ProviderAzure); "" is the format's own API. Its settings block is set for that cloud.
	Provider string
	AWS      *AWS
	Vertex   *Vertex
	Azure    *Azure
	// Headers and Query are sent on every call; AuthHeader and AuthPrefix, when set, carry
	// credential_env's secret instead of the format's usual header.
	Headers    http.Header
	Query      map[string]string
	AuthHeader string
	AuthPrefix string
}

// Cost is the route's own pricing: its Pricing, or the model's m when it has none.
func (r *Route) Cost(m *Model) Pricing {
	if r.Pricing != nil {
		return *r.Pricing
	}
	return m.Pricing
}

// Credential reads the route's secret from the environment at call time, so a rotated
// variable needs no catalog change and the secret never sits in the file.
func (r *Route) Credential() string { return lookupEnv(r.CredentialEnv) }

// Timeouts bound one upstream attempt.
type Timeouts struct {
	Connect    time.Duration
	FirstByte  time.Duration
	IdleStream time.Duration
}

// Lookup resolves a model id or alias.
func (c *Catalog) Lookup(name string) (*Model, bool) {
	m, ok := c.byName[name]
	return m, ok
}

// Removed reports whether name is a model the catalog lists as removed, and its
// replacement ("" when it has none).
func (c *Catalog) Removed(name string) (replacement string, ok bool) {
	replacement, ok = c.removed[name]
	return replacement, ok
}

// Models returns every model, sorted by id.
func (c *Catalog) Models() []*Model { return c.models }

// Route returns a route by id.
func (c *Catalog) Route(id string) (*Route, bool) {
	r, ok := c.routes[id]
	return r, ok
}

// Routes returns every route of every model, sorted by id.
func (c *Catalog) Routes() []*Route {
	out := make([]*Route, 0, len(c.routes))
	for _, r := range c.routes {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// HasZDRRoute reports whether a ZDR key may use the model.
func (m *Model) HasZDRRoute() bool {
	for _, r := range m.Routes {
		if r.ZDR {
			return true
		}
	}
	return false
}

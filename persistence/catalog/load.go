package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/codec/tokens"
)

// Defaults of decisions.md, "Limits not shown".
const (
	DefaultMaxBodyBytes      = 32 << 20
	DefaultConnectTimeout    = 10 * time.Second
	DefaultFirstByteTimeout  = 120 * time.Second
	DefaultIdleStreamTimeout = 300 * time.Second
	DefaultMaxCallDuration   = time.Hour
)

var lookupEnv = os.Getenv

// fileDoc is the YAML layout; every field is documented in docs/catalog.md.
type fileDoc struct {
	Clients *clientsDoc  `yaml:"clients"`
	Server  serverDoc    `yaml:"server"`
	Models  []modelDoc   `yaml:"models"`
	Removed []removedDoc `yaml:"removed"`
	Plans   []planDoc    `yaml:"plans"`
	Auth    authDoc      `yaml:"auth"`
	Billing billingDoc   `yaml:"billing"`
}

type serverDoc struct {
	MaxBodyBytes      int64  `yaml:"max_body_bytes"`
	ConnectTimeout    string `yaml:"connect_timeout"`
	FirstByteTimeout  string `yaml:"first_byte_timeout"`
	IdleStreamTimeout string `yaml:"idle_stream_timeout"`
	MaxCallDuration   string `yaml:"max_call_duration"`
	PublicURL         string `yaml:"public_url"`
	MetricsAddr       string `yaml:"metrics_addr"`
	// CORSOrigins: nil (absent) is the default, every origin; [] turns CORS off.
	CORSOrigins      []string `yaml:"cors_origins"`
	LogRetentionDays int      `yaml:"log_retention_days"`
	MaxRequestModels *int     `yaml:"max_request_models"` // nil: the default; 0 is refused
	edgeDoc          `yaml:",inline"`
}

type modelDoc struct {
	ID              string     `yaml:"id"`
	Kind            string     `yaml:"kind"`
	DisplayName     string     `yaml:"display_name"`
	OwnedBy         string     `yaml:"owned_by"`
	Created         int64      `yaml:"created"`
	ContextLength   int64      `yaml:"context_length"`
	MaxOutputTokens int64      `yaml:"max_output_tokens"`
	ContextRule     string     `yaml:"context_rule"`
	Tokenizer       string     `yaml:"tokenizer"`
	QuotaMultiplier *float64   `yaml:"quota_multiplier"`
	Aliases         []string   `yaml:"aliases"`
	DeprecatedAt    string     `yaml:"deprecated_at"`
	Replacement     string     `yaml:"replacement"`
	Pricing         pricingDoc `yaml:"pricing"`
	Reasoning       struct {
		Class    string   `yaml:"class"`
		Efforts  []string `yaml:"efforts"`
		Inline   bool     `yaml:"inline"`
		Adaptive bool     `yaml:"adaptive"`
	} `yaml:"reasoning"`
	Architecture struct {
		Modality         string   `yaml:"modality"`
		InputModalities  []string `yaml:"input_modalities"`
		OutputModalities []string `yaml:"output_modalities"`
	} `yaml:"architecture"`
	Routes []routeDoc `yaml:"routes"`
	// Routing (routing.go): only chat models take these.
	Tools       *bool    `yaml:"tools"` // nil: the default, true
	Fallbacks   []string `yaml:"fallbacks"`
	RoutePolicy string   `yaml:"route_policy"`
	Auto        *autoDoc `yaml:"auto"`
	// What an image model makes (images.go): only image models take these.
	imageDoc `yaml:",inline"`
}

// pricingDoc is a model's or a route's prices: USD per token as decimal strings.
type pricingDoc struct {
	Prompt     string `yaml:"prompt"`
	Completion string `yaml:"completion"`
	CacheRead  string `yaml:"cache_read"`
	CacheWrite string `yaml:"cache_write"`
}

type routeDoc struct {
	ID            string `yaml:"id"`
	Format        string `yaml:"format"`
	BaseURL       string `yaml:"base_url"`
	UpstreamModel string `yaml:"upstream_model"`
	CredentialEnv string `yaml:"credential_env"`
	Weight        *int   `yaml:"weight"`
	ZDR           bool   `yaml:"zdr"`
	Timeouts      struct {
		Connect    string `yaml:"connect"`
		FirstByte  string `yaml:"first_byte"`
		IdleStream string `yaml:"idle_stream"`
	} `yaml:"timeouts"`
	Pricing *pricingDoc `yaml:"pricing"` // nil: the model's
	// A cloud provider and its settings, and every route's static extras (providers.go).
	Provider   string            `yaml:"provider"`
	AWS        *awsDoc           `yaml:"aws"`
	Vertex     *vertexDoc        `yaml:"vertex"`
	Azure      *azureDoc         `yaml:"azure"`
	Headers    map[string]string `yaml:"headers"`
	Query      map[string]string `yaml:"query"`
	AuthHeader string            `yaml:"auth_header"`
	AuthPrefix string            `yaml:"auth_prefix"`
}

// LoadFile reads and validates a catalog file.
func LoadFile(path string) (*Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	return Parse(path, data)
}

// Parse validates a catalog held in memory; path names it in errors.
func Parse(path string, data []byte) (*Catalog, error) {
	var doc fileDoc
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)                                     // a misspelt field is an error, not a silent default
	if err := dec.Decode(&doc); err != nil && err != io.EOF { // EOF: an empty file, no models
		return nil, yamlError(path, data, err)
	}
	if err := fractions(path, data); err != nil {
		return nil, err
	}
	v := &validator{path: path}
	c := &Catalog{Path: path, byName: map[string]*Model{}, routes: map[string]*Route{}, removed: map[string]string{}}
	c.Server = v.server(doc.Server)
	c.Clients = v.clients(doc.Clients)
	v.plans(c, doc.Plans)
	c.Auth = v.auth(c, doc.Auth)
	c.Billing = v.billing(c, doc.Billing)
	if len(doc.Models) == 0 {
		v.fail("", "models", "at least one model is required")
	}
	for i := range doc.Models {
		m := v.model(i, &doc.Models[i])
		if m == nil {
			continue
		}
		for _, name := range append([]string{m.ID}, m.Aliases...) {
			if _, dup := c.byName[name]; dup {
				v.fail(m.ID, "id", fmt.Sprintf("%q is used by more than one model or alias", name))
			}
			c.byName[name] = m
		}
		for _, r := range m.Routes {
			if _, dup := c.routes[r.ID]; dup {
				v.fail(m.ID, "routes.id", fmt.Sprintf("route id %q is used twice", r.ID))
			}
			c.routes[r.ID] = r
		}
		c.models = append(c.models, m)
	}
	v.resolveRouting(c) // candidates and fallbacks name models anywhere in the file
	v.removed(c, doc.Removed)
	for _, m := range c.models {
		if m.Replacement != "" {
			if _, ok := c.byName[m.Replacement]; !ok {
				v.fail(m.ID, "replacement", fmt.Sprintf("model %q is not in the catalog", m.Replacement))
			}
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	sort.Slice(c.models, func(i, j int) bool { return c.models[i].ID < c.models[j].ID })
	return c, nil
}

// validator collects every problem so the operator fixes the file in one pass.
type validator struct {
	path string
	errs []string
}

func (v *validator) fail(model, field, msg string) {
	where := v.path
	if model != "" {
		where += ": model " + model
	}
	v.errs = append(v.errs, fmt.Sprintf("%s: %s: %s", where, field, msg))
}

func (v *validator) err() error {
	if len(v.errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(v.errs, "\n"))
}

func (v *validator) duration(model, field, s string, def time.Duration) time.Duration {
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		v.fail(model, field, fmt.Sprintf("%q is not a positive duration such as 30s", s))
		return def
	}
	return d
}

// parseTime reads an RFC 3339 time whose UTC is within the years RFC 3339 writes (0000-9999):
// "9999-12-31T23:59:59-01:00" is in the year 10000 in UTC, which no file could say back.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if y := t.UTC().Year(); err == nil && (y < 0 || y > 9999) {
		err = fmt.Errorf("year %d in UTC", y)
	}
	return t, err
}

func (v *validator) server(s serverDoc) Server {
	out := Server{
		MaxBodyBytes:      s.MaxBodyBytes,
		ConnectTimeout:    v.duration("", "server.connect_timeout", s.ConnectTimeout, DefaultConnectTimeout),
		FirstByteTimeout:  v.duration("", "server.first_byte_timeout", s.FirstByteTimeout, DefaultFirstByteTimeout),
		IdleStreamTimeout: v.duration("", "server.idle_stream_timeout", s.IdleStreamTimeout, DefaultIdleStreamTimeout),
		MaxCallDuration:   v.duration("", "server.max_call_duration", s.MaxCallDuration, DefaultMaxCallDuration),
	}
	if out.MaxCallDuration < time.Second {
		v.fail("", "server.max_call_duration", "must be at least 1s")
	}
	if out.MaxBodyBytes == 0 {
		out.MaxBodyBytes = DefaultMaxBodyBytes
	} else if out.MaxBodyBytes < 1024 {
		v.fail("", "server.max_body_bytes", "must be at least 1024")
	}
	out.PublicURL = v.publicURL(s.PublicURL)
	out.MetricsAddr = v.metricsAddr(s.MetricsAddr)
	out.CORSOrigins = v.corsOrigins(s.CORSOrigins)
	out.LogRetentionDays = s.LogRetentionDays
	if s.LogRetentionDays < 0 || s.LogRetentionDays > maxLogRetentionDays {
		v.fail("", "server.log_retention_days", fmt.Sprintf("must be 0 (keep forever) to %d days", maxLogRetentionDays))
	}
	out.Edge = v.edge(s.edgeDoc, out.MaxBodyBytes)
	out.MaxRequestModels = DefaultMaxRequestModels
	if s.MaxRequestModels != nil {
		out.MaxRequestModels = *s.MaxRequestModels
		if out.MaxRequestModels < 1 || out.MaxRequestModels > maxRequestModels {
			v.fail("", "server.max_request_models", fmt.Sprintf("%d must be between 1 and %d", out.MaxRequestModels, maxRequestModels))
		}
	}
	return out
}

// maxLogRetentionDays keeps the retention's cutoff within the unix nanoseconds the log's
// keys hold (about a century).
const maxLogRetentionDays = 36500

// maxRequestModels bounds server.max_request_models: each entry of a request's models list
// may be one more upstream attempt.
const maxRequestModels = 32

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$`)

var effortOrder = map[string]int{"low": 0, "medium": 1, "high": 2, "max": 3}

func oneOf(s string, allowed ...string) bool {
	for _, a := range allowed {
		if s == a {
			return true
		}
	}
	return false
}

func (v *validator) model(i int, d *modelDoc) *Model {
	id := d.ID
	if !idPattern.MatchString(id) {
		v.fail(fmt.Sprintf("#%d", i+1), "id", fmt.Sprintf("%q must be 1-128 letters, digits or ._:/@- ", id))
		return nil
	}
	m := &Model{
		ID: id, Kind: d.Kind, DisplayName: d.DisplayName, OwnedBy: d.OwnedBy, Created: d.Created,
		ContextLength: d.ContextLength, MaxOutputTokens: d.MaxOutputTokens, ContextRule: d.ContextRule, Tokenizer: d.Tokenizer,
		Aliases: d.Aliases, Replacement: d.Replacement,
		Reasoning:    Reasoning{Class: d.Reasoning.Class, Efforts: d.Reasoning.Efforts, Inline: d.Reasoning.Inline, Adaptive: d.Reasoning.Adaptive},
		Architecture: Architecture{Modality: d.Architecture.Modality, InputModalities: d.Architecture.InputModalities, OutputModalities: d.Architecture.OutputModalities},
	}
	if !oneOf(m.Kind, KindChat, KindEmbedding, KindImage, KindVideo) {
		v.fail(id, "kind", fmt.Sprintf("%q must be chat, embedding, image or video", m.Kind))
	}
	if m.DisplayName == "" {
		m.DisplayName = id
	}
	if m.OwnedBy == "" {
		m.OwnedBy = "modelgate"
	}
	if m.ContextLength < 0 || m.MaxOutputTokens < 0 {
		v.fail(id, "context_length", "token counts cannot be negative")
	}
	if m.ContextLength > 0 && m.MaxOutputTokens > m.ContextLength {
		v.fail(id, "max_output_tokens", fmt.Sprintf("%d exceeds context_length %d", m.MaxOutputTokens, m.ContextLength))
	}
	if m.ContextRule == "" {
		m.ContextRule = ContextSharedWindow
	} else if !oneOf(m.ContextRule, ContextSharedWindow, ContextInputBudget) {
		v.fail(id, "context_rule", fmt.Sprintf("%q must be shared_window or input_budget", m.ContextRule))
	}
	if m.Tokenizer != "" && !tokens.Known(m.Tokenizer) {
		v.fail(id, "tokenizer", fmt.Sprintf("%q must be one of %s", m.Tokenizer, strings.Join(tokens.Names, ", ")))
	}
	m.QuotaMultiplier = 1
	if d.QuotaMultiplier != nil {
		m.QuotaMultiplier = *d.QuotaMultiplier
		switch {
		case d.Auto != nil && m.QuotaMultiplier != 1: // the spec: "auto … models are 1.0"
			v.fail(id, "quota_multiplier", fmt.Sprintf("an auto model counts 1 call; write 1 or leave it out, not %v", m.QuotaMultiplier))
		case !(m.QuotaMultiplier >= 1 && m.QuotaMultiplier <= 1000): // NaN (.nan) too
			v.fail(id, "quota_multiplier", fmt.Sprintf("%v must be between 1 and 1000", m.QuotaMultiplier))
		}
	}
	prices := d.Pricing
	if d.Auto != nil && prices != (pricingDoc{}) {
		v.fail(id, "pricing", "an auto model has no pricing of its own: a call is charged at the rates of the model that served it")
		prices = pricingDoc{} // its record shows "0"
	}
	m.Pricing = v.pricing(id, "pricing", prices)
	v.reasoning(id, &m.Reasoning)
	if len(m.Architecture.OutputModalities) == 0 {
		m.Architecture.OutputModalities = defaultOutput(m.Kind)
	}
	if len(m.Architecture.InputModalities) == 0 {
		m.Architecture.InputModalities = []string{"text"}
	}
	if m.Architecture.Modality == "" {
		m.Architecture.Modality = strings.Join(m.Architecture.InputModalities, "+") + "->" + strings.Join(m.Architecture.OutputModalities, "+")
	}
	for _, a := range m.Aliases {
		if !idPattern.MatchString(a) {
			v.fail(id, "aliases", fmt.Sprintf("%q is not a valid model id", a))
		}
	}
	if d.DeprecatedAt != "" {
		t, err := parseTime(d.DeprecatedAt)
		if err != nil {
			v.fail(id, "deprecated_at", fmt.Sprintf("%q is not an RFC 3339 time such as 2026-12-31T00:00:00Z", d.DeprecatedAt))
		}
		m.DeprecatedAt = t.Unix()
	}
	v.routing(m, d)
	v.images(m, d)
	switch {
	case d.Auto != nil && len(d.Routes) > 0:
		v.fail(id, "routes", "an auto model has no routes of its own: its candidates' routes serve it")
		return m
	case d.Auto == nil && len(d.Routes) == 0:
		v.fail(id, "routes", "at least one route is required")
	}
	for j := range d.Routes {
		if r := v.route(id, j, &d.Routes[j]); r != nil {
			if m.Kind == KindVideo && r.Provider != ProviderDirect {
				v.fail(id, fmt.Sprintf("routes[%d].provider", j), "a video model's routes are the provider's own video job API, not a cloud's")
			}
			m.Routes = append(m.Routes, r)
		}
	}
	return m
}

func defaultOutput(kind string) []string {
	switch kind {
	case KindImage:
		return []string{"image"}
	case KindVideo:
		return []string{"video"}
	case KindEmbedding:
		return []string{"embeddings"}
	}
	return []string{"text"}
}

// pricing reads the prices at field (a model's pricing or a route's); a price left out is 0,
// a cache price the prompt's.
func (v *validator) pricing(id, field string, d pricingDoc) Pricing {
	p := Pricing{PromptText: d.Prompt, CompletionText: d.Completion}
	if p.PromptText == "" {
		p.PromptText = "0"
	}
	if p.CompletionText == "" {
		p.CompletionText = "0"
	}
	p.Prompt = v.price(id, field+".prompt", p.PromptText, 0)
	p.Completion = v.price(id, field+".completion", p.CompletionText, 0)
	p.CacheRead = v.price(id, field+".cache_read", d.CacheRead, p.Prompt)
	p.CacheWrite = v.price(id, field+".cache_write", d.CacheWrite, p.Prompt)
	return p
}

// price is one exact USD amount per token; def when s is "".
func (v *validator) price(id, field, s string, def money.Amount) money.Amount {
	if s == "" {
		return def
	}
	a, err := money.Parse(s)
	if err != nil {
		v.fail(id, field, fmt.Sprintf("%v (write USD per token as a decimal string, e.g. \"0.0000025\")", err))
	}
	return a
}

func (v *validator) reasoning(id string, r *Reasoning) {
	if r.Class == "" {
		r.Class = ReasoningNone
	}
	if !oneOf(r.Class, ReasoningNone, ReasoningAlwaysOn, ReasoningToggle, ReasoningEffort) {
		v.fail(id, "reasoning.class", fmt.Sprintf("%q must be none, always_on, toggle or effort", r.Class))
		return
	}
	if r.Class != ReasoningEffort && len(r.Efforts) > 0 {
		v.fail(id, "reasoning.efforts", "only models of class effort list efforts")
	}
	if r.Adaptive && r.Class != ReasoningEffort && r.Class != ReasoningToggle {
		v.fail(id, "reasoning.adaptive", "only models of class effort or toggle take adaptive thinking")
	}
	if r.Class == ReasoningEffort && len(r.Efforts) == 0 {
		v.fail(id, "reasoning.efforts", "a model of class effort must list at least one of low, medium, high, max")
	}
	for _, e := range r.Efforts {
		if _, ok := effortOrder[e]; !ok {
			v.fail(id, "reasoning.efforts", fmt.Sprintf("%q must be low, medium, high or max", e))
		}
	}
	sort.SliceStable(r.Efforts, func(i, j int) bool { return effortOrder[r.Efforts[i]] < effortOrder[r.Efforts[j]] })
}

func (v *validator) route(model string, j int, d *routeDoc) *Route {
	field := func(f string) string { return fmt.Sprintf("routes[%d].%s", j, f) }
	r := &Route{
		ID: d.ID, Model: model, Format: d.Format, BaseURL: strings.TrimRight(d.BaseURL, "/"),
		UpstreamModel: d.UpstreamModel, CredentialEnv: d.CredentialEnv, Weight: 1, ZDR: d.ZDR,
		Provider: d.Provider,
	}
	if !idPattern.MatchString(r.ID) {
		v.fail(model, field("id"), fmt.Sprintf("%q must be 1-128 letters, digits or ._:/@-", r.ID))
	}
	v.provider(model, field, d, r)
	if r.BaseURL != "" && !strings.HasPrefix(r.BaseURL, "http://") && !strings.HasPrefix(r.BaseURL, "https://") ||
		r.BaseURL == "" && r.Provider == ProviderDirect {
		v.fail(model, field("base_url"), fmt.Sprintf("%q must be an http:// or https:// URL", d.BaseURL))
	}
	if r.UpstreamModel == "" {
		r.UpstreamModel = model
	}
	if r.CredentialEnv != "" {
		if strings.HasPrefix(r.CredentialEnv, "sk-") || strings.ContainsAny(r.CredentialEnv, " -.") {
			v.fail(model, field("credential_env"), "must name an environment variable, never hold the secret itself")
		} else if lookupEnv(r.CredentialEnv) == "" {
			v.fail(model, field("credential_env"), fmt.Sprintf("environment variable %s is not set", r.CredentialEnv))
		}
	}
	v.extras(model, field, d, r)
	if d.Weight != nil {
		r.Weight = *d.Weight
		if r.Weight < 0 || r.Weight > 1_000_000 {
			v.fail(model, field("weight"), fmt.Sprintf("%d must be between 0 and 1000000 (0 = standby, used only when the others are down)", r.Weight))
		}
	}
	r.Timeouts = Timeouts{
		Connect:    v.duration(model, field("timeouts.connect"), d.Timeouts.Connect, 0),
		FirstByte:  v.duration(model, field("timeouts.first_byte"), d.Timeouts.FirstByte, 0),
		IdleStream: v.duration(model, field("timeouts.idle_stream"), d.Timeouts.IdleStream, 0),
	}
	if d.Pricing != nil {
		if d.Pricing.Prompt == "" || d.Pricing.Completion == "" {
			v.fail(model, field("pricing"), "must give both prompt and completion: a price left out would be 0 in the request log's upstream cost")
		}
		p := v.pricing(model, field("pricing"), *d.Pricing)
		r.Pricing = &p
	}
	return r
}

// Effective returns the route's time-outs with the server defaults filled in.
func (r *Route) Effective(s Server) Timeouts {
	t := r.Timeouts
	if t.Connect == 0 {
		t.Connect = s.ConnectTimeout
	}
	if t.FirstByte == 0 {
		t.FirstByte = s.FirstByteTimeout
	}
	if t.IdleStream == 0 {
		t.IdleStream = s.IdleStreamTimeout
	}
	return t
}

package catalog

import (
	"bytes"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// FuzzParse: any file is a catalog or an error each line of which names
// the file and a field (or, for a file that is not YAML, the line). An accepted catalog
// parses the same twice, and the file it writes back (every value explicit: defaults,
// normalized URLs, sorted efforts) is accepted and writes back the same: what was accepted
// re-validates.
func FuzzParse(f *testing.F) {
	for _, seed := range catalogSeeds(f) {
		f.Add(seed)
	}
	saved := lookupEnv
	lookupEnv = func(string) string { return "set" } // any credential_env is set
	f.Cleanup(func() { lookupEnv = saved })
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.yaml", data)
		if err != nil {
			checkParseError(t, err)
			if _, again := Parse("fuzz.yaml", data); again == nil || again.Error() != err.Error() {
				t.Fatalf("the same file fails differently:\n%v\n---\n%v", err, again)
			}
			return
		}
		if again, err := Parse("fuzz.yaml", data); err != nil || !reflect.DeepEqual(again, c) {
			t.Fatalf("the same file parses differently: %v", err)
		}
		reload(t, c)
		checkLookups(t, c)
	})
}

// catalogSeeds are the repository's catalogs: the test catalogs, the demo's, and the
// documented examples of docs/catalog.md in one file; a small auto model with fallbacks in a
// cycle; and a plan with a burst of one.
func catalogSeeds(f *testing.F) [][]byte {
	read := func(name string) []byte {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	demo := bytes.ReplaceAll(read("../../cmd/modelgate/demo.yaml"), []byte("{{SIM}}"), []byte("http://127.0.0.1:1"))
	var doc bytes.Buffer
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(read("../../docs/catalog.md"), -1)
	for _, b := range blocks {
		doc.Write(b[1])
	}
	// Without their comments: the fuzzer mutates and minimizes small inputs faster.
	comments := regexp.MustCompile(`(?m)^\s*#.*\n|[ \t]+#.*$`)
	return [][]byte{read("../../testdata/catalog/valid.yaml"), comments.ReplaceAll(read("../../testdata/catalog/routing.yaml"), nil),
		comments.ReplaceAll(demo, nil), comments.ReplaceAll(doc.Bytes(), nil),
		[]byte("server: {max_request_models: 2}\nmodels:\n  - {id: a, kind: chat, auto: {policy: fastest, candidates: [m, n], prefer: [x]}}\n" +
			"  - {id: m, kind: chat, tools: false, fallbacks: [n], route_policy: least_busy, routes: [{id: r, format: chat, base_url: 'http://x', pricing: {prompt: '1', completion: '2'}}]}\n" +
			"  - {id: n, kind: chat, owned_by: x, fallbacks: [m], routes: [{id: s, format: chat, base_url: 'http://x'}]}\n"),
		[]byte("models:\n  - {id: m, kind: chat, quota_multiplier: 2.5, routes: [{id: r, format: chat, base_url: 'http://x'}]}\nplans:\n  - {name: p, burst_rpm: 1}\n"),
		[]byte("models:\n  - {id: m, kind: chat, foo: 1, context_length: x, routes: [{id: r, format: chat, base_url: 'http://x'}]}\n"),
		[]byte("clients: {signals: {a: [''], b: [' '], c: ['']}}\nmodels: []\n"),
	}
}

// validatorLine is "file: [model ID: | plan NAME: ]field: problem"; typeLine a value of the
// wrong type, an unknown field or a repeated key, by line and field; yamlLine a file that is
// not YAML, rootLine one that is not a mapping.
var (
	validatorLine = regexp.MustCompile(`^fuzz\.yaml: (?:(?:model|plan) \S+: )?([a-z_]+)[.\[:]`)
	typeLine      = regexp.MustCompile(`^fuzz\.yaml: line \d+: ([a-z_]+)[.\[:]`)
	yamlLine      = regexp.MustCompile(`^fuzz\.yaml: yaml: `)
	rootLine      = regexp.MustCompile(`^fuzz\.yaml: line \d+: (the file must be a mapping of the catalog's sections|section names must be words|unknown section|section "(.*)" is given twice)`)
	goWords       = regexp.MustCompile(`\b(catalog\.\w+Doc|u?int\d*|float\d+)\b|!!\w+|\[\]\w+|map\[\w+\]`)
)

// checkParseError: every line names the file and a field the file format has (the first
// element of its path), or an unknown section, or says where the file stops being YAML or
// being a mapping; no Go type names.
func checkParseError(t *testing.T, err error) {
	t.Helper()
	fields := yamlFieldNames()
	for _, line := range strings.Split(err.Error(), "\n") {
		if yamlLine.MatchString(line) || rootLine.MatchString(line) {
			continue
		}
		m := typeLine.FindStringSubmatch(line)
		if m == nil {
			m = validatorLine.FindStringSubmatch(line)
		}
		if m == nil {
			t.Fatalf("error line %q names no file and field", line)
		}
		if !fields[m[1]] {
			t.Fatalf("error line %q names %q, not a field of the file", line, m[1])
		}
		if goWords.MatchString(line) {
			t.Fatalf("error line %q speaks Go", line)
		}
	}
}

// yamlFieldNames are the names of the file's fields at every level.
func yamlFieldNames() map[string]bool {
	names := map[string]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for i := range t.NumField() {
			names[strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]] = true
			walk(t.Field(i).Type)
		}
	}
	walk(reflect.TypeOf(fileDoc{}))
	return names
}

// checkLookups: every model answers to its id and aliases, every route is indexed.
func checkLookups(t *testing.T, c *Catalog) {
	t.Helper()
	for _, m := range c.Models() {
		for _, name := range append([]string{m.ID}, m.Aliases...) {
			if got, ok := c.Lookup(name); !ok || got != m {
				t.Fatalf("%q does not resolve to model %s", name, m.ID)
			}
		}
		if len(m.Routes) == 0 != m.IsAuto() || !(m.QuotaMultiplier >= 1 && m.QuotaMultiplier <= 1000) {
			t.Fatalf("model %s: %d routes, auto %v, quota multiplier %v", m.ID, len(m.Routes), m.IsAuto(), m.QuotaMultiplier)
		}
		checkRouting(t, c, m)
		for _, r := range m.Routes {
			if got, ok := c.Route(r.ID); !ok || got != r || r.Weight < 0 {
				t.Fatalf("route %s of %s: %+v", r.ID, m.ID, r)
			}
		}
	}
	for _, p := range c.Plans() {
		th := p.Throttle
		if got, ok := c.Plan(p.Name); !ok || got != p || th.RPM < 0 || p.BurstRPM > 0 && th.RPM >= p.BurstRPM || !(th.MaxShare > 0 && th.MaxShare <= 1) {
			t.Fatalf("plan %s: %+v", p.Name, p)
		}
	}
}

// checkRouting: an auto model's candidates and a model's fallbacks are other chat models with
// routes; only chat models take tools; every model with routes has a route policy.
func checkRouting(t *testing.T, c *Catalog, m *Model) {
	t.Helper()
	for _, o := range append(c.Candidates(m), c.FallbacksOf(m)...) {
		if o == nil || o == m || o.IsAuto() || o.Kind != KindChat {
			t.Fatalf("model %s picks %+v", m.ID, o)
		}
	}
	if m.IsAuto() && (m.QuotaMultiplier != 1 || len(m.Auto.Candidates) == 0 || m.Kind != KindChat || m.Fallbacks != nil) ||
		m.Tools && m.Kind != KindChat ||
		!m.IsAuto() && !oneOf(m.RoutePolicy, RouteWeighted, RouteLowestPrice, RouteLowestLatency, RouteLeastBusy) {
		t.Fatalf("model %s: %+v", m.ID, m)
	}
}

// reload is c written back and parsed again; the file it writes back is the same.
func reload(t *testing.T, c *Catalog) *Catalog {
	t.Helper()
	out := writeBack(t, c)
	c2, err := Parse(c.Path, out)
	if err != nil {
		t.Fatalf("the accepted catalog, written back, is refused: %v\n%s", err, out)
	}
	if out2 := writeBack(t, c2); !bytes.Equal(out2, out) {
		t.Fatalf("written back twice it differs:\n%s\n---\n%s", out, out2)
	}
	return c2
}

// writeBack writes c as a catalog file with every value explicit but the default client rules.
func writeBack(t *testing.T, c *Catalog) []byte {
	t.Helper()
	s := c.Server
	doc := fileDoc{
		Server: serverDoc{MaxBodyBytes: s.MaxBodyBytes, ConnectTimeout: s.ConnectTimeout.String(), FirstByteTimeout: s.FirstByteTimeout.String(),
			IdleStreamTimeout: s.IdleStreamTimeout.String(), MaxCallDuration: s.MaxCallDuration.String(), PublicURL: s.PublicURL, MetricsAddr: s.MetricsAddr, CORSOrigins: s.CORSOrigins,
			MaxRequestModels: &s.MaxRequestModels},
	}
	if !reflect.DeepEqual(c.Clients, DefaultClientRules()) { // the defaults are long: left out, they come back
		doc.Clients = &clientsDoc{Interactive: c.Clients.Interactive, Automated: c.Clients.Automated, Signals: c.Clients.Signals}
	}
	for _, m := range c.Models() {
		doc.Models = append(doc.Models, modelDocOf(m))
	}
	removed := make([]string, 0, len(c.removed))
	for id := range c.removed {
		removed = append(removed, id)
	}
	sort.Strings(removed)
	for _, id := range removed {
		doc.Removed = append(doc.Removed, removedDoc{ID: id, Replacement: c.removed[id]})
	}
	for _, p := range c.Plans() {
		doc.Plans = append(doc.Plans, planDocOf(p))
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func modelDocOf(m *Model) modelDoc {
	d := modelDoc{ID: m.ID, Kind: m.Kind, DisplayName: m.DisplayName, OwnedBy: m.OwnedBy, Created: m.Created,
		ContextLength: m.ContextLength, MaxOutputTokens: m.MaxOutputTokens, ContextRule: m.ContextRule, Tokenizer: m.Tokenizer,
		QuotaMultiplier: &m.QuotaMultiplier, Aliases: m.Aliases, Replacement: m.Replacement}
	if m.DeprecatedAt != 0 {
		d.DeprecatedAt = time.Unix(m.DeprecatedAt, 0).UTC().Format(time.RFC3339)
	}
	if !m.IsAuto() { // an auto model's prices are its candidates'
		d.Pricing = pricingDocOf(m.Pricing)
	}
	routingDocOf(m, &d)
	d.imageDoc = imageDoc{Sizes: m.Images.Sizes, Qualities: m.Images.Qualities, Styles: m.Images.Styles}
	r := m.Reasoning
	d.Reasoning.Class, d.Reasoning.Efforts, d.Reasoning.Inline, d.Reasoning.Adaptive = r.Class, slices.Clone(r.Efforts), r.Inline, r.Adaptive
	a := m.Architecture
	d.Architecture.Modality, d.Architecture.InputModalities, d.Architecture.OutputModalities = a.Modality, a.InputModalities, a.OutputModalities
	for _, rt := range m.Routes {
		rd := routeDoc{ID: rt.ID, Format: rt.Format, BaseURL: rt.BaseURL, UpstreamModel: rt.UpstreamModel, CredentialEnv: rt.CredentialEnv,
			Weight: &rt.Weight, ZDR: rt.ZDR}
		if rt.Pricing != nil {
			p := pricingDocOf(*rt.Pricing)
			rd.Pricing = &p
		}
		rd.Timeouts.Connect, rd.Timeouts.FirstByte, rd.Timeouts.IdleStream = duration(rt.Timeouts.Connect), duration(rt.Timeouts.FirstByte), duration(rt.Timeouts.IdleStream)
		d.Routes = append(d.Routes, rd)
	}
	return d
}

func pricingDocOf(p Pricing) pricingDoc {
	return pricingDoc{Prompt: p.PromptText, Completion: p.CompletionText, CacheRead: p.CacheRead.String(), CacheWrite: p.CacheWrite.String()}
}

// routingDocOf writes a model's routing fields as the file takes them back: only a chat model
// has them, and an auto model only its auto block.
func routingDocOf(m *Model, d *modelDoc) {
	switch {
	case m.IsAuto():
		a := m.Auto
		d.Auto = &autoDoc{Policy: a.Policy, Candidates: a.Candidates, Prefer: a.Prefer}
		d.Auto.MaxPrice.Prompt, d.Auto.MaxPrice.Completion = a.MaxPrice.PromptText, a.MaxPrice.CompletionText
	case m.Kind == KindChat:
		d.Tools, d.Fallbacks, d.RoutePolicy = &m.Tools, m.Fallbacks, m.RoutePolicy
	}
}

func planDocOf(p *Plan) planDoc {
	th := p.Throttle
	return planDoc{Name: p.Name, WindowRequests: p.WindowRequests, Window: p.Window.String(), WindowAnchor: p.WindowAnchor.Format(time.RFC3339),
		WeeklyRequests: p.WeeklyRequests, BurstRPM: p.BurstRPM, BurstScope: p.BurstScope, AllowAutomated: p.AllowAutomated,
		ImageDailyLimit: &p.ImageDailyLimit, VideoDailySeconds: &p.VideoDailySeconds, OverdraftUSD: p.OverdraftText,
		Throttle: throttleDoc{Window: th.Window.String(), MaxShare: &th.MaxShare, MinRequests: &th.MinRequests, RPM: &th.RPM, Duration: th.Duration.String()}}
}

// duration writes a route time-out; 0 (the server's) is left out.
func duration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

package api

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// modelRecord is the spec's model record, plus kind and aliases.
type modelRecord struct {
	ID              string        `json:"id"`
	Object          string        `json:"object"`
	Created         int64         `json:"created"`
	OwnedBy         string        `json:"owned_by"`
	Permission      []any         `json:"permission"`
	Root            string        `json:"root"`
	Parent          *string       `json:"parent"`
	Kind            string        `json:"kind"`
	ContextLength   int64         `json:"context_length,omitempty"`
	MaxOutputTokens int64         `json:"max_output_tokens,omitempty"`
	Pricing         modelPricing  `json:"pricing"`
	QuotaMultiplier float64       `json:"quota_multiplier"`
	Reasoning       modelThinking `json:"reasoning"`
	Architecture    modelArch     `json:"architecture"`
	Aliases         []string      `json:"aliases,omitempty"`
	DeprecatedAt    int64         `json:"deprecated_at,omitempty"`
	Replacement     string        `json:"replacement,omitempty"`
	// Auto is an auto model's rule and the candidates it may pick for this key.
	Auto *autoRecord `json:"auto,omitempty"`
	// Fallbacks are the models tried after this one when its routes fail.
	Fallbacks []string `json:"fallbacks,omitempty"`
}

type autoRecord struct {
	Policy     string          `json:"policy"`
	Candidates []string        `json:"candidates"`
	Now        []candidateView `json:"candidates_now,omitempty"` // GET /v1/models/{auto} only
}

type modelPricing struct {
	Prompt     string `json:"prompt"`
	Completion string `json:"completion"`
}

type modelThinking struct {
	Supported       bool     `json:"supported"`
	SupportedEffort []string `json:"supported_efforts,omitempty"`
}

type modelArch struct {
	Modality         string   `json:"modality"`
	InputModalities  []string `json:"input_modalities"`
	OutputModalities []string `json:"output_modalities"`
}

func recordOf(m *catalog.Model) modelRecord {
	rec := modelRecord{
		ID: m.ID, Object: "model", Created: m.Created, OwnedBy: m.OwnedBy, Permission: []any{}, Root: m.ID,
		Kind: m.Kind, ContextLength: m.ContextLength, MaxOutputTokens: m.MaxOutputTokens,
		Pricing:         modelPricing{Prompt: m.Pricing.PromptText, Completion: m.Pricing.CompletionText},
		QuotaMultiplier: m.QuotaMultiplier,
		Reasoning:       modelThinking{Supported: m.Reasoning.Supported()},
		Architecture:    modelArch{Modality: m.Architecture.Modality, InputModalities: m.Architecture.InputModalities, OutputModalities: m.Architecture.OutputModalities},
		Aliases:         m.Aliases, DeprecatedAt: m.DeprecatedAt, Replacement: m.Replacement,
	}
	if m.Reasoning.Class == catalog.ReasoningEffort {
		rec.Reasoning.SupportedEffort = m.Reasoning.Efforts
	}
	return rec
}

// recordFor is m's record as key's caller sees it: an auto model lists the candidates the
// key may get, a model the fallbacks it may get.
func recordFor(x *exchange, m *catalog.Model) modelRecord {
	rec := recordOf(m)
	if m.IsAuto() {
		rec.Auto = &autoRecord{Policy: m.Auto.Policy, Candidates: []string{}}
		for _, cd := range x.catalog.Candidates(m) {
			if candidateAllowed(x, m, cd) && (!x.key.ZDR || cd.HasZDRRoute()) {
				rec.Auto.Candidates = append(rec.Auto.Candidates, cd.ID)
			}
		}
	}
	for _, f := range usableFallbacks(x, m) {
		rec.Fallbacks = append(rec.Fallbacks, f.ID)
	}
	return rec
}

// visible reports whether the key may see the model in the list.
func visible(x *exchange, m *catalog.Model) bool {
	if m.IsAuto() {
		return autoAllowed(x, m) && (!x.key.ZDR || autoZDR(x, m))
	}
	return keyAllows(x.key, m, m.ID) && (!x.key.ZDR || m.HasZDRRoute())
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	x := s.begin(w, r, "models")
	if _, ok := s.openUnrecorded(w, r, x, false); !ok {
		return
	}
	data := []modelRecord{}
	for _, m := range x.catalog.Models() {
		if visible(x, m) {
			data = append(data, recordFor(x, m))
		}
	}
	s.answer(x, map[string]any{"object": "list", "data": data})
}

func (s *Server) getModel(w http.ResponseWriter, r *http.Request) {
	x := s.begin(w, r, "models")
	if _, ok := s.openUnrecorded(w, r, x, false); !ok {
		return
	}
	name := mux.Vars(r)["model"]
	m, ok := x.catalog.Lookup(name)
	if e := removedModel(x, name, "/v1/models"); e != nil {
		s.render(x, e)
		return
	}
	if !ok || !visible(x, m) {
		s.render(x, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "model_not_found", Param: "model",
			Message: "the model \"" + name + "\" does not exist or this key may not use it"})
		return
	}
	rec := recordFor(x, m)
	if rec.Auto != nil {
		rec.Auto.Now = s.candidatesNow(x, m)
	}
	s.answer(x, rec)
}

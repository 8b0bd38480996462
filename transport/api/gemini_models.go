package api

import (
	"net/http"

	"github.com/modelgate/modelgate/codec/gemini"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// geminiModel is a model as the Gemini API lists it (GET /v1beta/models): the name a
// client puts in the path after "models/", what it may call, and its token limits.
type geminiModel struct {
	Name                       string   `json:"name"`
	BaseModelID                string   `json:"baseModelId"`
	DisplayName                string   `json:"displayName"`
	Description                string   `json:"description,omitempty"`
	InputTokenLimit            int64    `json:"inputTokenLimit,omitempty"`
	OutputTokenLimit           int64    `json:"outputTokenLimit,omitempty"`
	SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
	Thinking                   bool     `json:"thinking"`
}

// geminiMethods are what every chat model serves through the Gemini API.
var geminiMethods = []string{"generateContent", "streamGenerateContent", "countTokens"}

func geminiRecordOf(m *catalog.Model) geminiModel {
	name := m.DisplayName
	if name == "" {
		name = m.ID
	}
	rec := geminiModel{Name: "models/" + m.ID, BaseModelID: m.ID, DisplayName: name,
		InputTokenLimit: m.ContextLength, OutputTokenLimit: m.MaxOutputTokens,
		SupportedGenerationMethods: geminiMethods, Thinking: m.Reasoning.Supported()}
	if m.OwnedBy != "" {
		rec.Description = "served by modelgate; owned by " + m.OwnedBy
	}
	return rec
}

// geminiListModels lists the chat models the key may use, in the Gemini API's shape
// ({"models": […]}, one page). Image, video and embedding models are not listed: the Gemini
// endpoints serve generation only.
func (s *Server) geminiListModels(w http.ResponseWriter, r *http.Request) {
	x, ok := s.openGoogle(w, r)
	if !ok {
		return
	}
	list := []geminiModel{}
	for _, m := range x.catalog.Models() {
		if m.Kind == catalog.KindChat && visible(x, m) {
			list = append(list, geminiRecordOf(m))
		}
	}
	s.answer(x, map[string]any{"models": list})
}

// geminiGetModel is one model of the list, by its id or an alias.
func (s *Server) geminiGetModel(w http.ResponseWriter, r *http.Request) {
	x, ok := s.openGoogle(w, r)
	if !ok {
		return
	}
	name := muxVar(r, "model")
	m, ok := x.catalog.Lookup(name)
	if e := removedModel(x, name, "/v1beta/models"); e != nil {
		s.render(x, e)
		return
	}
	if !ok || m.Kind != catalog.KindChat || !visible(x, m) {
		s.render(x, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "model_not_found", Param: "model",
			Message: "models/" + name + " is not found, or this key may not use it; GET /v1beta/models lists the models this key can use"})
		return
	}
	s.answer(x, geminiRecordOf(m))
}

// openGoogle starts a model-list request of the Gemini API: its call and the key. False
// means the error was answered.
func (s *Server) openGoogle(w http.ResponseWriter, r *http.Request) (*exchange, bool) {
	x := s.begin(w, r, "models")
	x.envelope = gemini.Format
	_, ok := s.openUnrecorded(w, r, x, false)
	return x, ok
}

package api

import (
	"net/http"
	"strconv"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// The key's and the catalog's say on a model name: whether it exists, was removed, may be
// called with this key (restrictions, zero data retention) and on this endpoint.

// resolveModel applies the catalog and the key's policy to a requested model name.
func resolveModel(x *exchange, name, kind string) (*catalog.Model, *apiError) {
	m, ok := x.catalog.Lookup(name)
	if !ok {
		list := "/v1/models"
		if x.endpoint == "gemini" || x.endpoint == "gemini_count_tokens" {
			list = "/v1beta/models"
		}
		if e := removedModel(x, name, list); e != nil {
			return nil, e
		}
		return nil, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "model_not_found", Param: "model",
			Message: "the model " + strconv.Quote(name) + " does not exist; GET " + list + " lists the models this key can use"}
	}
	if !keyAllows(x.key, m, name) && !(m.IsAuto() && autoAllowed(x, m)) {
		return nil, &apiError{Status: http.StatusForbidden, Type: "permission_error", Code: "model_not_allowed", Param: "model",
			Message: "this API key is restricted and may not call " + strconv.Quote(name)}
	}
	if x.key.ZDR && !zdrServes(x, m) {
		what := " has no zero-data-retention route"
		if m.IsAuto() {
			what = " has no candidate with a zero-data-retention route"
		}
		return nil, &apiError{Status: http.StatusForbidden, Type: "permission_error", Code: "model_not_available_in_zdr_mode", Param: "model",
			Message: "this API key is in zero-data-retention mode and " + strconv.Quote(name) + what}
	}
	if m.Kind != kind {
		return nil, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "model_not_supported_on_endpoint", Param: "model",
			Message: strconv.Quote(name) + " is " + article(m.Kind) + " model and cannot be used on " + endpointPath(x.endpoint)}
	}
	return m, nil
}

// removedModel is the 404 of a model the catalog lists as removed (docs/decisions.md,
// "Removed models"): it names the replacement, in the message and as "replacement" beside it,
// so a client can switch without reading docs. Nil when name was never removed.
func removedModel(x *exchange, name, list string) *apiError {
	repl, ok := x.catalog.Removed(name)
	if !ok {
		return nil
	}
	e := &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "model_not_found", Param: "model",
		Message: "the model " + strconv.Quote(name) + " has been removed from this gateway; GET " + list + " lists the models this key can use"}
	if repl != "" {
		e.Message = "the model " + strconv.Quote(name) + " has been removed; use " + strconv.Quote(repl) + " instead"
		e.Extra = map[string]any{"replacement": repl}
	}
	return e
}

// keyAllows: an unrestricted key may call anything; a restricted one the listed ids or aliases.
func keyAllows(k persistence.Key, m *catalog.Model, requested string) bool {
	if len(k.Models) == 0 {
		return true
	}
	for _, allowed := range k.Models {
		if allowed == m.ID || allowed == requested {
			return true
		}
		for _, a := range m.Aliases {
			if allowed == a {
				return true
			}
		}
	}
	return false
}

func article(kind string) string {
	if kind == catalog.KindImage || kind == catalog.KindEmbedding {
		return "an " + kind
	}
	return "a " + kind
}

func endpointPath(endpoint string) string {
	switch endpoint {
	case "chat":
		return "/v1/chat/completions"
	case "embeddings":
		return "/v1/embeddings"
	case "messages":
		return "/v1/messages"
	case "images":
		return "/v1/images/generations"
	case "videos":
		return "/v1/videos"
	case "responses":
		return "/v1/responses"
	case "gemini":
		return "/v1beta/models/{model}:generateContent"
	case "gemini_count_tokens":
		return "/v1beta/models/{model}:countTokens"
	}
	return "this endpoint"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// zdrServes reports whether m can serve a ZDR key: a ZDR route of its own, or for an auto model
// a candidate with one.
func zdrServes(x *exchange, m *catalog.Model) bool {
	if m.IsAuto() {
		return autoZDR(x, m)
	}
	return m.HasZDRRoute()
}

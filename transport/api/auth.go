package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/authlimit"
	"github.com/modelgate/modelgate/transport/keycheck"
)

// authenticate reads the key from Authorization: Bearer or x-api-key, on the Gemini API's
// paths also from x-goog-api-key or ?key=, and on the key-holder endpoints (anyKeyHeader)
// from x-goog-api-key.
func (s *Server) authenticate(r *http.Request, c *call) *apiError {
	secret := r.Header.Get("x-api-key")
	if secret == "" && isGoogleAPI(r) {
		secret = googleKey(r)
	}
	if secret == "" && c.anyKeyHeader {
		secret = strings.TrimSpace(r.Header.Get("x-goog-api-key"))
	}
	if auth := r.Header.Get("Authorization"); secret == "" && auth != "" {
		scheme, token, ok := strings.Cut(auth, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return errUnauthorized("the Authorization header must be 'Bearer <API key>'")
		}
		secret = strings.TrimSpace(token)
	}
	if secret == "" && isGoogleAPI(r) {
		return errUnauthorized("no API key: send 'x-goog-api-key: <API key>', '?key=<API key>' or 'Authorization: Bearer <API key>'")
	}
	if secret == "" && c.anyKeyHeader {
		return errUnauthorized("no API key: send 'Authorization: Bearer <API key>', 'x-api-key: <API key>' or 'x-goog-api-key: <API key>'")
	}
	if secret == "" {
		return errUnauthorized("no API key: send 'Authorization: Bearer <API key>' or 'x-api-key: <API key>'")
	}
	if wait := s.AuthLimit.Wait(r, authlimit.APIKey); wait > 0 {
		return errAuthLimited(wait)
	}
	c.checked = time.Now() // the cluster's wait budget starts here (quota.MaxWait)
	key, no := keycheck.Check(s.Keys, secret, s.now())
	if no != nil {
		if no.Failed {
			s.AuthLimit.Failed(r, authlimit.APIKey)
		}
		switch no.Status {
		case http.StatusServiceUnavailable:
			s.Logger.Warn("key check unavailable", "request_id", c.id, "err", no.Err)
		case http.StatusInternalServerError:
			s.Logger.Error("key lookup failed", "request_id", c.id, "err", no.Err)
		}
		c.revoked = no.Key // a revoked or expired key's account log gets the refusal too
		return refused(no)
	}
	c.key, c.ctx = key, r.Context()
	return nil
}

// refused is a key check's refusal as the API answers it.
func refused(no *keycheck.Refusal) *apiError {
	return &apiError{Status: no.Status, Type: no.Type, Code: no.Code, Message: no.Message, RetryAfter: no.RetryAfter}
}

// errAuthLimited refuses a key from a client that failed too many key, token or session
// checks (authlimit): the key is not looked at.
func errAuthLimited(wait time.Duration) *apiError {
	return &apiError{Status: http.StatusTooManyRequests, Type: authlimit.Type, Code: authlimit.Code,
		RetryAfter: authlimit.Seconds(wait), Message: authlimit.Message(wait)}
}

// errKeyExpired is the 401 of a key past its expiry (persistence.KeyLimits.ExpiresAt).
func errKeyExpired(at int64) *apiError { return refused(keycheck.Expired(at)) }

// resolveModel applies the catalog and the key's policy to a requested model name.
func (s *Server) resolveModel(c *call, name, kind string) (*catalog.Model, *apiError) {
	m, ok := c.catalog.Lookup(name)
	if !ok {
		list := "/v1/models"
		if c.endpoint == "gemini" || c.endpoint == "gemini_count_tokens" {
			list = "/v1beta/models"
		}
		if e := removedModel(c, name, list); e != nil {
			return nil, e
		}
		return nil, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "model_not_found", Param: "model",
			Message: "the model " + strconv.Quote(name) + " does not exist; GET " + list + " lists the models this key can use"}
	}
	if !keyAllows(c.key, m, name) && !(m.IsAuto() && autoAllowed(c, m)) {
		return nil, &apiError{Status: http.StatusForbidden, Type: "permission_error", Code: "model_not_allowed", Param: "model",
			Message: "this API key is restricted and may not call " + strconv.Quote(name)}
	}
	if c.key.ZDR && !zdrServes(c, m) {
		what := " has no zero-data-retention route"
		if m.IsAuto() {
			what = " has no candidate with a zero-data-retention route"
		}
		return nil, &apiError{Status: http.StatusForbidden, Type: "permission_error", Code: "model_not_available_in_zdr_mode", Param: "model",
			Message: "this API key is in zero-data-retention mode and " + strconv.Quote(name) + what}
	}
	if m.Kind != kind {
		return nil, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "model_not_supported_on_endpoint", Param: "model",
			Message: strconv.Quote(name) + " is " + article(m.Kind) + " model and cannot be used on " + endpointPath(c.endpoint)}
	}
	return m, nil
}

// removedModel is the 404 of a model the catalog lists as removed (docs/decisions.md,
// "Removed models"): it names the replacement, in the message and as "replacement" beside it,
// so a client can switch without reading docs. Nil when name was never removed.
func removedModel(c *call, name, list string) *apiError {
	repl, ok := c.catalog.Removed(name)
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
func zdrServes(c *call, m *catalog.Model) bool {
	if m.IsAuto() {
		return autoZDR(c, m)
	}
	return m.HasZDRRoute()
}

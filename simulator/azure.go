package simulator

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Azure OpenAI:
//
//	POST /openai/deployments/{deployment}/chat/completions?api-version=V   chat, with Azure's
//	     content-filter annotations (azure_chat.go)
//	POST /openai/deployments/{deployment}/embeddings?api-version=V
//	POST /openai/deployments/{deployment}/images/generations?api-version=V
//	POST /openai/responses?api-version=V
//	POST /openai/v1/chat/completions, /openai/v1/responses, /openai/v1/embeddings,
//	     /openai/v1/images/generations                                    the v1 API: no api-version
//
// On a deployment path the deployment is the model: it answers whatever model the body names
// (none needed); elsewhere the body's model names the deployment. Auth is an api-key header
// (any non-empty key, as the simulator's other keys) or an Entra access token of the
// simulator's Entra endpoint (entra_token.go) as a Bearer token. Azure's own refusals (auth, a
// path without api-version, throttling) are {"error":{"code","message"}}; what the model
// service refuses keeps OpenAI's error shape, as Azure relays it.

// Azure's auth refusals.
const (
	azureKeyDenied = "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key " +
		"for an active subscription and use a correct regional API endpoint for your resource."
	azureTokenDenied = "Unauthorized. Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired."
)

// azureAPIVersionRe is the shape of a dated api-version ("2024-10-21", "2025-04-01-preview").
var azureAPIVersionRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}(-preview)?$`)

// registerAzure mounts the Azure OpenAI endpoints, for the default route and /r/{route}.
func (s *Server) registerAzure() {
	d := s.azureDialect()
	deployment := "/openai/deployments/{deployment}/"
	s.handleRoutes(http.MethodPost, deployment+"chat/completions", s.endpoint(d, onDeployment(s.azureChat)))
	s.handleRoutes(http.MethodPost, deployment+"embeddings", s.endpoint(d, onDeployment(s.embeddings)))
	s.handleRoutes(http.MethodPost, deployment+"images/generations", s.endpoint(d, onDeployment(s.images)))
	s.handleRoutes(http.MethodPost, "/openai/responses", s.endpoint(d, versioned(s.responses)))
	s.handleRoutes(http.MethodPost, "/openai/v1/chat/completions", s.endpoint(d, s.azureChat))
	s.handleRoutes(http.MethodPost, "/openai/v1/responses", s.endpoint(d, s.responses))
	s.handleRoutes(http.MethodPost, "/openai/v1/embeddings", s.endpoint(d, s.embeddings))
	s.handleRoutes(http.MethodPost, "/openai/v1/images/generations", s.endpoint(d, s.images))
}

// azureDialect: api-key or an Entra token, Azure's errors.
func (s *Server) azureDialect() dialect {
	return dialect{authenticate: s.azureAuth, failure: azureFailure, refusal: azureRefusal,
		writeError: writeAzureError, requestIDHeader: "Apim-Request-Id"}
}

// azurePlatformError is a refusal of Azure itself, {"error":{"code","message"}}: an apiError
// without a Type.
func azurePlatformError(status int, code, msg string) apiError {
	return apiError{Status: status, Code: code, Message: msg}
}

// azureAuth accepts any non-empty api-key, or a live Entra token.
func (s *Server) azureAuth(r *http.Request, _ []byte) *apiError {
	if strings.TrimSpace(r.Header.Get("Api-Key")) != "" {
		return nil
	}
	tok, ok := bearerToken(r)
	if !ok {
		e := azurePlatformError(http.StatusUnauthorized, "401", azureKeyDenied)
		return &e
	}
	if _, status := s.tokens.lookup(tok, issuerEntra); status != tokenLive {
		e := azurePlatformError(http.StatusUnauthorized, "401", azureTokenDenied)
		return &e
	}
	return nil
}

// azureFailure is Azure's error for a status: its own for auth, a missing deployment and
// throttling, the model service's (OpenAI's) otherwise.
func azureFailure(status int) apiError {
	switch status {
	case http.StatusUnauthorized:
		return azurePlatformError(status, "401", azureKeyDenied)
	case http.StatusForbidden:
		return azurePlatformError(status, "403", "Access denied due to Virtual Network/Firewall rules (simulated).")
	case http.StatusNotFound:
		return azurePlatformError(status, "DeploymentNotFound", "The API deployment for this resource does not exist. "+
			"If you created the deployment within the last 5 minutes, please wait a moment and try again.")
	case http.StatusTooManyRequests:
		return azurePlatformError(status, "429", "Requests to the Azure OpenAI API have exceeded the call rate limit of your "+
			"current pricing tier (simulated). Please retry later.")
	}
	return openAIFailure(status)
}

// azureRefusal is Azure's wording of a refusal kind: the throttling 429 with its hint in
// retry-after-ms, or OpenAI's insufficient_quota.
func azureRefusal(w http.ResponseWriter, kind FailKind, delay time.Duration) apiError {
	if kind == FailQuota {
		return openAIRefusal(w, kind, delay)
	}
	if delay > 0 {
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(delay.Milliseconds(), 10))
	}
	return azureFailure(http.StatusTooManyRequests)
}

// writeAzureError writes Azure's own {"error":{"code","message"}} for an error without a Type,
// OpenAI's ErrorResponse otherwise.
func writeAzureError(w http.ResponseWriter, e apiError) {
	if e.Type != "" {
		writeOpenAIError(w, e)
		return
	}
	writeJSON(w, e.Status, obj{{"error", obj{{"code", e.Code}, {"message", e.Message}}}})
}

// versioned wraps a handler of a dated path: no api-version is a 404, as Azure routes it
// nowhere, and a version that is no date is a 400.
func versioned(serve func(*exchange)) func(*exchange) {
	return func(ex *exchange) {
		v := ex.r.URL.Query().Get("api-version")
		switch {
		case v == "":
			writeAzureError(ex.w, azurePlatformError(http.StatusNotFound, "404", "Resource not found"))
		case !azureAPIVersionRe.MatchString(v):
			writeAzureError(ex.w, azurePlatformError(http.StatusBadRequest, "BadRequest", "API version not supported"))
		default:
			serve(ex)
		}
	}
}

// onDeployment wraps a handler of a deployment path: versioned, and the deployment is the
// model whatever the body says.
func onDeployment(serve func(*exchange)) func(*exchange) {
	return versioned(func(ex *exchange) {
		named := *ex
		named.body = withModel(ex.body, ex.r.PathValue("deployment"))
		serve(&named)
	})
}

// withModel is a JSON object body with its "model" set to model; a body that is no JSON object
// is returned as it is, for the format's decoder to refuse.
func withModel(body []byte, model string) []byte {
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil || members == nil {
		return body
	}
	members["model"], _ = marshalJSON(model) // a string always encodes
	out, err := marshalJSON(members)
	if err != nil {
		return body
	}
	return out
}

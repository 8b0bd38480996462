package simulator

import (
	"net/http"
	"slices"
	"strconv"
)

// Microsoft Entra ID's client-credentials grant, what Azure OpenAI takes besides api-key:
// POST /{tenant}/oauth2/v2.0/token (also under /r/{route}/) with grant_type
// client_credentials, client_id, client_secret and scope
// https://cognitiveservices.azure.com/.default answers an access token that Azure requests
// carry as "Authorization: Bearer <token>". Like the API keys, any non-empty client id and
// secret are accepted: the simulator checks that a gateway runs the grant, not which app it
// is.

// azureScopes are the resources whose tokens Azure OpenAI accepts.
var azureScopes = []string{"https://cognitiveservices.azure.com/.default", "https://ai.azure.com/.default"}

// entraError is Entra's refusal: the OAuth error plus its AADSTS code.
func entraError(w http.ResponseWriter, status int, code string, aadsts int, desc string) {
	writeJSON(w, status, obj{{"error", code},
		{"error_description", "AADSTS" + strconv.Itoa(aadsts) + ": " + desc},
		{"error_codes", []int{aadsts}},
		{"error_uri", "https://login.microsoftonline.com/error?code=" + strconv.Itoa(aadsts)}})
}

func (s *Server) entraToken(w http.ResponseWriter, r *http.Request) {
	route := r.PathValue("route")
	if !tokenForm(w, r) {
		entraError(w, http.StatusBadRequest, "invalid_request", 900144, "The request body must contain the following parameter: 'grant_type'.")
		return
	}
	f := r.PostForm
	switch {
	case f.Get("grant_type") == "":
		entraError(w, http.StatusBadRequest, "invalid_request", 900144, "The request body must contain the following parameter: 'grant_type'.")
	case f.Get("grant_type") != "client_credentials":
		entraError(w, http.StatusBadRequest, "unsupported_grant_type", 70003, "The app requested an unsupported grant type '"+f.Get("grant_type")+"'.")
	case f.Get("client_id") == "":
		entraError(w, http.StatusBadRequest, "invalid_request", 900144, "The request body must contain the following parameter: 'client_id'.")
	case f.Get("client_secret") == "":
		entraError(w, http.StatusUnauthorized, "invalid_client", 7000216,
			"'client_assertion', 'client_secret' or 'request' is required for the 'client_credentials' grant type.")
	case f.Get("scope") == "":
		entraError(w, http.StatusBadRequest, "invalid_request", 900144, "The request body must contain the following parameter: 'scope'.")
	case !slices.Contains(azureScopes, f.Get("scope")):
		entraError(w, http.StatusBadRequest, "invalid_scope", 1002012, "The provided value for scope "+f.Get("scope")+
			" is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).")
	default:
		tok, expiresIn := s.issueToken("sim-entra-", issuerEntra, []string{f.Get("scope")}, s.Behavior(route).tokenLifetime())
		s.state(route).tokenGrants.Add(1)
		writeJSON(w, http.StatusOK, obj{{"token_type", "Bearer"}, {"expires_in", expiresIn}, {"ext_expires_in", expiresIn},
			{"access_token", tok}})
	}
}

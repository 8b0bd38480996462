package upstream

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelgate/modelgate/codec/jsonpatch"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// The clouds serve the providers' formats under their own URLs: the model in the path, the
// messages body with an anthropic_version of the cloud's and no model, an api-version query.
// Everything above this package builds the request as the format's own API takes it; this
// file moves it to where the route's cloud expects it.

// Anthropic's body versions on the clouds (their APIs refuse the request without one).
const (
	bedrockAnthropicVersion = "bedrock-2023-05-31"
	vertexAnthropicVersion  = "vertex-2023-10-16"
)

// target is the URL of one call: the route's base, the path its provider puts the operation
// at, the api-version and the route's own query parameters.
func target(req Request) string {
	rt := req.Route
	if rt.Provider == catalog.ProviderDirect && len(rt.Query) == 0 {
		return rt.BaseURL + req.Path // the format's own API: nothing to move
	}
	path, query, _ := strings.Cut(req.Path, "?")
	q, _ := url.ParseQuery(query)
	switch rt.Provider {
	case catalog.ProviderBedrock:
		if rt.Format == catalog.FormatMessages {
			op := "/invoke"
			if req.Stream {
				op = "/invoke-with-response-stream"
			}
			path = "/model/" + url.PathEscape(rt.UpstreamModel) + op
		}
	case catalog.ProviderVertex:
		v := rt.Vertex
		prefix := "/v1/projects/" + v.Project + "/locations/" + v.Location + "/publishers/"
		if rt.Format == catalog.FormatMessages {
			op := ":rawPredict"
			if req.Stream {
				op = ":streamRawPredict"
			}
			path = prefix + "anthropic/models/" + url.PathEscape(rt.UpstreamModel) + op
		} else {
			path = prefix + "google" + path // the gemini path: /models/M:generateContent
		}
	case catalog.ProviderAzure:
		a := rt.Azure
		switch {
		case a.APIVersion == catalog.AzureV1:
			path = "/openai/v1" + path
		case path == "/responses" || strings.HasPrefix(path, "/responses/"):
			path = "/openai" + path // Azure's responses API is per resource, the model in the body
			q.Set("api-version", a.APIVersion)
		default:
			path = "/openai/deployments/" + url.PathEscape(a.Deployment) + path
			q.Set("api-version", a.APIVersion)
		}
	}
	for k, v := range rt.Query {
		q.Set(k, v)
	}
	u := rt.BaseURL + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// cloudBody rewrites a messages body for a cloud that serves Anthropic's models: the model
// goes in the path, the version in the body, and on Bedrock the stream mode in the path and
// the beta flags in the body. Other routes' bodies go as they are.
func cloudBody(rt *catalog.Route, body []byte, h http.Header) ([]byte, error) {
	if rt.Format != catalog.FormatMessages {
		return body, nil
	}
	switch rt.Provider {
	case catalog.ProviderBedrock:
		ops := []jsonpatch.Op{jsonpatch.Remove("model"), jsonpatch.Remove("stream"), jsonpatch.Set("anthropic_version", []byte(`"`+bedrockAnthropicVersion+`"`))}
		if betas := betaFlags(h); betas != nil {
			ops = append(ops, jsonpatch.Set("anthropic_beta", betas))
		}
		h.Del("anthropic-version") // Bedrock reads both from the body
		h.Del("anthropic-beta")
		return jsonpatch.Apply(body, ops...)
	case catalog.ProviderVertex:
		h.Del("anthropic-version")
		return jsonpatch.Apply(body, jsonpatch.Remove("model"), jsonpatch.Set("anthropic_version", []byte(`"`+vertexAnthropicVersion+`"`)))
	}
	return body, nil
}

// betaFlags are the anthropic-beta header's flags as a JSON array, nil when there are none.
func betaFlags(h http.Header) []byte {
	var flags []string
	for _, v := range h.Values("anthropic-beta") {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				flags = append(flags, f)
			}
		}
	}
	if flags == nil {
		return nil
	}
	b, _ := json.Marshal(flags)
	return b
}

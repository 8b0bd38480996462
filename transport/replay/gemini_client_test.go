package replay

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// geminiClientDriver is set by a build that has google.golang.org/genai (v1.77.0, pinned
// by the Gemini client-format work): gemini_genai_test.go, tag replay_genai.
var geminiClientDriver func(t *testing.T, h *harness, c cell) result

// runGemini drives the Gemini client format (POST /v1beta/models/{model}:generateContent
// and :streamGenerateContent?alt=sse) with the official Go SDK once the gateway serves it.
func runGemini(t *testing.T, h *harness, c cell) result {
	if why := geminiUnavailable(t, h.env); why != "" {
		t.Skip(why)
	}
	if geminiClientDriver == nil {
		t.Skip("the gateway serves /v1beta, but this build has no Gemini SDK driver: run with -tags replay_genai once google.golang.org/genai v1.77.0 is in go.mod")
	}
	return geminiClientDriver(t, h, c)
}

var geminiProbe = map[*nodetest.Env]string{}

// geminiUnavailable says why the Gemini client format cannot be replayed ("" when it can):
// a router 404 for the /v1beta endpoint means it does not exist yet.
func geminiUnavailable(t *testing.T, env *nodetest.Env) string {
	if why, ok := geminiProbe[env]; ok {
		return why
	}
	resp := env.Post("/v1beta/models/no-such-model:generateContent", "", `{"contents":[{"parts":[{"text":"hi"}]}]}`,
		"x-goog-api-key", env.Key)
	body := string(nodetest.Read(t, resp))
	why := ""
	if resp.StatusCode == http.StatusNotFound && !strings.Contains(body, `"status"`) { // not Google's envelope
		why = "the gateway does not serve the Gemini client format yet (POST /v1beta/models/…:generateContent is a router 404; issue #11 item 11)"
	}
	geminiProbe[env] = why
	return why
}

package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

type errorBody struct {
	Error struct {
		Message   string  `json:"message"`
		Type      string  `json:"type"`
		Code      *string `json:"code"`
		Param     *string `json:"param"`
		RequestID string  `json:"request_id"`
	} `json:"error"`
}

func TestErrorStatuses(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	restricted := env.NewKey(persistence.KeySpec{Name: "r", Models: []string{"embed"}})
	zdr := env.NewKey(persistence.KeySpec{Name: "z", ZDR: true})
	revokedSecret := env.NewKey(persistence.KeySpec{Name: "gone"})
	k, _ := env.Node.Store.LookupKey(revokedSecret)
	if _, err := env.Node.Store.RevokeKey(k.ID); err != nil {
		t.Fatal(err)
	}
	chat := `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		name    string
		path    string
		key     string
		body    string
		headers []string
		status  int
		typ     string
		code    string
		param   string
	}{
		{"missing key", "/v1/chat/completions", "", chat, nil, 401, "authentication_error", "invalid_api_key", ""},
		{"unknown key", "/v1/chat/completions", "sk-token-" + strings.Repeat("x", 48), chat, nil, 401, "authentication_error", "invalid_api_key", ""},
		{"not a key", "/v1/chat/completions", "hello", chat, nil, 401, "authentication_error", "invalid_api_key", ""},
		{"revoked key", "/v1/chat/completions", revokedSecret, chat, nil, 401, "authentication_error", "invalid_api_key", ""},
		{"restricted key", "/v1/chat/completions", restricted, chat, nil, 403, "permission_error", "model_not_allowed", "model"},
		{"zdr key, no zdr route", "/v1/chat/completions", zdr, `{"model":"open-only","messages":[{"role":"user","content":"hi"}]}`, nil, 403, "permission_error", "model_not_available_in_zdr_mode", "model"},
		{"unknown model", "/v1/chat/completions", env.Key, `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`, nil, 404, "invalid_request_error", "model_not_found", "model"},
		{"embedding model on chat", "/v1/chat/completions", env.Key, `{"model":"embed","messages":[{"role":"user","content":"hi"}]}`, nil, 400, "invalid_request_error", "model_not_supported_on_endpoint", "model"},
		{"chat model on embeddings", "/v1/embeddings", env.Key, `{"model":"chat","input":"hi"}`, nil, 400, "invalid_request_error", "model_not_supported_on_endpoint", "model"},
		{"not json", "/v1/chat/completions", env.Key, `{"model":`, nil, 400, "invalid_request_error", "invalid_request", ""},
		{"no messages", "/v1/chat/completions", env.Key, `{"model":"chat"}`, nil, 400, "invalid_request_error", "invalid_request", "messages"},
		{"empty messages", "/v1/chat/completions", env.Key, `{"model":"chat","messages":[]}`, nil, 400, "invalid_request_error", "invalid_request", "messages"},
		{"message without role", "/v1/chat/completions", env.Key, `{"model":"chat","messages":[{"content":"x"}]}`, nil, 400, "invalid_request_error", "invalid_request", "messages[0].role"},
		{"embeddings without input", "/v1/embeddings", env.Key, `{"model":"embed"}`, nil, 400, "invalid_request_error", "invalid_request", "input"},
		{"body too large", "/v1/chat/completions", env.Key, `{"model":"chat","messages":[{"role":"user","content":"` + strings.Repeat("a", 70000) + `"}]}`, nil, 413, "invalid_request_error", "request_too_large", ""},
		{"x-api-key accepted, restricted", "/v1/chat/completions", "", chat, []string{"x-api-key", restricted}, 403, "permission_error", "model_not_allowed", "model"},
		{"unknown path", "/v2/chat", env.Key, chat, nil, 404, "invalid_request_error", "unknown_url", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Post(c.path, c.key, c.body, c.headers...)
			raw := nodetest.Read(t, resp)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, raw)
			}
			var e errorBody
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatalf("not the chat error shape: %s", raw)
			}
			code, param := "", ""
			if e.Error.Code != nil {
				code = *e.Error.Code
			}
			if e.Error.Param != nil {
				param = *e.Error.Param
			}
			if e.Error.Type != c.typ || code != c.code || param != c.param || e.Error.Message == "" {
				t.Fatalf("error = %+v, want type %q code %q param %q", e.Error, c.typ, c.code, c.param)
			}
			if c.path != "/v2/chat" && (e.Error.RequestID == "" || e.Error.RequestID != resp.Header.Get("X-Request-Id")) {
				t.Fatalf("request id %q, header %q", e.Error.RequestID, resp.Header.Get("X-Request-Id"))
			}
		})
	}
	if n := env.Sim.Calls("a") + env.Sim.Calls("b") + env.Sim.Calls("c") + env.Sim.Calls("e"); n != 0 {
		t.Fatalf("refused requests reached the upstream %d times", n)
	}
}

func TestRevocationTakesEffectAtOnce(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	chat := `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`
	resp := env.Admin(http.MethodPost, "/admin/v1/accounts/"+env.Account.ID+"/keys", `{"name":"temp"}`)
	var created struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	json.Unmarshal(nodetest.Read(t, resp), &created)
	if resp.StatusCode != 201 || !strings.HasPrefix(created.Key, "sk-token-") {
		t.Fatalf("create key: %d %+v", resp.StatusCode, created)
	}
	if r := env.Post("/v1/chat/completions", created.Key, chat); r.StatusCode != 200 {
		t.Fatalf("before revoke: %d %s", r.StatusCode, nodetest.Read(t, r))
	} else {
		nodetest.Read(t, r)
	}
	if r := env.Admin(http.MethodDelete, "/admin/v1/keys/"+created.ID, ""); r.StatusCode != 200 {
		t.Fatalf("revoke: %d %s", r.StatusCode, nodetest.Read(t, r))
	} else {
		nodetest.Read(t, r)
	}
	r := env.Post("/v1/chat/completions", created.Key, chat)
	if body := nodetest.Read(t, r); r.StatusCode != 401 || !strings.Contains(string(body), "revoked") {
		t.Fatalf("after revoke: %d %s", r.StatusCode, body)
	}
}

package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// TestItem9AdminNamesTheFieldAndTypesNotFound (issue #12 item 9): a key restricted to models
// the catalog does not have is a 400 naming them; a missing account or key is a 404 whose
// code says which record; no message carries a Go package prefix or type name.
func TestItem9AdminNamesTheFieldAndTypesNotFound(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	keys := "/admin/v1/accounts/" + env.Account.ID + "/keys"
	cases := []struct {
		name, method, path, body string
		status                   int
		code, param, message     string
	}{
		{"restricted to unknown models", http.MethodPost, keys, `{"name":"k","models":["chat","claude-9","gpt-x"]}`,
			400, "unknown_model", "models", "models names models that are not in the catalog: claude-9, gpt-x (GET /v1/models lists them)"},
		{"a missing account", http.MethodGet, "/admin/v1/accounts/acct_nobody", "",
			404, "account_not_found", "", `no account "acct_nobody"`},
		{"keys of a missing account", http.MethodPost, "/admin/v1/accounts/acct_nobody/keys", `{"name":"k"}`,
			404, "account_not_found", "", `no account "acct_nobody"`},
		{"revoking a missing key", http.MethodDelete, "/admin/v1/keys/key_nothing", "",
			404, "key_not_found", "", `no key "key_nothing"`},
		{"an invalid e-mail", http.MethodPost, "/admin/v1/accounts", `{"email":"nobody"}`,
			400, "invalid_request", "email", `email "nobody" must contain one '@' with text on both sides`},
		{"a field of the wrong type", http.MethodPost, keys, `{"name":7}`,
			400, "invalid_json", "", "the body must be a JSON object of the documented fields: name must be a string, not number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, raw := admin(t, env, c.method, c.path, c.body)
			wantError(t, status, raw, c.status, "invalid_request_error", c.code, c.param, c.message)
			var e apiError
			decode(t, raw, &e)
			if e.Error.Message != c.message || strings.Contains(string(raw), "persistence") {
				t.Errorf("message %q, want %q", e.Error.Message, c.message)
			}
		})
	}
	// An alias of a catalog model is a model the key may be restricted to.
	if status, raw := admin(t, env, http.MethodPost, keys, `{"name":"k","models":["chat-latest","msg"]}`); status != 201 {
		t.Fatalf("%d %s", status, raw)
	}
}

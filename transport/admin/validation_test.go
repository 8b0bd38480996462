package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// TestAdminNamesTheFieldAndTypesNotFound: a key restricted to models the catalog does not have
// is a 400 naming them; a missing account or key is a 404 whose code says which record; no
// message carries a Go package prefix or type name.
func TestAdminNamesTheFieldAndTypesNotFound(t *testing.T) {
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
			Decode(t, raw, &e)
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

// TestAdminBodiesAreOneObjectOfTheDocumentedMembers (found by FuzzAdminBodies): encoding/json
// matches member names in any case, lets the last of two win, takes null for an object and
// ignores what follows it; the admin API refuses each, so what it stores is what was sent. An
// idempotency key the store cannot keep is a 400 on it, not the store's 500.
func TestAdminBodiesAreOneObjectOfTheDocumentedMembers(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	acct := "/admin/v1/accounts/" + env.Account.ID
	const prefix = "the body must be a JSON object of the documented fields: "
	cases := []struct {
		name, method, path, body string
		code, param, message     string
	}{
		{"a member in another case", http.MethodPost, acct + "/keys", `{"nAme":"k","Zdr":true}`,
			"invalid_json", "name", prefix + `member "nAme" must be spelt "name"`},
		{"a member twice", http.MethodPut, acct + "/plan", `{"plan":"pro","plan":"free"}`,
			"invalid_json", "plan", prefix + `member "plan" is given twice`},
		{"null", http.MethodPost, "/admin/v1/accounts", `null`,
			"invalid_json", "", prefix + "it must be an object, not null"},
		{"more after the object", http.MethodPost, "/admin/v1/accounts", `{"email":"a@example.com"} {"plan":"pro"}`,
			"invalid_json", "", prefix + "it must be one JSON object with nothing after it"},
		{"an idempotency key with a space", http.MethodPost, acct + "/credits", `{"amount_usd":"1","idempotency_key":" 0"}`,
			"invalid_request", "idempotency_key", "idempotency_key must be 1-128 printable ASCII characters without spaces"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, raw := admin(t, env, c.method, c.path, c.body)
			wantError(t, status, raw, 400, "invalid_request_error", c.code, c.param, c.message)
			var e apiError
			Decode(t, raw, &e)
			if e.Error.Message != c.message {
				t.Errorf("message %q, want %q", e.Error.Message, c.message)
			}
		})
	}
	if n := accountCount(t, env); n != 1 {
		t.Errorf("%d accounts after refused creations, want 1", n)
	}
}

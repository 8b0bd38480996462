package badinput_test

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// adminCases: the operator's API under /admin/v1 on the admin listener, in the chat envelope
// with the request id. Nothing an admin call refuses changes an account, a key, the credits or
// the log.
func adminCases() []badCase {
	call := func(method, name, path, body string, want answer) badCase {
		return badCase{endpoint: "admin", name: name, method: method, path: path, body: body, key: keyAdmin, want: want, eff: nothing, admin: true}
	}
	bad := func(code, param, msg string) answer { return chatErr(400, "invalid_request_error", code, param, msg) }
	notFound := func(what, id string) answer {
		return chatErr(404, "invalid_request_error", what+"_not_found", "", "no "+what+` "`+id+`"`)
	}
	badJSON := func(msg string) answer { return bad("invalid_json", "", msg) }
	noToken := chatErr(401, "authentication_error", "invalid_admin_token", "", "Authorization: Bearer <admin token>")
	unknownURL := chatErr(404, "invalid_request_error", "unknown_url", "", "no endpoint at")
	const (
		accounts = "/admin/v1/accounts"
		acct     = "/admin/v1/accounts/{acct}"
	)
	credits := func(name, body string, want answer) badCase { return call("POST", name, acct+"/credits", body, want) }
	amount := bad("invalid_amount", "amount_usd", "amount_usd must be a positive decimal string")
	return []badCase{
		call("GET", "no token", accounts, "", noToken).withKey(keyNone),
		call("GET", "a wrong token", accounts, "", noToken).withKey(keyNone).withHeaders("Authorization", "Bearer not-the-token"),
		call("GET", "the token as x-api-key", accounts, "", noToken).withKey(keyNone).withHeaders("x-api-key", nodetest.AdminToken),
		call("GET", "the token in Basic authorization", accounts, "", noToken).withKey(keyNone).withHeaders("Authorization", "Basic "+nodetest.AdminToken),
		call("GET", "an API key as the token", accounts, "", noToken).withKey(keyMain),
		call("POST", "a new account: not JSON", accounts, `not json`, badJSON("not valid JSON")),
		call("POST", "a new account: a JSON array", accounts, `[]`, badJSON("got array")),
		call("POST", "a new account: email of the wrong type", accounts, `{"email":5}`, badJSON("email must be a string, not number")),
		call("POST", "a new account: an unknown field", accounts, `{"email":"new@example.com","admin":true}`, badJSON(`unknown field "admin"`)),
		call("POST", "a new account: two objects", accounts, `{"email":"new@example.com","plan":"roomy"} {"email":"two@example.com"}`,
			badJSON("one JSON object")),
		call("POST", "a new account: deeply nested JSON", accounts, `{"email":"new@example.com","plan":`+nested(20000)+`}`, badJSON("exceeded max depth")),
		call("POST", "a new account: a body over 1 MiB", accounts, `{"email":"new@example.com","plan":"roomy"}`+strings.Repeat(" ", 2<<20),
			chatErr(413, "invalid_request_error", "request_too_large", "", "limit of 1 MiB")),
		call("POST", "a new account: no @ in the e-mail", accounts, `{"email":"nobody","plan":"roomy"}`,
			bad("invalid_request", "email", "must contain one '@'")),
		call("POST", "a new account: a NUL in the e-mail", accounts, `{"email":"a\u0000b@example.com","plan":"roomy"}`,
			bad("invalid_request", "email", "control characters")),
		call("POST", "a new account: a 3000-character e-mail", accounts, `{"email":"`+strings.Repeat("a", 3000)+`@example.com","plan":"roomy"}`,
			bad("invalid_request", "email", "email")),
		call("POST", "a new account: an unknown plan", accounts, `{"email":"new@example.com","plan":"gold"}`,
			bad("unknown_plan", "plan", "plan gold is not in the catalog; plans: free, interactive, roomy")),
		call("POST", "a new account: a taken e-mail in capitals", accounts, `{"email":"{EMAIL}","plan":"roomy"}`,
			chatErr(409, "invalid_request_error", "email_taken", "email", "account {acct} has it")),
		call("GET", "the list: a negative limit", accounts+"?limit=-1", "", bad("invalid_limit", "limit", "from 1 to 1000")),
		call("GET", "the list: a limit past 64 bits", accounts+"?limit=99999999999999999999", "", bad("invalid_limit", "limit", "from 1 to 1000")),
		call("GET", "the list: a cursor not given out", accounts+"?cursor=garbage", "", bad("invalid_cursor", "cursor", "start again without it")),
		call("GET", "the list: a misspelt parameter", accounts+"?emial=x@example.com", "", bad("unknown_parameter", "emial", "unknown query parameter emial")),
		call("GET", "an unknown account", accounts+"/acct_nobody", "", notFound("account", "acct_nobody")),
		call("GET", "a NUL in an account id", accounts+"/acct_%00", "", notFound("account", `acct_\x00`)),
		call("GET", "dot-dot segments in an account id", accounts+"/..%2F..%2Fkeys", "", unknownURL),
		call("POST", "a key: unknown models", acct+"/keys", `{"name":"k","models":["chat","gpt-x"]}`,
			bad("unknown_model", "models", "not in the catalog: gpt-x")),
		call("POST", "a key: models of the wrong type", acct+"/keys", `{"name":"k","models":"chat"}`, badJSON("models must be an array, not string")),
		call("POST", "a key: a NUL in the name", acct+"/keys", `{"name":"x\u0000y"}`, bad("invalid_request", "name", "control characters")),
		call("POST", "a key: a 5000-character name", acct+"/keys", `{"name":"`+strings.Repeat("n", 5000)+`"}`, bad("invalid_request", "name", "max 100")),
		call("POST", "a key: an import too short", acct+"/keys", `{"name":"k","import_key":"sk-token-short"}`, bad("invalid_request", "import_key", "min 20")),
		call("POST", "a key: importing a key that exists", acct+"/keys", `{"name":"k","import_key":"{key}"}`,
			chatErr(409, "invalid_request_error", "conflict", "import_key", "already registered")),
		call("POST", "a key: an unknown account", accounts+"/acct_nobody/keys", `{"name":"k"}`, notFound("account", "acct_nobody")),
		call("GET", "the keys of an unknown account", accounts+"/acct_nobody/keys", "", notFound("account", "acct_nobody")),
		call("DELETE", "revoking an unknown key", "/admin/v1/keys/key_nothing", "", notFound("key", "key_nothing")),
		call("DELETE", "revoking dot-dot segments", "/admin/v1/keys/..%2Faccounts", "", unknownURL),
		call("PUT", "a plan: unknown", acct+"/plan", `{"plan":"gold"}`, bad("unknown_plan", "plan", "plan gold is not in the catalog")),
		call("PUT", "a plan: empty", acct+"/plan", `{"plan":""}`, bad("unknown_plan", "plan", "is not in the catalog")),
		call("PUT", "a plan: an unknown account", accounts+"/acct_nobody/plan", `{"plan":"roomy"}`, notFound("account", "acct_nobody")),
		credits("credits: negative", `{"amount_usd":"-5","idempotency_key":"t1"}`, amount),
		credits("credits: zero", `{"amount_usd":"0","idempotency_key":"t1"}`, amount),
		credits("credits: below a pico-dollar", `{"amount_usd":"0.0000000000001","idempotency_key":"t1"}`, amount),
		credits("credits: an exponent", `{"amount_usd":"1e99","idempotency_key":"t1"}`, amount),
		credits("credits: NaN", `{"amount_usd":"NaN","idempotency_key":"t1"}`, amount),
		credits("credits: past 64 bits of pico-dollars", `{"amount_usd":"99999999","idempotency_key":"t1"}`, amount),
		credits("credits: a number, not a string", `{"amount_usd":5,"idempotency_key":"t1"}`, badJSON("amount_usd must be a string, not number")),
		credits("credits: no idempotency key", `{"amount_usd":"5"}`,
			bad("missing_idempotency_key", "idempotency_key", "idempotency_key is required")),
		credits("credits: an idempotency key used for another amount", `{"amount_usd":"6","idempotency_key":"once"}`,
			chatErr(409, "invalid_request_error", "idempotency_conflict", "idempotency_key", "used for a different amount")).
			before(topUp("5", "once")),
		call("POST", "credits: an unknown account", accounts+"/acct_nobody/credits", `{"amount_usd":"5","idempotency_key":"t1"}`,
			notFound("account", "acct_nobody")),
		call("GET", "quota: an unknown account", accounts+"/acct_nobody/quota", "", notFound("account", "acct_nobody")),
		call("GET", "usage: a time that is no time", acct+"/usage?from=yesterday", "", bad("invalid_time", "from", "RFC 3339")),
		call("GET", "usage: an invalid date", acct+"/usage?to=2026-13-01T00:00:00Z", "", bad("invalid_time", "to", "RFC 3339")),
		call("GET", "usage: unix seconds past 64 bits", acct+"/usage?from=99999999999999999999", "", bad("invalid_time", "from", "RFC 3339")),
		call("GET", "usage: limit 0", acct+"/usage?limit=0", "", bad("invalid_limit", "limit", "from 1 to 1000")),
		call("GET", "usage: limit over 1000", acct+"/usage?limit=5000", "", bad("invalid_limit", "limit", "from 1 to 1000")),
		call("GET", "usage: a cursor not given out", acct+"/usage?cursor=eyJmIjow", "", bad("invalid_request", "cursor", "not one this API gave out")),
		call("GET", "usage: a misspelt parameter", acct+"/usage?modle=chat", "", bad("unknown_parameter", "modle", "unknown query parameter modle")),
		call("GET", "usage: an unknown account", accounts+"/acct_nobody/usage", "", notFound("account", "acct_nobody")),
		call("POST", "routes: a wrong method", "/admin/v1/routes", `{}`,
			chatErr(405, "invalid_request_error", "method_not_allowed", "", "use GET")),
		call("DELETE", "accounts: a wrong method", accounts, "", chatErr(405, "invalid_request_error", "method_not_allowed", "", "use GET or POST")),
		call("GET", "an unknown admin path", "/admin/v1/secrets", "", unknownURL),
	}
}

// before runs f on the case's account before the case is measured.
func (c badCase) before(f func(*testing.T, *suite, *caseAccount)) badCase { c.prepare = f; return c }

// topUp adds credits to the case's account with an idempotency key.
func topUp(amount, key string) func(*testing.T, *suite, *caseAccount) {
	return func(t *testing.T, s *suite, c *caseAccount) {
		resp := s.env.Admin("POST", "/admin/v1/accounts/"+c.acct.ID+"/credits", `{"amount_usd":"`+amount+`","idempotency_key":"`+key+`"}`)
		if raw := nodetest.Read(t, resp); resp.StatusCode != 200 {
			t.Fatalf("top-up: %d %s", resp.StatusCode, raw)
		}
	}
}

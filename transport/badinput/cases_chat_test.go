package badinput_test

import (
	"strings"
	"testing"
)

const (
	hello     = `"messages":[{"role":"user","content":"hi"}]`
	chatHello = `{"model":"chat",` + hello + `}`
)

// nested is a value nested depth arrays deep (the decoders stop at 10000).
func nested(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }

// oversize is a string value that takes a body past the catalog's 64 KiB limit.
var oversize = strings.Repeat("a", 70000)

func post(endpoint, name, path, body string, want answer, eff effect) badCase {
	return badCase{endpoint: endpoint, name: name, method: "POST", path: path, body: body, want: want, eff: eff}
}

// withKey, withHeaders and onPlan adjust a case.
func (c badCase) withKey(k keyKind) badCase       { c.key = k; return c }
func (c badCase) withHeaders(h ...string) badCase { c.headers = h; return c }
func (c badCase) onPlan(plan string) badCase      { c.plan = plan; return c }
func (c badCase) knownKey() badCase               { c.known = true; return c }
func (c badCase) checking(f func(*testing.T, *suite, *caseAccount, []byte)) badCase {
	c.check = f
	return c
}

var (
	unknownKey   = chatErr(401, "authentication_error", "invalid_api_key", "", "invalid API key")
	notAllowed   = chatErr(403, "permission_error", "model_not_allowed", "model", "restricted")
	notZDR       = chatErr(403, "permission_error", "model_not_available_in_zdr_mode", "model", "zero-data-retention")
	noSuchModel  = chatErr(404, "invalid_request_error", "model_not_found", "model", "does not exist")
	removedModel = chatErr(404, "invalid_request_error", "model_not_found", "model", `use "chat" instead`)
	tooLarge     = chatErr(413, "invalid_request_error", "request_too_large", "", "limit of 64 KiB")
	notJSON      = invalid("", "must be a JSON object")
)

func wrongKind(endpoint string) answer {
	return chatErr(400, "invalid_request_error", "model_not_supported_on_endpoint", "model", "cannot be used on "+endpoint)
}

// chatCases: /v1/chat/completions. The chat model counts one call (1000), as does a request
// naming no model the gateway knows.
func chatCases() []badCase {
	const p = "/v1/chat/completions"
	c := func(name, body string, want answer, eff effect) badCase {
		return post("chat", name, p, body, want, eff)
	}
	member := func(m string) string { return `{"model":"chat",` + hello + `,` + m + `}` }
	return []badCase{
		c("not JSON", `not json`, notJSON, clientError(1000)),
		c("a JSON array", `[1,2]`, invalid("", "got [1,2]"), clientError(1000)),
		c("a JSON string", `"hi"`, invalid("", "must be a JSON object"), clientError(1000)),
		c("JSON null", `null`, invalid("", "got null"), clientError(1000)),
		c("an empty body", ``, notJSON, clientError(1000)),
		c("a raw NUL byte in a string", "{\"model\":\"chat\x00\","+hello+"}", invalid("", "not valid JSON"), clientError(1000)),
		c("a byte-order mark", "\xef\xbb\xbf"+chatHello, invalid("", "not valid JSON"), clientError(1000)),
		c("model of the wrong type", `{"model":5,`+hello+`}`, invalid("model", "model is required and must be a string"), clientError(1000)),
		c("no model", `{`+hello+`}`, invalid("model", "model is required"), clientError(1000)),
		c("no messages", `{"model":"chat"}`, invalid("messages", "messages is required"), clientError(1000)),
		c("no message in messages", `{"model":"chat","messages":[]}`, invalid("messages", "at least one message"), clientError(1000)),
		c("messages of the wrong type", `{"model":"chat","messages":"hi"}`, invalid("messages", "messages"), clientError(1000)),
		c("an unknown role", `{"model":"chat","messages":[{"role":"wizard","content":"hi"}]}`, invalid("messages[0].role", `got "wizard"`), clientError(1000)),
		c("temperature out of range", member(`"temperature":99`), invalid("temperature", "from 0 to 2; got 99"), clientError(1000)),
		c("a negative temperature", member(`"temperature":-1`), invalid("temperature", "got -1"), clientError(1000)),
		c("a huge temperature", member(`"temperature":1e308`), invalid("temperature", "got 1e308"), clientError(1000)),
		c("temperature of the wrong type", member(`"temperature":"hot"`), invalid("temperature", `got "hot"`), clientError(1000)),
		c("n past any float", member(`"n":1e400`), invalid("n", "got 1e400"), clientError(1000)),
		c("a negative max_tokens", member(`"max_tokens":-5`), invalid("max_tokens", "at least 1; got -5"), clientError(1000)),
		c("max_tokens past 64 bits", member(`"max_tokens":99999999999999999999`), invalid("max_tokens", "got 99999999999999999999"), clientError(1000)),
		c("max_completion_tokens past 64 bits", member(`"max_completion_tokens":18446744073709551616`),
			invalid("max_completion_tokens", "got 18446744073709551616"), clientError(1000)),
		c("an unknown reasoning effort", member(`"reasoning_effort":"ultra"`), invalid("reasoning_effort", `"ultra"`), clientError(1000)),
		c("an unknown tool_choice", member(`"tool_choice":"maybe"`), invalid("tool_choice", `got "maybe"`), clientError(1000)),
		c("a stream of many choices", member(`"stream":true,"n":1000`), invalid("n", "got 1000"), clientError(1000)),
		c("deeply nested JSON", member(`"metadata":`+nested(10001)), invalid("", "exceeded max depth"), clientError(1000)),
		c("a body over the limit", `{"model":"chat","messages":[{"role":"user","content":"`+oversize+`"}]}`, tooLarge, clientError(1000)),
		c("an unknown model", `{"model":"nope",`+hello+`}`, noSuchModel, clientError(1000)),
		c("a removed model", `{"model":"chat-old",`+hello+`}`, removedModel, clientError(1000)),
		c("a NUL in the model name", `{"model":"chat\u0000",`+hello+`}`, noSuchModel, clientError(1000)),
		c("a right-to-left override in the model name", `{"model":"chat\u202e",`+hello+`}`, noSuchModel, clientError(1000)),
		c("an embedding model", `{"model":"embed",`+hello+`}`, wrongKind(p), clientError(1000)),
		c("a key restricted to another model", chatHello, notAllowed, refused).withKey(keyRestricted),
		c("a ZDR key, a model without a ZDR route", `{"model":"open-only",`+hello+`}`, notZDR, refused).withKey(keyZDR),
		c("an automated client on an interactive plan", chatHello,
			chatErr(403, "permission_error", "coding_agent_required", "", "coding agent required"), refused).onPlan("interactive"),
		c("a revoked key", chatHello, chatErr(401, "authentication_error", "invalid_api_key", "", "revoked"), refused).withKey(keyRevoked),
		c("no key", chatHello, chatErr(401, "authentication_error", "invalid_api_key", "", "no API key"), nothing).withKey(keyNone),
		c("Basic authorization", chatHello, chatErr(401, "authentication_error", "invalid_api_key", "", "'Bearer <API key>'"), nothing).
			withKey(keyNone).withHeaders("Authorization", "Basic dXNlcjpwYXNz"),
		c("Bearer without a key", chatHello, chatErr(401, "authentication_error", "invalid_api_key", "", "'Bearer <API key>'"), nothing).
			withKey(keyNone).withHeaders("Authorization", "Bearer"),
		c("an unknown key", chatHello, unknownKey, nothing).
			withKey(keyNone).withHeaders("Authorization", "Bearer sk-token-"+strings.Repeat("u", 48)),
		c("a key that is not a key", chatHello, chatErr(401, "authentication_error", "invalid_api_key", "", "keys start with sk-token-"), nothing).
			withKey(keyNone).withHeaders("Authorization", "Bearer ' OR 1=1 --"),
		c("a 20 KB key", chatHello, unknownKey, nothing).withKey(keyNone).withHeaders("Authorization", "Bearer sk-token-"+strings.Repeat("x", 20000)),
		c("the key with a suffix", chatHello, unknownKey, nothing).withKey(keyNone).withHeaders("Authorization", "Bearer {key}x"),
		c("two keys, the x-api-key one unknown", chatHello, unknownKey, nothing).
			withKey(keyNone).withHeaders("x-api-key", "sk-token-"+strings.Repeat("w", 48), "Authorization", "Bearer {key}"),
		c("two keys, the x-api-key one valid", chatHello, ok200, servedBy(1000)).
			withKey(keyNone).knownKey().withHeaders("x-api-key", "{key}", "Authorization", "Bearer sk-token-"+strings.Repeat("w", 48)),
		c("a Google key header on /v1", chatHello, chatErr(401, "authentication_error", "invalid_api_key", "", "no API key"), nothing).
			withKey(keyNone).withHeaders("x-goog-api-key", "{key}"),
		{endpoint: "chat", name: "a key in the query on /v1", method: "POST", path: p + "?key={key}", body: chatHello, key: keyNone,
			want: chatErr(401, "authentication_error", "invalid_api_key", "", "no API key"), eff: nothing},
		// Content-Type is not read: the body is JSON whatever it says (curl -d sends a form type).
		c("a JSON body sent as text/plain", chatHello, ok200, servedBy(1000)).withHeaders("Content-Type", "text/plain"),
		c("a multipart form", "--x\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nchat\r\n--x--\r\n", notJSON, clientError(1000)).
			withHeaders("Content-Type", "multipart/form-data; boundary=x"),
		// Duplicate members: the last wins, as in the JSON decoders the providers use, and the
		// upstream gets each member once, so it reads what the gateway checked.
		c("a model named twice", `{"model":"nope",`+hello+`,"max_tokens":5,"max_tokens":100000,"model":"solo"}`, ok200, servedBy(1000)).
			checking(upstreamGot("s", `{"model":"up-s",`+hello+`,"max_tokens":50}`)),
		c("a role named twice", `{"model":"chat","messages":[{"role":"user","role":"wizard","content":"hi"}]}`,
			invalid("messages[0].role", `got "wizard"`), clientError(1000)),
		c("NUL and a lone surrogate in the content", `{"model":"solo","messages":[{"role":"user","content":"a\u0000b\ud800"}]}`, ok200, servedBy(1000)).
			checking(upstreamGot("s", `{"model":"up-s","messages":[{"role":"user","content":"a\u0000b\ud800"}]}`)),
	}
}

// upstreamGot checks the body the simulator route last received.
func upstreamGot(route, want string) func(*testing.T, *suite, *caseAccount, []byte) {
	return func(t *testing.T, s *suite, _ *caseAccount, _ []byte) {
		if got := string(s.env.Sim.LastRequest(route)); got != want {
			t.Errorf("route %s got\n%s\nwant\n%s", route, got, want)
		}
	}
}

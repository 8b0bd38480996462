package badinput_test

import "strings"

// messagesCases: /v1/messages and its token count. The msg model counts two calls (2000);
// the token count counts nothing and keeps no log, whatever it answers.
func messagesCases() []badCase {
	const p = "/v1/messages"
	c := func(name, body string, want answer, eff effect) badCase {
		return post("messages", name, p, body, want, eff)
	}
	bad := func(msg string) answer { return messagesErr(400, "invalid_request_error", "invalid_request", msg) }
	member := func(m string) string { return `{"model":"msg","max_tokens":32,` + hello + `,` + m + `}` }
	good := `{"model":"msg","max_tokens":32,` + hello + `}`
	count := func(name, body string, want answer) badCase {
		return post("messages count_tokens", name, p+"/count_tokens", body, want, nothing)
	}
	return []badCase{
		c("not JSON", `not json`, bad("must be a JSON object"), clientError(1000)),
		c("a JSON array", `[]`, bad("must be a JSON object"), clientError(1000)),
		c("no max_tokens", `{"model":"msg",`+hello+`}`, bad("max_tokens is required"), clientError(2000)),
		c("a negative max_tokens", member(`"max_tokens":-1`), bad("at least 1; got -1"), clientError(2000)),
		c("max_tokens past 64 bits", `{"model":"msg","max_tokens":99999999999999999999,`+hello+`}`, bad("max_tokens"), clientError(2000)),
		c("no messages", `{"model":"msg","max_tokens":32}`, bad("messages is required"), clientError(2000)),
		c("no message in messages", `{"model":"msg","max_tokens":32,"messages":[]}`, bad("at least one message"), clientError(2000)),
		c("an unknown role", `{"model":"msg","max_tokens":32,"messages":[{"role":"wizard","content":"hi"}]}`, bad(`got "wizard"`), clientError(2000)),
		c("temperature out of range", member(`"temperature":1.5`), bad("from 0 to 1; got 1.5"), clientError(2000)),
		c("a negative top_k", member(`"top_k":-3`), bad("at least 0; got -3"), clientError(2000)),
		c("an unknown tool_choice", member(`"tool_choice":{"type":"sometimes"}`), bad(`"sometimes"`), clientError(2000)),
		c("stream of the wrong type", member(`"stream":"yes"`), bad("stream"), clientError(2000)),
		c("deeply nested JSON", member(`"metadata":`+nested(20000)), bad("must be a JSON object"), clientError(1000)), // the model is not read
		c("a body over the limit", `{"model":"msg","max_tokens":32,"messages":[{"role":"user","content":"`+oversize+`"}]}`,
			messagesErr(413, "request_too_large", "request_too_large", "limit of 64 KiB"), clientError(1000)),
		c("an unknown model", `{"model":"nope","max_tokens":32,`+hello+`}`, messagesErr(404, "not_found_error", "model_not_found", "does not exist"), clientError(1000)),
		c("a removed model", `{"model":"chat-old","max_tokens":32,`+hello+`}`, messagesErr(404, "not_found_error", "model_not_found", `use "chat" instead`), clientError(1000)),
		c("an image model", `{"model":"img","max_tokens":32,`+hello+`}`,
			messagesErr(400, "invalid_request_error", "model_not_supported_on_endpoint", "cannot be used on /v1/messages"), clientError(1000)),
		c("a key restricted to another model", good, messagesErr(403, "permission_error", "model_not_allowed", "restricted"), refused).withKey(keyRestricted),
		c("a revoked key", good, messagesErr(401, "authentication_error", "invalid_api_key", "revoked"), refused).withKey(keyRevoked),
		c("an unknown x-api-key", good, messagesErr(401, "authentication_error", "invalid_api_key", "invalid API key"), nothing).
			withKey(keyNone).withHeaders("x-api-key", "sk-user-"+strings.Repeat("z", 40)),
		count("not JSON", `not json`, bad("must be a JSON object")),
		count("messages of the wrong type", `{"model":"msg","messages":5}`, bad("messages")),
		count("an unknown model", `{"model":"nope",`+hello+`}`, messagesErr(404, "not_found_error", "model_not_found", "does not exist")),
		count("a body over the limit", `{"model":"msg","messages":[{"role":"user","content":"`+oversize+`"}]}`,
			messagesErr(413, "request_too_large", "request_too_large", "limit of 64 KiB")),
		count("a revoked key", `{"model":"msg",`+hello+`}`, messagesErr(401, "authentication_error", "invalid_api_key", "revoked")).withKey(keyRevoked),
	}
}

// responsesCases: /v1/responses (the chat envelope; model resp counts one call).
func responsesCases() []badCase {
	const p = "/v1/responses"
	c := func(name, body string, want answer, eff effect) badCase {
		return post("responses", name, p, body, want, eff)
	}
	member := func(m string) string { return `{"model":"resp","input":"hi",` + m + `}` }
	return []badCase{
		c("not JSON", `not json`, notJSON, clientError(1000)),
		c("an empty input array", `{"model":"resp","input":[]}`, invalid("input", "input must not be empty"), clientError(1000)),
		c("an empty input string", `{"model":"resp","input":""}`, invalid("input", "input must not be empty"), clientError(1000)),
		c("input of the wrong type", `{"model":"resp","input":5}`, invalid("input", "input"), clientError(1000)),
		c("an unknown role", `{"model":"resp","input":[{"role":"wizard","content":"hi"}]}`, invalid("input[0].role", `got "wizard"`), clientError(1000)),
		c("an unknown truncation", member(`"truncation":"sideways"`), invalid("truncation", `got "sideways"`), clientError(1000)),
		c("an unknown verbosity", member(`"text":{"verbosity":"loud"}`), invalid("text.verbosity", `got "loud"`), clientError(1000)),
		c("max_output_tokens under the floor", member(`"max_output_tokens":8`), invalid("max_output_tokens", "at least 16; got 8"), clientError(1000)),
		c("max_output_tokens past 64 bits", member(`"max_output_tokens":99999999999999999999`), invalid("max_output_tokens", "integer"), clientError(1000)),
		c("deeply nested JSON", member(`"metadata":`+nested(20000)), notJSON, clientError(1000)),
		c("a body over the limit", `{"model":"resp","input":"`+oversize+`"}`, tooLarge, clientError(1000)),
		c("an unknown model", `{"model":"nope","input":"hi"}`, noSuchModel, clientError(1000)),
		c("a video model", `{"model":"vid","input":"hi"}`, wrongKind(p), clientError(1000)),
		c("a ZDR key, a model without a ZDR route", `{"model":"resp","input":"hi"}`, notZDR, refused).withKey(keyZDR),
	}
}

// geminiCases: the Gemini API under /v1beta, in Google's envelope; model gem counts one call,
// countTokens nothing.
func geminiCases() []badCase {
	const gen = "/v1beta/models/gem:generateContent"
	turn := `"contents":[{"role":"user","parts":[{"text":"hi"}]}]`
	good := `{` + turn + `}`
	c := func(name, path, body string, want answer, eff effect) badCase {
		return post("gemini", name, path, body, want, eff)
	}
	bad := func(param, msg string) answer {
		return googleErr(400, "INVALID_ARGUMENT", "invalid_request", param, msg)
	}
	notFound := googleErr(404, "NOT_FOUND", "model_not_found", "", "does not exist")
	unauthenticated := func(msg string) answer { return googleErr(401, "UNAUTHENTICATED", "invalid_api_key", "", msg) }
	config := func(m string) string { return `{` + turn + `,` + m + `}` }
	return []badCase{
		c("not JSON", gen, `not json`, bad("", "Invalid JSON payload"), clientError(1000)),
		c("no contents", gen, `{}`, bad("contents", "contents is not specified"), clientError(1000)),
		c("empty contents", gen, `{"contents":[]}`, bad("contents", "contents is not specified"), clientError(1000)),
		c("contents of the wrong type", gen, `{"contents":7}`, bad("contents", "must be an array"), clientError(1000)),
		c("an unknown role", gen, `{"contents":[{"role":"wizard","parts":[{"text":"hi"}]}]}`, bad("contents[0].role", `"wizard" is not valid`), clientError(1000)),
		c("temperature out of range", gen, config(`"generationConfig":{"temperature":99}`),
			bad("generationConfig.temperature", "from 0 to 2; got 99"), clientError(1000)),
		c("maxOutputTokens past 64 bits", gen, config(`"generationConfig":{"maxOutputTokens":99999999999999999999}`),
			bad("generationConfig.maxOutputTokens", "integer"), clientError(1000)),
		c("an unknown function calling mode", gen, config(`"toolConfig":{"functionCallingConfig":{"mode":"SOMETIMES"}}`),
			bad("toolConfig.functionCallingConfig.mode", `"SOMETIMES"`), clientError(1000)),
		c("deeply nested JSON", gen, config(`"x":`+nested(20000)), bad("", "Invalid JSON payload"), clientError(1000)),
		c("a body over the limit", gen, `{"contents":[{"role":"user","parts":[{"text":"`+oversize+`"}]}]}`,
			googleErr(413, "INVALID_ARGUMENT", "request_too_large", "", "limit of 64 KiB"), clientError(1000)),
		c("an unknown model", "/v1beta/models/nope:generateContent", good, notFound, clientError(1000)),
		c("a removed model", "/v1beta/models/chat-old:generateContent", good,
			googleErr(404, "NOT_FOUND", "model_not_found", "", `use "chat" instead`), clientError(1000)),
		c("a dot-dot model", "/v1beta/models/..%2Fgem:generateContent", good, notFound, clientError(1000)),
		c("an embedding model", "/v1beta/models/embed:generateContent", good,
			googleErr(400, "INVALID_ARGUMENT", "model_not_supported_on_endpoint", "model", "cannot be used on"), clientError(1000)),
		c("an unknown method", "/v1beta/models/gem:embedContent", good,
			googleErr(404, "NOT_FOUND", "unknown_method", "", "is not a method of this API"), nothing),
		c("a key restricted to another model", gen, good, googleErr(403, "PERMISSION_DENIED", "model_not_allowed", "", "restricted"), refused).
			withKey(keyRestricted),
		c("stream: not JSON", "/v1beta/models/gem:streamGenerateContent?alt=sse", `not json`, bad("", "Invalid JSON payload"), clientError(1000)),
		c("JSON-array stream: empty contents", "/v1beta/models/gem:streamGenerateContent", `{"contents":[]}`,
			bad("contents", "contents is not specified"), clientError(1000)),
		c("countTokens: not JSON", "/v1beta/models/gem:countTokens", `not json`, bad("", "Invalid JSON payload"), nothing),
		c("countTokens: an unknown model", "/v1beta/models/nope:countTokens", good, notFound, nothing),
		c("a key in the query with SQL after it", gen+"?key={key}'%20OR%201=1--", good, unauthenticated("invalid API key"), nothing).withKey(keyNone),
		c("a key in the query with a header injection", gen+"?key=%0d%0aX-Injected:%201", good, unauthenticated("keys start with sk-token-"), nothing).
			withKey(keyNone),
		c("an unknown key in the query", gen+"?key=sk-token-"+strings.Repeat("q", 48), good, unauthenticated("invalid API key"), nothing).withKey(keyNone),
		c("a Google key header of garbage", gen, good, unauthenticated("keys start with sk-token-"), nothing).
			withKey(keyNone).withHeaders("x-goog-api-key", "garbage"),
		c("no key", gen, good, unauthenticated("no API key"), nothing).withKey(keyNone),
	}
}

package badinput_test

import "strings"

// unroutedCases: paths no endpoint serves, methods a path does not take, and requests the
// HTTP server refuses before any handler. None has a known key: nothing counts, nothing is
// logged. A 404 is in the envelope of the API its path is under (Anthropic's under
// /v1/messages, Google's under /v1beta; a doubled version is judged by the client's own path).
func unroutedCases() []badCase {
	req := func(method, name, path string, want answer) badCase {
		return badCase{endpoint: "unrouted", name: name, method: method, path: path, want: want, eff: nothing}
	}
	unknown := func(msg string) answer { return chatErr(404, "invalid_request_error", "unknown_url", "", msg) }
	unknownMessages := func(msg string) answer { return messagesErr(404, "not_found_error", "unknown_url", msg) }
	unknownGoogle := func(msg string) answer { return googleErr(404, "NOT_FOUND", "unknown_url", "", msg) }
	wrongMethod := func(format, msg string) answer {
		return answer{status: 405, format: format, typ: "invalid_request_error", code: "method_not_allowed", msg: msg}
	}
	return []badCase{
		req("POST", "another API version", "/v2/chat/completions", unknown("no endpoint at /v2/chat/completions")),
		req("POST", "a path the API does not have", "/v1/completions", unknown("no endpoint at /v1/completions")),
		req("POST", "the version twice", "/v1/v1/chat/completions", unknown("drop /v1 from the base URL")),
		req("POST", "an empty segment", "//v1/chat/completions", unknown("no endpoint at //v1/chat/completions")),
		req("POST", "a dot segment", "/v1/./chat/completions", unknown("no endpoint at /v1/./chat/completions")),
		req("POST", "a dot-dot segment", "/v1/../v1/chat/completions", unknown("no endpoint at /v1/../v1/chat/completions")),
		req("POST", "a NUL in the path", "/v1/chat/completions%00", unknown("no endpoint at /v1/chat/completions\\x00")),
		req("GET", "a 100 KB path", "/v1/"+strings.Repeat("a", 100000), unknown("no endpoint at /v1/aaaa")),
		req("GET", "the metrics on the API's listener", "/metrics", unknown("metrics are served on the metrics address")),
		req("POST", "a path under messages the API does not have", "/v1/messages/batches", unknownMessages("no endpoint at /v1/messages/batches")),
		req("POST", "messages with the version twice", "/v1/v1/messages", unknownMessages("drop /v1 from the base URL")),
		req("GET", "a path under /v1beta the API does not have", "/v1beta/files", unknownGoogle("no endpoint at /v1beta/files")),
		req("POST", "gemini under /v1", "/v1/v1beta/models/chat:generateContent", unknownGoogle("drop /v1 from the base URL")),
		req("GET", "gemini with the version twice", "/v1beta/v1beta/models", unknownGoogle("drop /v1beta from the base URL")),
		req("GET", "chat, GET", "/v1/chat/completions", wrongMethod("chat", "method GET is not allowed on /v1/chat/completions; use POST")),
		req("FOO", "chat, a method HTTP does not have", "/v1/chat/completions", wrongMethod("chat", "method FOO is not allowed")),
		req("TRACE", "chat, TRACE", "/v1/chat/completions", wrongMethod("chat", "method TRACE is not allowed")),
		req("PUT", "messages, PUT", "/v1/messages", wrongMethod("messages", "method PUT is not allowed on /v1/messages")),
		req("DELETE", "gemini, DELETE", "/v1beta/models", answer{status: 405, format: "google", typ: "INVALID_ARGUMENT", code: "method_not_allowed",
			msg: "method DELETE is not allowed on /v1beta/models"}),
		req("POST", "a video poll, POST", "/v1/videos/video_x", wrongMethod("chat", "use GET")),
		req("PUT", "an asset, PUT", "/assets/gen/x.png", wrongMethod("chat", "use GET or HEAD")),
		// Go's HTTP server refuses a header block over 1 MiB itself, before any handler: a bare
		// 431, no envelope (docs/decisions.md, "Serving").
		req("POST", "a 2 MiB header", "/v1/chat/completions", answer{status: 431, format: "bare"}).withHeaders("X-Padding", strings.Repeat("p", 2<<20)),
	}
}

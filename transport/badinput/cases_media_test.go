package badinput_test

import "strings"

// embeddingsCases: /v1/embeddings (model embed counts one call).
func embeddingsCases() []badCase {
	const p = "/v1/embeddings"
	c := func(name, body string, want answer, eff effect) badCase {
		return post("embeddings", name, p, body, want, eff)
	}
	return []badCase{
		c("not JSON", `not json`, notJSON, clientError(1000)),
		c("no input", `{"model":"embed"}`, invalid("input", "input is required"), clientError(1000)),
		c("an empty input array", `{"model":"embed","input":[]}`, invalid("input", "must not be an empty array"), clientError(1000)),
		c("an empty input string", `{"model":"embed","input":""}`, invalid("input", "must not be empty"), clientError(1000)),
		c("input of the wrong type", `{"model":"embed","input":{"text":"x"}}`, invalid("input", "a string or an array"), clientError(1000)),
		c("negative dimensions", `{"model":"embed","input":"x","dimensions":-1}`, invalid("dimensions", "at least 1; got -1"), clientError(1000)),
		c("zero dimensions", `{"model":"embed","input":"x","dimensions":0}`, invalid("dimensions", "at least 1; got 0"), clientError(1000)),
		c("an unknown encoding_format", `{"model":"embed","input":"x","encoding_format":"hex"}`,
			invalid("encoding_format", `one of float, base64; got "hex"`), clientError(1000)),
		c("deeply nested input", `{"model":"embed","input":`+nested(20000)+`}`, invalid("", "exceeded max depth"), clientError(1000)),
		c("a body over the limit", `{"model":"embed","input":"`+oversize+`"}`, tooLarge, clientError(1000)),
		c("an unknown model", `{"model":"nope","input":"x"}`, noSuchModel, clientError(1000)),
		c("a chat model", `{"model":"chat","input":"x"}`, wrongKind(p), clientError(1000)),
		c("a model named twice, the last of another kind", `{"model":"embed","input":"x","model":"chat"}`, wrongKind(p), clientError(1000)),
		c("a key restricted to another model", `{"model":"embed","input":"x"}`, notAllowed, refused).withKey(keyRestricted),
	}
}

// imagesCases: /v1/images/generations (model img counts one call).
func imagesCases() []badCase {
	const p = "/v1/images/generations"
	c := func(name, body string, want answer, eff effect) badCase {
		return post("images", name, p, body, want, eff)
	}
	member := func(m string) string { return `{"model":"img","prompt":"a lighthouse",` + m + `}` }
	size := func(s string) answer { return invalid("size", `size "`+s+`" must be WIDTHxHEIGHT`) }
	return []badCase{
		c("not JSON", `not json`, invalid("", "JSON object of the images format"), clientError(1000)),
		c("no prompt", `{"model":"img"}`, invalid("prompt", "prompt is required"), clientError(1000)),
		c("an empty prompt", `{"model":"img","prompt":""}`, invalid("prompt", "prompt is required"), clientError(1000)),
		c("n of the wrong type", member(`"n":"1"`), invalid("", "n must be an integer, not string"), clientError(1000)),
		c("more than one image", member(`"n":5`), invalid("n", "n must be 1"), clientError(1000)),
		c("a size that is no size", member(`"size":"abc"`), size("abc"), clientError(1000)),
		c("a negative size", member(`"size":"-5x-5"`), size("-5x-5"), clientError(1000)),
		c("a zero size", member(`"size":"0x0"`), size("0x0"), clientError(1000)),
		c("a size past 64 bits", member(`"size":"99999999999999999999x1"`), size("99999999999999999999x1"), clientError(1000)),
		c("an unknown response_format", member(`"response_format":"file"`), invalid("response_format", "must be url or b64_json"), clientError(1000)),
		c("a body over the limit", `{"model":"img","prompt":"`+oversize+`"}`, tooLarge, clientError(1000)),
		c("an unknown model", `{"model":"nope","prompt":"p"}`, noSuchModel, clientError(1000)),
		c("a chat model", `{"model":"chat","prompt":"p"}`, wrongKind(p), clientError(1000)),
		c("a key restricted to another image model", `{"model":"gimg","prompt":"p"}`, notAllowed, refused).withKey(keyRestricted),
	}
}

// videosCases: POST /v1/videos (model vid counts one call). Frames and references are fetched
// by the provider, so only web addresses of public hosts and inline media pass.
func videosCases() []badCase {
	const p = "/v1/videos"
	c := func(name, body string, want answer, eff effect) badCase {
		return post("videos", name, p, body, want, eff)
	}
	member := func(m string) string { return `{"model":"vid","prompt":"waves",` + m + `}` }
	frame := func(url string) string { return member(`"mode":"keyframe","first_frame":"` + url + `"`) }
	badFrame := func(url string) answer {
		return invalid("first_frame", `first_frame must be an https:, http: or data: URL of an image; got "`+url+`"`)
	}
	private := func(param, url string) answer {
		return invalid(param, param+" must not point at a private, loopback or link-local address; got \""+url+"\"")
	}
	return []badCase{
		c("not JSON", `not json`, invalid("", "JSON object of the videos format"), clientError(1000)),
		c("no prompt", `{"model":"vid","mode":"text"}`, invalid("prompt", "prompt is required"), clientError(1000)),
		c("no mode", `{"model":"vid","prompt":"waves"}`, invalid("mode", "mode is required"), clientError(1000)),
		c("an unknown mode", member(`"mode":"warp"`), invalid("mode", `mode "warp" must be text, keyframe or reference`), clientError(1000)),
		c("too many seconds", member(`"mode":"text","seconds":"99"`), invalid("seconds", `seconds "99" must be "4" to "12"`), clientError(1000)),
		c("negative seconds", member(`"mode":"text","seconds":"-1"`), invalid("seconds", `seconds "-1" must be "4" to "12"`), clientError(1000)),
		c("an unknown size", member(`"mode":"text","size":"4K"`), invalid("size", `size "4K" is not offered`), clientError(1000)),
		c("an unknown aspect ratio", member(`"mode":"text","aspect_ratio":"4:3"`), invalid("aspect_ratio", "use one of 16:9, 9:16, 1:1"), clientError(1000)),
		c("a local file as the first frame", frame("file:///etc/passwd"), badFrame("file:///etc/passwd"), clientError(1000)),
		c("a javascript: frame", frame("javascript:alert(1)"), badFrame("javascript:alert(1)"), clientError(1000)),
		c("the cloud metadata address", frame("http://169.254.169.254/latest/"),
			private("first_frame", "http://169.254.169.254/latest/"), clientError(1000)),
		c("a loopback frame", frame("http://127.0.0.1:22/x.png"), private("first_frame", "http://127.0.0.1:22/x.png"), clientError(1000)),
		c("localhost", frame("http://localhost/x.png"), private("first_frame", "http://localhost/x.png"), clientError(1000)),
		c("IPv6 loopback", frame("http://[::1]/x.png"), private("first_frame", "http://[::1]/x.png"), clientError(1000)),
		c("a private network", frame("https://10.0.0.1/x.png"), private("first_frame", "https://10.0.0.1/x.png"), clientError(1000)),
		c("loopback as one number", frame("http://2130706433/x.png"), private("first_frame", "http://2130706433/x.png"), clientError(1000)),
		c("a private reference image", member(`"mode":"reference","images":["https://example.com/a.png","http://192.168.1.1/a.png"]`),
			private("images[1]", "http://192.168.1.1/a.png"), clientError(1000)),
		c("an HTML data URL as a reference", member(`"mode":"reference","images":["data:text/html,<script>"]`),
			invalid("images[0]", "must be a data URL of an image"), clientError(1000)),
		c("a frame URL over 2 KB", frame("https://example.com/"+strings.Repeat("a", 2100)), invalid("first_frame", "must be an https:, http: or data: URL"),
			clientError(1000)),
		c("mode text with a frame", member(`"mode":"text","first_frame":"https://example.com/a.png"`),
			invalid("first_frame", "mode text makes a video from the prompt alone"), clientError(1000)),
		c("a body over the limit", member(`"mode":"text","negative_prompt":"`+oversize+`"`), tooLarge, clientError(1000)),
		c("an unknown model", `{"model":"nope","prompt":"waves","mode":"text"}`, noSuchModel, clientError(1000)),
		c("a chat model", `{"model":"chat","prompt":"waves","mode":"text"}`, wrongKind(p), clientError(1000)),
		c("a key restricted to another model", member(`"mode":"text"`), notAllowed, refused).withKey(keyRestricted),
	}
}

// readCases: the reads — video polls, the model lists, assets. They count nothing and keep no
// log, whatever they answer.
func readCases() []badCase {
	get := func(endpoint, name, path string, want answer) badCase {
		return badCase{endpoint: endpoint, name: name, method: "GET", path: path, want: want, eff: nothing}
	}
	poll := func(name, path string, want answer) badCase { return get("video poll", name, path, want) }
	noTask := func(id string) answer {
		return chatErr(404, "invalid_request_error", "video_not_found", "video_id", "no video task "+id+" for this account")
	}
	unknownURL := chatErr(404, "invalid_request_error", "unknown_url", "", "no endpoint at")
	googleNotFound := googleErr(404, "NOT_FOUND", "model_not_found", "", "is not found, or this key may not use it")
	noAsset := chatErr(404, "invalid_request_error", "not_found", "", "no such asset")
	return []badCase{
		poll("an unknown task", "/v1/videos/video_nope?model=vid", noTask("video_nope")),
		poll("another account's task", "/v1/videos/{task}?model=vid", noTask("{task}")),
		poll("no model", "/v1/videos/video_nope", invalid("model", "the model query parameter is required")),
		poll("a chat model", "/v1/videos/video_nope?model=chat", wrongKind("/v1/videos")),
		poll("an unknown model", "/v1/videos/video_nope?model=nope", noSuchModel),
		poll("a 300-character id", "/v1/videos/"+strings.Repeat("v", 300)+"?model=vid", noTask(strings.Repeat("v", 300))),
		poll("dot-dot segments", "/v1/videos/../../etc/passwd?model=vid", unknownURL),
		poll("encoded dot-dot segments", "/v1/videos/..%2F..%2Fetc%2Fpasswd?model=vid", unknownURL),
		poll("an encoded slash in the id", "/v1/videos/a%2Fb?model=vid", unknownURL),
		poll("no key", "/v1/videos/{task}?model=vid", chatErr(401, "authentication_error", "invalid_api_key", "", "no API key")).withKey(keyNone),
		get("models", "an unknown model", "/v1/models/nope", chatErr(404, "invalid_request_error", "model_not_found", "model", "does not exist")),
		get("models", "a removed model", "/v1/models/chat-old", removedModel),
		get("models", "a model the key may not use", "/v1/models/chat",
			chatErr(404, "invalid_request_error", "model_not_found", "model", "or this key may not use it")).withKey(keyRestricted),
		get("models", "a model without a ZDR route, to a ZDR key", "/v1/models/open-only",
			chatErr(404, "invalid_request_error", "model_not_found", "model", "or this key may not use it")).withKey(keyZDR),
		get("models", "dot-dot segments", "/v1/models/..%2F..%2Fadmin%2Fv1%2Faccounts",
			chatErr(404, "invalid_request_error", "model_not_found", "model", "does not exist")),
		get("models", "the list without a key", "/v1/models", chatErr(401, "authentication_error", "invalid_api_key", "", "no API key")).withKey(keyNone),
		get("models", "Gemini: an unknown model", "/v1beta/models/nope", googleNotFound),
		get("models", "Gemini: the list with a garbage key", "/v1beta/models",
			googleErr(401, "UNAUTHENTICATED", "invalid_api_key", "", "keys start with sk-token-")).withKey(keyNone).withHeaders("x-goog-api-key", "garbage"),
		get("assets", "encoded dot-dot segments", "/assets/gen/..%2F..%2Fpebble%2FCURRENT", unknownURL),
		get("assets", "dot-dot segments", "/assets/gen/../../catalog.yaml", unknownURL),
		get("assets", "an unknown video", "/assets/vid/x.mp4", noAsset),
		get("assets", "a 300-character name", "/assets/gen/"+strings.Repeat("v", 300)+".png", noAsset),
		get("assets", "an unknown kind", "/assets/etc/passwd", unknownURL),
		get("assets", "a NUL in the name", "/assets/gen/x%00.png", noAsset),
	}
}

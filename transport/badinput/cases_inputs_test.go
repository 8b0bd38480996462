package badinput_test

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/check/checktest"
)

// inputsCases: media a client hands the model (image URLs, inline data) on every generation
// format, and an image request against what its model makes. A URL the provider would fetch
// from inside a network, an inline payload that is not base64 of an allowed type, and an image
// to a model without image input are refused before any upstream; a public https image still
// reaches it. A refused image request never touches the day's images (the quota compared whole).
func inputsCases() []badCase {
	var cases []badCase
	for _, f := range inputFormats {
		cases = append(cases, f.cases()...)
	}
	return append(cases, imageOptionCases()...)
}

// inputFormat is one client format: how it carries an image by URL and inline, the param of
// each, and how its refusal reads.
type inputFormat struct {
	endpoint, path string
	model          string // a model that takes images
	units          int64  // what it counts
	route          string // its simulator route
	body           func(model, part string) string
	urlPart        func(url string) string
	inlinePart     func(data string) string // an image sent as base64 apart from its type
	urlParam       string
	inlineParam    string // the member an invalid inline payload is refused on
	refusal        func(param, msg string) answer
}

var inputFormats = []inputFormat{
	{endpoint: "chat", path: "/v1/chat/completions", model: "chat", units: 1000, route: "a b",
		body: func(model, part string) string {
			return `{"model":"` + model + `","messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},` + part + `]}]}`
		},
		urlPart: func(url string) string { return `{"type":"image_url","image_url":{"url":"` + url + `"}}` },
		inlinePart: func(data string) string {
			return `{"type":"image_url","image_url":{"url":"data:image/png;base64,` + data + `"}}`
		},
		urlParam: "messages[0].content[1].image_url.url", inlineParam: "messages[0].content[1].image_url.url",
		refusal: invalid},
	{endpoint: "messages", path: "/v1/messages", model: "msg", units: 2000, route: "m",
		body: func(model, part string) string {
			return `{"model":"` + model + `","max_tokens":32,"messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},` + part + `]}]}`
		},
		urlPart: func(url string) string { return `{"type":"image","source":{"type":"url","url":"` + url + `"}}` },
		inlinePart: func(data string) string {
			return `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + data + `"}}`
		},
		urlParam: "messages[0].content[1].source.url", inlineParam: "messages[0].content[1].source.data",
		refusal: func(_, msg string) answer { return messagesErr(400, "invalid_request_error", "invalid_request", msg) }},
	{endpoint: "responses", path: "/v1/responses", model: "resp", units: 1000, route: "r",
		body: func(model, part string) string {
			return `{"model":"` + model + `","input":[{"role":"user","content":[{"type":"input_text","text":"what is this?"},` + part + `]}]}`
		},
		urlPart: func(url string) string { return `{"type":"input_image","image_url":"` + url + `"}` },
		inlinePart: func(data string) string {
			return `{"type":"input_image","image_url":"data:image/png;base64,` + data + `"}`
		},
		urlParam: "input[0].content[1].image_url", inlineParam: "input[0].content[1].image_url",
		refusal: invalid},
	{endpoint: "gemini", path: "/v1beta/models/{model}:generateContent", model: "gem", units: 1000, route: "g",
		body: func(_, part string) string {
			return `{"contents":[{"role":"user","parts":[{"text":"what is this?"},` + part + `]}]}`
		},
		urlPart:    func(url string) string { return `{"fileData":{"fileUri":"` + url + `","mimeType":"image/png"}}` },
		inlinePart: func(data string) string { return `{"inlineData":{"mimeType":"image/png","data":"` + data + `"}}` },
		urlParam:   "contents[0].parts[1].fileData.fileUri", inlineParam: "contents[0].parts[1].inlineData.data",
		refusal: func(param, msg string) answer {
			return googleErr(400, "INVALID_ARGUMENT", "invalid_request", param, msg)
		}},
}

// to is the format's request to model with part.
func (f inputFormat) to(model, part string) (path, body string) {
	return strings.Replace(f.path, "{model}", model, 1), f.body(model, part)
}

func (f inputFormat) cases() []badCase {
	c := func(name, model, part string, want answer, eff effect) badCase {
		path, body := f.to(model, part)
		return post(f.endpoint, name, path, body, want, eff)
	}
	private := func(url string) answer {
		return f.refusal(f.urlParam, f.urlParam+` must not point at a private, loopback or link-local address; got "`+url+`"`)
	}
	notURL := func(url string) answer {
		return f.refusal(f.urlParam, f.urlParam+` must be an https:, http: or data: URL of an image; got "`+url+`"`)
	}
	notBase64 := f.refusal(f.inlineParam, f.inlineParam+" is a data URL whose data is not valid base64")
	if f.inlineParam != f.urlParam { // the data apart from its type
		notBase64 = f.refusal(f.inlineParam, f.inlineParam+` must be valid base64; got "@@not base64@@"`)
	}
	good := "https://example.com/" + f.endpoint + "-cat.png"
	counted := clientError(f.units)
	return []badCase{
		c("an image of a local file", f.model, f.urlPart("file:///etc/passwd"), notURL("file:///etc/passwd"), counted),
		c("an image at the cloud metadata address", f.model, f.urlPart("http://169.254.169.254/latest/meta-data/"),
			f.refusal(f.urlParam, f.urlParam+` must not point at a private, loopback or link-local address; got "http://169.254.169.254/latest/meta-data…`), counted),
		c("an image at a loopback port", f.model, f.urlPart("http://127.0.0.1:6379/"), private("http://127.0.0.1:6379/"), counted),
		c("an image at loopback as one number", f.model, f.urlPart("http://2130706433/"), private("http://2130706433/"), counted),
		c("an image at IPv6 loopback", f.model, f.urlPart("http://[::1]/a.png"), private("http://[::1]/a.png"), counted),
		c("an image URL that is not a url", f.model, f.urlPart("not a url"), notURL("not a url"), counted),
		c("an image of invalid base64", f.model, f.inlinePart("@@not base64@@"), notBase64, counted),
		c("an image to a text-only model", "open-only", f.inlinePart(checktest.PNG),
			f.refusal("model", `model "open-only" does not take images (its input_modalities: text): send the request without images, or to a model that takes them`),
			clientError(1000)),
		c("an https image", f.model, f.urlPart(good), ok200, servedBy(f.units)).checking(upstreamHolds(strings.Fields(f.route), good)),
	}
}

// imageOptionCases: /v1/images/generations against what the model makes (img: the gateway's
// default sizes, no quality or style setting; img-sized: its own sizes and qualities).
func imageOptionCases() []badCase {
	const p = "/v1/images/generations"
	c := func(name, model, members string, want answer) badCase {
		return post("images", name, p, `{"model":"`+model+`","prompt":"a lighthouse",`+members+`}`, want, clientError(1000))
	}
	notListed := func(size string) answer {
		return invalid("size", `size "`+size+`" is not offered by this model: use one of 1024x1024, 1536x1024, or auto`)
	}
	return []badCase{
		c("a size of 100000x100000", "img", `"size":"100000x100000"`, invalid("size", `size "100000x100000" is too large: each side is at most 4096`)),
		c("a side past 4096", "img", `"size":"4097x1024"`, invalid("size", `size "4097x1024" is too large: each side is at most 4096`)),
		c("a size not in the model's sizes", "img-sized", `"size":"1000x1000"`, notListed("1000x1000")),
		c("100000x100000 to a model with sizes", "img-sized", `"size":"100000x100000"`, notListed("100000x100000")),
		c("n too large for a model with sizes", "img-sized", `"n":10`, invalid("n", "n must be 1: one image per request")),
		c("a quality the model does not list", "img-sized", `"quality":"ultra"`, invalid("quality", `quality "ultra" is not offered by this model: use one of low, high`)),
		c("a quality to a model without qualities", "img", `"quality":"hd"`,
			invalid("quality", `quality "hd" is not offered: this model takes no quality setting; leave quality out`)),
		c("a style to a model without styles", "img", `"style":"vivid"`,
			invalid("style", `style "vivid" is not offered: this model takes no style setting; leave style out`)),
	}
}

// upstreamHolds checks that one of routes last received a body holding s.
func upstreamHolds(routes []string, s string) func(*testing.T, *suite, *caseAccount, []byte) {
	return func(t *testing.T, su *suite, _ *caseAccount, _ []byte) {
		for _, r := range routes {
			if strings.Contains(string(su.env.Sim.LastRequest(r)), s) {
				return
			}
		}
		t.Errorf("no route of %v received %s", routes, s)
	}
}

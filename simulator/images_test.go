package simulator

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	_ "image/png" // image.Decode reads PNG
	"net/http"
	"strings"
	"testing"
)

// decodePNG decodes data as an image and checks it is a PNG of w×h.
func decodePNG(t *testing.T, data []byte, w, h int) {
	t.Helper()
	img, format, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("image.Decode: %v", err)
	}
	if format != "png" || img.Bounds() != image.Rect(0, 0, w, h) {
		t.Errorf("decoded a %s of %v, want a png of %dx%d", format, img.Bounds(), w, h)
	}
}

// imageBytes returns the bytes of data[i] of an images answer: decoded b64_json, or the body
// behind its URL (fetched without a credential, as a browser would).
func imageBytes(t *testing.T, body any, i int) []byte {
	t.Helper()
	if b64 := str(body, "data", i, "b64_json"); b64 != "" {
		pic, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		return pic
	}
	u := str(body, "data", i, "url")
	resp, data := call(t, http.MethodGet, u, "", "-")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("GET %s: %d %s %q", u, resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
	return data
}

func TestImagesGenerations(t *testing.T) {
	s, base := startSim(t)
	tests := []struct {
		name, route, body string
		n, w, h           int    // images and their pixel size
		size, quality     string // as reported
		url               bool
		inTokens          int
	}{
		{"defaults: one url, auto size", "img", `{"model":"dall-e-3","prompt":"a red fox in snow"}`,
			1, 256, 256, "1024x1024", "auto", true, 5},
		{"b64_json, landscape scaled by 6", "img", `{"model":"gpt-image-1","prompt":"a red fox","size":"1536x1024","response_format":"b64_json","quality":"high"}`,
			1, 256, 170, "1536x1024", "high", false, 3},
		{"n urls, wide scaled by 7", "img", `{"prompt":"three foxes","n":3,"size":"1792x1024","response_format":"url"}`,
			3, 256, 146, "1792x1024", "auto", true, 2},
		{"small size kept", "", `{"prompt":"tiny","size":"100x50","response_format":"b64_json","unknown":{"x":1}}`,
			1, 100, 50, "100x50", "auto", false, 1},
		{"url on the default route", "", `{"prompt":"default route","size":"auto"}`,
			1, 256, 256, "1024x1024", "auto", true, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prefix := ""
			if tc.route != "" {
				prefix = "/r/" + tc.route
			}
			before := s.Calls(tc.route)
			resp, data := post(t, base+prefix+"/v1/images/generations", tc.body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, data)
			}
			body := decode(t, data)
			if got := len(path(body, "data").([]any)); got != tc.n {
				t.Fatalf("%d images, want %d", got, tc.n)
			}
			prompt := str(decode(t, []byte(tc.body)), "prompt")
			out := imageOutputTokens * tc.n
			assertJSON(t, without(t, data, "created", "data"), fmt.Sprintf(`{"background":"opaque","output_format":"png",
				"size":%q,"quality":%q,"usage":{"input_tokens":%d,"output_tokens":%d,"total_tokens":%d,
				"input_tokens_details":{"text_tokens":%d,"image_tokens":0}}}`, tc.size, tc.quality, tc.inTokens, out, tc.inTokens+out, tc.inTokens))
			if num(body, "created") == 0 {
				t.Error("no created timestamp")
			}
			var sw, sh int
			fmt.Sscanf(tc.size, "%dx%d", &sw, &sh)
			for i := range tc.n {
				item := path(body, "data", i).(map[string]any)
				if len(item) != 2 || item["revised_prompt"] != revisedPromptPrefix+prompt {
					t.Errorf("data[%d] = %v", i, item)
				}
				if u := str(item, "url"); tc.url != (u != "") {
					t.Errorf("data[%d] = %v, want url %v", i, item, tc.url)
				} else if tc.url && !strings.HasPrefix(u, base+prefix+"/files/file_") {
					t.Errorf("url %q does not point at the simulator's route", u)
				}
				pic := imageBytes(t, body, i)
				decodePNG(t, pic, tc.w, tc.h)
				if want := pictureFor(prompt, i, sw, sh); !bytes.Equal(pic, want) {
					t.Errorf("data[%d] is not the prompt's deterministic picture", i)
				}
			}
			// The generation counts; downloading its files does not.
			if got := s.Calls(tc.route) - before; got != 1 {
				t.Errorf("Calls grew by %d, want 1", got)
			}
		})
	}
}

// TestImageURLLinksEveryImageThere: a route with image_url answers with that link, b64_json
// asked or not, and its usage as ever.
func TestImageURLLinksEveryImageThere(t *testing.T) {
	s, base := startSim(t)
	s.SetBehavior("far", Behavior{ImageURL: "http://127.0.0.2:9/redirect?to=internal"})
	for _, body := range []string{`{"prompt":"a fox","response_format":"b64_json"}`, `{"prompt":"a fox","n":2}`} {
		resp, raw := post(t, base+"/r/far/v1/images/generations", body)
		got := decode(t, raw)
		for i := range got.(map[string]any)["data"].([]any) {
			if u, b64 := str(got, "data", i, "url"), str(got, "data", i, "b64_json"); u != "http://127.0.0.2:9/redirect?to=internal" || b64 != "" {
				t.Errorf("%s: data[%d] url %q, b64_json %d bytes", body, i, u, len(b64))
			}
		}
		if resp.StatusCode != 200 || str(got, "output_format") != "png" || str(got, "size") != "1024x1024" {
			t.Errorf("%s: %d %s", body, resp.StatusCode, raw)
		}
	}
}

func TestImagesAreDeterministic(t *testing.T) {
	_, base := startSim(t)
	gen := func(body string) any {
		resp, data := post(t, base+"/v1/images/generations", body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, data)
		}
		return decode(t, data)
	}
	b64 := gen(`{"prompt":"a lighthouse at dusk","n":2,"response_format":"b64_json"}`)
	again := gen(`{"prompt":"a lighthouse at dusk","n":2,"response_format":"b64_json"}`)
	byURL := gen(`{"prompt":"a lighthouse at dusk","n":2}`)
	other := gen(`{"prompt":"a lighthouse at dawn","response_format":"b64_json"}`)
	first := imageBytes(t, b64, 0)
	for i := range 2 {
		if !bytes.Equal(imageBytes(t, b64, i), imageBytes(t, again, i)) {
			t.Errorf("image %d differs between equal requests", i)
		}
		if !bytes.Equal(imageBytes(t, b64, i), imageBytes(t, byURL, i)) {
			t.Errorf("image %d differs between b64_json and url", i)
		}
	}
	if bytes.Equal(first, imageBytes(t, b64, 1)) {
		t.Error("the two images of one request are equal")
	}
	if bytes.Equal(first, imageBytes(t, other, 0)) {
		t.Error("different prompts gave equal images")
	}
}

func TestImagesRejectInvalidRequests(t *testing.T) {
	_, base := startSim(t)
	tests := []struct {
		name, body, auth string
		status           int
		param, message   string
	}{
		{"no prompt", `{"model":"dall-e-3"}`, "", 400, "prompt", "Missing required parameter: 'prompt'."},
		{"empty prompt", `{"prompt":" "}`, "", 400, "prompt", "Invalid 'prompt': empty string. Expected a non-empty prompt."},
		{"n 0", `{"prompt":"x","n":0}`, "", 400, "n", "Invalid 'n': integer out of range. Expected a value within 1..10, but got 0 instead."},
		{"n 11", `{"prompt":"x","n":11}`, "", 400, "n", "Invalid 'n': integer out of range. Expected a value within 1..10, but got 11 instead."},
		{"n not a number", `{"prompt":"x","n":"two"}`, "", 400, "n", "Invalid type for 'n': expected int, got string."},
		{"bad size", `{"prompt":"x","size":"large"}`, "", 400, "size", "Invalid value: 'large'. Supported values are: 'auto' and 'WxH' with each side within 1..4096."},
		{"zero side", `{"prompt":"x","size":"0x512"}`, "", 400, "size", "Invalid value: '0x512'. Supported values are: 'auto' and 'WxH' with each side within 1..4096."},
		{"too large", `{"prompt":"x","size":"8192x8192"}`, "", 400, "size", "Invalid value: '8192x8192'. Supported values are: 'auto' and 'WxH' with each side within 1..4096."},
		{"bad response_format", `{"prompt":"x","response_format":"jpeg"}`, "", 400, "response_format", "Invalid value: 'jpeg'. Supported values are: 'url' and 'b64_json'."},
		{"bad quality", `{"prompt":"x","quality":"ultra"}`, "", 400, "quality", "Invalid value: 'ultra'. Supported values are: 'auto', 'low', 'medium', 'high', 'standard', 'hd'."},
		{"stream", `{"prompt":"x","stream":true}`, "", 400, "stream", "The simulator does not stream image generation; send stream false."},
		{"no credential", `{"prompt":"x"}`, "-", 401, "", openAI.unauthorized.Message},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := call(t, http.MethodPost, base+"/v1/images/generations", tc.body, tc.auth)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, data)
			}
			body := decode(t, data)
			if str(body, "error", "param") != tc.param || str(body, "error", "message") != tc.message {
				t.Errorf("error = %s", data)
			}
		})
	}
	resp, data := post(t, base+"/v1/images/generations", `not json`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), "could not parse the JSON body") {
		t.Errorf("invalid JSON: %d %s", resp.StatusCode, data)
	}
}

func TestImageFilesBelongToTheirRoute(t *testing.T) {
	s, base := startSim(t)
	_, data := post(t, base+"/r/a/v1/images/generations", `{"prompt":"route a"}`)
	u := str(decode(t, data), "data", 0, "url")
	file := u[strings.LastIndex(u, "/")+1:]
	id := strings.TrimSuffix(file, ".png")

	// A file URL is a download link, not an API call: no credential, no Behavior.
	s.SetBehavior("a", Behavior{FailStatus: 503})
	tests := []struct {
		name, url string
		status    int
	}{
		{"its route", u, 200},
		{"its route, again", base + "/r/a/files/" + file, 200},
		{"another route", base + "/r/b/files/" + file, 404},
		{"the default route", base + "/files/" + file, 404},
		{"no extension", base + "/r/a/files/" + id, 404},
		{"wrong extension", base + "/r/a/files/" + id + ".jpg", 404},
		{"unknown id", base + "/r/a/files/file_000000000000000000000000.png", 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := call(t, http.MethodGet, tc.url, "", "-")
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
		})
	}
	if got := s.Calls("a"); got != 1 {
		t.Errorf("Calls(a) = %d, want 1 (downloads are not API calls)", got)
	}
}

func TestBoundedStoreForgetsTheOldest(t *testing.T) {
	st := newBoundedStore[int](3)
	for i, id := range []string{"a", "b", "c", "a", "d", "e"} { // re-putting "a" does not renew it
		st.put(id, i)
	}
	for id, want := range map[string]int{"a": -1, "b": -1, "c": 2, "d": 4, "e": 5} {
		got, ok := st.get(id)
		if want < 0 && ok || want >= 0 && (!ok || got != want) {
			t.Errorf("get(%q) = %d, %v; want %d", id, got, ok, want)
		}
	}
}

func TestScaleDown(t *testing.T) {
	tests := []struct{ w, h, limit, wantW, wantH int }{
		{1024, 1024, 256, 256, 256},
		{1536, 1024, 256, 256, 170},
		{1024, 1536, 256, 170, 256},
		{1792, 1024, 256, 256, 146},
		{256, 256, 256, 256, 256},
		{257, 10, 256, 128, 5},
		{4096, 1, 256, 256, 1},
		{720, 1280, 64, 36, 64},
	}
	for _, tc := range tests {
		if w, h := scaleDown(tc.w, tc.h, tc.limit); w != tc.wantW || h != tc.wantH {
			t.Errorf("scaleDown(%d, %d, %d) = %d, %d; want %d, %d", tc.w, tc.h, tc.limit, w, h, tc.wantW, tc.wantH)
		}
	}
}

func TestGeminiImageOutput(t *testing.T) {
	_, base := startSim(t)
	const prompt = "Draw a red fox"
	user := `"contents":[{"role":"user","parts":[{"text":"` + prompt + `"}]}]`
	tests := []struct {
		name, model, config string
		text                bool // a text part precedes the image
		w, h                int  // 0: no image, a text answer
	}{
		{"modalities TEXT and IMAGE", "gemini-2.5-flash", `{"responseModalities":["TEXT","IMAGE"]}`, true, 256, 256},
		{"modality IMAGE only", "gemini-2.5-flash", `{"responseModalities":["IMAGE"]}`, false, 256, 256},
		{"lower-case modality", "gemini-2.5-flash", `{"responseModalities":["image"]}`, false, 256, 256},
		{"image model, no config", "gemini-2.5-flash-image", `null`, true, 256, 256},
		{"image model, 16:9", "gemini-2.5-flash-image", `{"imageConfig":{"aspectRatio":"16:9"}}`, true, 224, 128},
		{"image model, 9:16", "gemini-3-pro-image-preview", `{"imageConfig":{"aspectRatio":"9:16"}}`, true, 128, 224},
		{"image model asked for TEXT only", "gemini-2.5-flash-image", `{"responseModalities":["TEXT"]}`, false, 0, 0},
		{"text model", "gemini-2.5-flash", `{}`, false, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := `{` + user + `,"generationConfig":` + tc.config + `}`
			resp, data := callHeaders(t, http.MethodPost, base+"/v1beta/models/"+tc.model+":generateContent", body,
				map[string]string{"x-goog-api-key": "k"})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, data)
			}
			got := decode(t, data)
			parts, _ := path(got, "candidates", 0, "content", "parts").([]any)
			if tc.w == 0 {
				if len(parts) != 1 || !strings.HasPrefix(str(parts[0], "text"), "Simulated reply from") {
					t.Errorf("want a text answer, got %s", data)
				}
				return
			}
			last := len(parts) - 1
			if str(parts[last], "inlineData", "mimeType") != "image/png" {
				t.Fatalf("last part is not an inline PNG: %s", data)
			}
			pic, err := base64.StdEncoding.DecodeString(str(parts[last], "inlineData", "data"))
			if err != nil {
				t.Fatal(err)
			}
			decodePNG(t, pic, tc.w, tc.h)
			textTokens, parts1 := 0, 1
			if tc.text {
				parts1 = 2
				want := "Simulated image from " + tc.model + "."
				if str(parts[0], "text") != want {
					t.Errorf("text part %v, want %q", parts[0], want)
				}
				textTokens = countWords(want)
			}
			if len(parts) != parts1 {
				t.Errorf("%d parts, want %d", len(parts), parts1)
			}
			details := `[{"modality":"IMAGE","tokenCount":1290}]`
			if textTokens > 0 {
				details = fmt.Sprintf(`[{"modality":"IMAGE","tokenCount":1290},{"modality":"TEXT","tokenCount":%d}]`, textTokens)
			}
			assertJSON(t, marshal(t, path(got, "usageMetadata")), fmt.Sprintf(`{"promptTokenCount":4,
				"candidatesTokenCount":%d,"totalTokenCount":%d,"promptTokensDetails":[{"modality":"TEXT","tokenCount":4}],
				"candidatesTokensDetails":%s}`, 1290+textTokens, 4+1290+textTokens, details))
			if str(got, "candidates", 0, "finishReason") != "STOP" || str(got, "modelVersion") != tc.model {
				t.Errorf("envelope: %s", without(t, data, "usageMetadata"))
			}
		})
	}
}

func TestGeminiImageMatchesImagesAPI(t *testing.T) {
	_, base := startSim(t)
	_, data := callHeaders(t, http.MethodPost, base+"/v1beta/models/gemini-2.5-flash-image:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"a quiet harbour"}]}],"generationConfig":{"responseModalities":["IMAGE"]}}`,
		map[string]string{"x-goog-api-key": "k"})
	gemini := str(decode(t, data), "candidates", 0, "content", "parts", 0, "inlineData", "data")
	_, data = post(t, base+"/v1/images/generations", `{"prompt":"a quiet harbour","response_format":"b64_json"}`)
	if openai := str(decode(t, data), "data", 0, "b64_json"); gemini == "" || gemini != openai {
		t.Error("Gemini and the images API drew different pictures for one prompt and size")
	}
}

func TestGeminiImageStreamAndErrors(t *testing.T) {
	_, base := startSim(t)
	headers := map[string]string{"x-goog-api-key": "k"}
	resp, data := callHeaders(t, http.MethodPost, base+"/v1beta/models/gemini-2.5-flash-image:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"user","parts":[{"text":"a fox"}]}]}`, headers)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	events := parseEvents(t, string(data), "\r\n\r\n")
	if len(events) != 2 {
		t.Fatalf("%d events, want 2: %s", len(events), data)
	}
	first, second := object(t, events[0].data), object(t, events[1].data)
	if str(first, "candidates", 0, "content", "parts", 0, "text") != "Simulated image from gemini-2.5-flash-image." ||
		path(first, "candidates", 0, "finishReason") != nil || num(first, "usageMetadata", "totalTokenCount") != 2 {
		t.Errorf("first chunk: %s", events[0].data)
	}
	if str(second, "candidates", 0, "content", "parts", 0, "inlineData", "mimeType") != "image/png" ||
		str(second, "candidates", 0, "finishReason") != "STOP" || num(second, "usageMetadata", "totalTokenCount") != 2+1290+4 {
		t.Errorf("second chunk: %.300s", events[1].data)
	}

	resp, data = callHeaders(t, http.MethodPost, base+"/v1beta/models/gemini-2.5-flash-image:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"a fox"}]}],"generationConfig":{"imageConfig":{"aspectRatio":"7:3"}}}`, headers)
	if resp.StatusCode != http.StatusBadRequest || str(decode(t, data), "error", "status") != "INVALID_ARGUMENT" {
		t.Errorf("bad aspect ratio: %d %s", resp.StatusCode, data)
	}
}

package simulator

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// Gemini image output ("Nano Banana"): generateContent answers with an inlineData PNG part
// when generationConfig.responseModalities contains "IMAGE", or, when responseModalities is
// absent, when the model id contains "image" (gemini-2.5-flash-image). The picture is the one
// the images API draws for the same prompt (the last user text) and size; the size follows
// generationConfig.imageConfig.aspectRatio (Gemini's 1K sizes, scaled down like every
// picture). A short text part comes first unless responseModalities leaves out "TEXT".
// Thinking, tools and stop sequences do not apply to image answers.

// geminiImageTokens is what one output image costs (Gemini bills 1290 tokens per 1K image).
const geminiImageTokens = 1290

// geminiAspectSizes are the 1K output sizes of each aspect ratio Gemini accepts.
var geminiAspectSizes = map[string][2]int{
	"1:1": {1024, 1024}, "2:3": {832, 1248}, "3:2": {1248, 832}, "3:4": {864, 1184},
	"4:3": {1184, 864}, "4:5": {896, 1152}, "5:4": {1152, 896}, "9:16": {768, 1344},
	"16:9": {1344, 768}, "21:9": {1536, 672},
}

// geminiImageAsk is an image answer to give: with a text part or not, at w×h.
type geminiImageAsk struct {
	text bool
	w, h int
}

// geminiImageWanted reports whether the request asks model for an image, and how.
func geminiImageWanted(body []byte, model string) (*geminiImageAsk, *apiError) {
	var req struct {
		GenerationConfig *struct {
			ResponseModalities []string `json:"responseModalities"`
			ImageConfig        *struct {
				AspectRatio string `json:"aspectRatio"`
			} `json:"imageConfig"`
		} `json:"generationConfig"`
	}
	_ = json.Unmarshal(body, &req) // decodeGemini has already rejected a malformed body
	want := &geminiImageAsk{text: true}
	image := strings.Contains(strings.ToLower(model), "image")
	aspect := "1:1"
	if g := req.GenerationConfig; g != nil {
		if len(g.ResponseModalities) > 0 {
			has := func(m string) bool {
				return slices.ContainsFunc(g.ResponseModalities, func(s string) bool { return strings.EqualFold(s, m) })
			}
			image, want.text = has("IMAGE"), has("TEXT")
		}
		if g.ImageConfig != nil && g.ImageConfig.AspectRatio != "" {
			aspect = g.ImageConfig.AspectRatio
		}
	}
	if !image {
		return nil, nil
	}
	size, ok := geminiAspectSizes[aspect]
	if !ok {
		return nil, invalidGemini("* GenerateContentRequest.generation_config.image_config.aspect_ratio: "+
			"unsupported aspect ratio %q.\n", aspect)
	}
	want.w, want.h = size[0], size[1]
	return want, nil
}

// geminiImage answers generateContent or streamGenerateContent with an image.
func (s *Server) geminiImage(ex *exchange, stream bool, model string, q ask, want *geminiImageAsk) {
	prompt := max(q.promptTokens, 1)
	var text string
	if want.text {
		text = "Simulated image from " + model + "."
	}
	textTokens := countWords(text)
	imagePart := obj{{"inlineData", obj{{"mimeType", "image/png"},
		{"data", base64.StdEncoding.EncodeToString(pictureFor(q.lastUser, 0, want.w, want.h))}}}}
	output := []obj{{{"modality", "IMAGE"}, {"tokenCount", geminiImageTokens}}}
	if textTokens > 0 {
		output = append(output, obj{{"modality", "TEXT"}, {"tokenCount", textTokens}})
	}
	usage := obj{{"promptTokenCount", prompt}, {"candidatesTokenCount", geminiImageTokens + textTokens},
		{"totalTokenCount", prompt + geminiImageTokens + textTokens},
		{"promptTokensDetails", []obj{{{"modality", "TEXT"}, {"tokenCount", prompt}}}},
		{"candidatesTokensDetails", output}}
	id := s.newID("")
	response := func(parts []obj, final bool) obj {
		cand := obj{{"content", obj{{"parts", parts}, {"role", "model"}}}}
		u := usage
		if final {
			cand = append(cand, member{"finishReason", "STOP"})
		} else {
			u = obj{{"promptTokenCount", prompt}, {"totalTokenCount", prompt}}
		}
		cand = append(cand, member{"index", 0})
		return obj{{"candidates", []obj{cand}}, {"usageMetadata", u}, {"modelVersion", model}, {"responseId", id}}
	}
	var parts []obj
	if text != "" {
		parts = append(parts, obj{{"text", text}})
	}
	if !stream {
		writeJSON(ex.w, http.StatusOK, response(append(parts, imagePart), true))
		return
	}
	// Streamed: the text in one chunk, then the whole image with the finish and full usage.
	var events []sseEvent
	if len(parts) > 0 {
		events = append(events, sseEvent{data: response(parts, false)})
	}
	events = append(events, sseEvent{data: response([]obj{imagePart}, true)})
	f := framingJSONArray
	if ex.r.URL.Query().Get("alt") == "sse" {
		f = framingSSECRLF
	}
	playStream(ex, f, events)
}

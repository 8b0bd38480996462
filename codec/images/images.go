// Package images translates image generation: the client's request (the chat-completions
// providers' images format), the body each upstream format takes, and the answers back.
package images

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/media"
)

// Sizes are the sizes the gateway makes for a model whose catalog entry lists none
// (gateway-api.md, POST /images/generations); any other size maps to the one with the
// closest aspect ratio (Options).
var Sizes = []string{"2048x2048", "2752x1536", "1536x2752", "1664x2496", "2496x1664", "1760x2368", "2368x1760",
	"1824x2272", "2272x1824", "3072x1376", "1344x3136", "2560x720", "3072x864"}

// DefaultSize is used when the client names none (or "auto") for such a model.
const DefaultSize = "2048x2048"

// Request is a checked image request.
type Request struct {
	Model   string
	Prompt  string
	Size    string // as asked ("" for auto) until For sets what the upstream is asked to make
	Quality string // "" when not given
	Style   string // "" when not given
	// ResponseFormat is url or b64_json.
	ResponseFormat string
	User           string
}

func bad(param, format string, args ...any) *ir.Error { return check.Bad(param, format, args...) }

// DecodeRequest checks a client's image request as far as it can without the model: what the
// model makes is For's to check.
func DecodeRequest(body []byte) (*Request, error) {
	var in struct {
		Model          string          `json:"model"`
		Prompt         *string         `json:"prompt"`
		N              *int            `json:"n"`
		Size           string          `json:"size"`
		Quality        string          `json:"quality"`
		Style          string          `json:"style"`
		ResponseFormat string          `json:"response_format"`
		User           string          `json:"user"`
		Stream         json.RawMessage `json:"stream"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, bad("", "the request body must be a JSON object of the images format: %s", check.JSONProblem(err))
	}
	if in.Model == "" {
		return nil, bad("model", "model is required")
	}
	if in.Prompt == nil || strings.TrimSpace(*in.Prompt) == "" {
		return nil, bad("prompt", "prompt is required")
	}
	// The gateway makes, stores and bills one image per call, whatever the model could make.
	if in.N != nil && *in.N != 1 {
		return nil, bad("n", "n must be 1: one image per request")
	}
	r := &Request{Model: in.Model, Prompt: *in.Prompt, Quality: in.Quality, Style: in.Style, ResponseFormat: in.ResponseFormat, User: in.User}
	switch r.ResponseFormat {
	case "":
		r.ResponseFormat = "url"
	case "url", "b64_json":
	default:
		return nil, bad("response_format", "response_format %q must be url or b64_json", in.ResponseFormat)
	}
	if in.Size != "" && in.Size != "auto" {
		if _, _, ok := parseSize(in.Size); !ok {
			return nil, bad("size", "size %q must be WIDTHxHEIGHT, for example 2048x2048", in.Size)
		}
		r.Size = in.Size
	}
	return r, nil
}

// closestSize is the size of sizes with the aspect ratio closest to w:h (the first of equals).
func closestSize(sizes []string, w, h int) string {
	want := math.Log(float64(w) / float64(h))
	best, bestDiff := sizes[0], math.Inf(1)
	for _, c := range sizes {
		cw, ch, _ := parseSize(c)
		if d := math.Abs(math.Log(float64(cw)/float64(ch)) - want); d < bestDiff-1e-12 {
			best, bestDiff = c, d
		}
	}
	return best
}

func parseSize(s string) (int, int, bool) {
	a, b, ok := strings.Cut(strings.ToLower(s), "x")
	w, err1 := strconv.Atoi(a)
	h, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || w <= 0 || h <= 0 {
		return 0, 0, false
	}
	return w, h, true
}

// geminiRatios are the aspect ratios gemini image models accept.
var geminiRatios = []string{"1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"}

// AspectRatio is the gemini aspect ratio closest to the size's, e.g. "16:9" for 2752x1536.
func AspectRatio(size string) string {
	w, h, _ := parseSize(size)
	want := math.Log(float64(w) / float64(h))
	best, bestDiff := "1:1", math.Inf(1)
	for _, r := range geminiRatios {
		a, b, _ := strings.Cut(r, ":")
		rw, _ := strconv.Atoi(a)
		rh, _ := strconv.Atoi(b)
		if d := math.Abs(math.Log(float64(rw)/float64(rh)) - want); d < bestDiff {
			best, bestDiff = r, d
		}
	}
	return best
}

// Image is an upstream's answer: the bytes (or a URL to download them from) and usage.
type Image struct {
	Data          []byte
	URL           string // when the upstream answered with a link instead of bytes
	MediaType     string
	RevisedPrompt string
	InputTokens   int64
	OutputTokens  int64
}

// ChatBody is the upstream request for a chat-format route's images API. The gateway asks for
// b64_json so the bytes come in the answer; a URL answer is downloaded.
// A quality or style goes with it when the client chose one (For took it from the model's).
func ChatBody(r *Request, upstreamModel string) []byte {
	body := map[string]any{"model": upstreamModel, "prompt": r.Prompt, "n": 1, "size": r.Size, "response_format": "b64_json"}
	if r.Quality != "" && r.Quality != "auto" {
		body["quality"] = r.Quality
	}
	if r.Style != "" {
		body["style"] = r.Style
	}
	b, _ := json.Marshal(body)
	return b
}

// DecodeChat reads a chat-format images answer.
func DecodeChat(body []byte) (*Image, error) {
	var out struct {
		Data []struct {
			B64JSON       string `json:"b64_json"`
			URL           string `json:"url"`
			RevisedPrompt string `json:"revised_prompt"`
		} `json:"data"`
		Usage struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, err
	}
	if len(out.Data) == 0 {
		return nil, fmt.Errorf("the images answer has no data")
	}
	d := out.Data[0]
	img := &Image{URL: d.URL, RevisedPrompt: d.RevisedPrompt, InputTokens: max(out.Usage.InputTokens, 0), OutputTokens: max(out.Usage.OutputTokens, 0)}
	if d.B64JSON != "" {
		data, err := base64.StdEncoding.DecodeString(d.B64JSON)
		if err != nil {
			return nil, fmt.Errorf("b64_json is not base64: %w", err)
		}
		if img.MediaType, err = servable(data); err != nil {
			return nil, err
		}
		img.Data = data
	}
	if img.Data == nil && img.URL == "" {
		return nil, fmt.Errorf("the images answer has neither b64_json nor url")
	}
	return img, nil
}

// GeminiBody asks a gemini-format route for an image (responseModalities IMAGE).
func GeminiBody(r *Request) []byte {
	b, _ := json.Marshal(map[string]any{
		"contents": []map[string]any{{"role": "user", "parts": []map[string]string{{"text": r.Prompt}}}},
		"generationConfig": map[string]any{
			"responseModalities": []string{"TEXT", "IMAGE"},
			"imageConfig":        map[string]string{"aspectRatio": AspectRatio(r.Size)},
		},
	})
	return b
}

// DecodeGemini reads the first inline image of a generateContent answer.
func DecodeGemini(body []byte) (*Image, error) {
	var out struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text       string `json:"text"`
					InlineData *struct {
						MimeType string `json:"mimeType"`
						Data     string `json:"data"`
					} `json:"inlineData"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
		UsageMetadata struct {
			PromptTokenCount     int64 `json:"promptTokenCount"`
			CandidatesTokenCount int64 `json:"candidatesTokenCount"`
		} `json:"usageMetadata"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, err
	}
	for _, c := range out.Candidates {
		for _, p := range c.Content.Parts {
			if p.InlineData != nil && strings.HasPrefix(p.InlineData.MimeType, "image/") {
				data, err := base64.StdEncoding.DecodeString(p.InlineData.Data)
				if err != nil {
					return nil, fmt.Errorf("inlineData is not base64: %w", err)
				}
				mediaType, err := servable(data)
				if err != nil {
					return nil, err
				}
				return &Image{Data: data, MediaType: mediaType,
					InputTokens: max(out.UsageMetadata.PromptTokenCount, 0), OutputTokens: max(out.UsageMetadata.CandidatesTokenCount, 0)}, nil
			}
		}
	}
	return nil, fmt.Errorf("the answer holds no image")
}

// servable is the media type of an answer's image bytes: the one they are (media.Sniff),
// whatever the answer names. Empty bytes or another type are a broken answer, refused here so
// the next route may serve the image rather than the gateway storing what it cannot serve.
func servable(data []byte) (string, error) {
	if len(data) == 0 {
		return "", fmt.Errorf("the answer's image is empty")
	}
	if mediaType := media.Sniff(data); slices.Contains(media.Images, mediaType) {
		return mediaType, nil
	}
	return "", fmt.Errorf("the answer's image is not PNG, JPEG, WebP or GIF")
}

// Result is the spec's image record.
type Result struct {
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Data    []ResultItem `json:"data"`
	Usage   ResultUsage  `json:"usage"`
}

// ResultItem holds url or b64_json.
type ResultItem struct {
	URL           string `json:"url,omitempty"`
	B64JSON       string `json:"b64_json,omitempty"`
	RevisedPrompt string `json:"revised_prompt,omitempty"`
}

// ResultUsage counts tokens as integers.
type ResultUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
}

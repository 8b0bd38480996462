package simulator

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// OpenAI Images (POST /v1/images/generations). Each image is a real PNG
// (media.go): the requested size scaled down to at most 256 px on the longer side, drawn from
// an FNV hash of the prompt and the image's index, so the same prompt gets the same bytes.
// response_format "url" (the default) returns URLs that point back at the simulator
// (GET /r/{route}/files/{id}.png); "b64_json" returns the bytes inline; a route whose
// behaviour sets image_url links there instead, whatever was asked.

const (
	// imageOutputTokens is what one generated image costs in output tokens (OpenAI bills
	// gpt-image output per image and size; one fixed number keeps usage exact).
	imageOutputTokens = 1056
	// maxImages is the largest n the images API accepts.
	maxImages = 10
	// defaultImageSize is what size "auto" (or none) means.
	defaultImageSize = "1024x1024"
	// revisedPromptPrefix starts each data[].revised_prompt: the prompt as the "model" restated it.
	revisedPromptPrefix = "Simulated image of: "
)

type imageRequest struct {
	Model          string  `json:"model"`
	Prompt         *string `json:"prompt"`
	N              *int    `json:"n"`
	Size           string  `json:"size"`
	ResponseFormat string  `json:"response_format"`
	Quality        string  `json:"quality"`
	Stream         bool    `json:"stream"`
}

// imageQualities are the quality values of every image model.
var imageQualities = []string{"auto", "low", "medium", "high", "standard", "hd"}

func (s *Server) images(ex *exchange) {
	var req imageRequest
	if apiErr := decodeOpenAIBody(ex.body, &req); apiErr != nil {
		writeOpenAIError(ex.w, *apiErr)
		return
	}
	n, w, h, apiErr := req.validate()
	if apiErr != nil {
		writeOpenAIError(ex.w, *apiErr)
		return
	}
	prompt := *req.Prompt
	data := make([]obj, n)
	for i := range data {
		pic := pictureFor(prompt, i, w, h)
		if u := ex.behavior.ImageURL; u != "" {
			data[i] = obj{{"url", u}}
		} else if req.ResponseFormat == "b64_json" {
			data[i] = obj{{"b64_json", base64.StdEncoding.EncodeToString(pic)}}
		} else {
			data[i] = obj{{"url", s.storeFile(ex, "image/png", pic)}}
		}
		data[i] = append(data[i], member{"revised_prompt", revisedPromptPrefix + prompt})
	}
	in := max(countWords(prompt), 1) // a real tokenizer never reports 0
	out := imageOutputTokens * n
	quality := req.Quality
	if quality == "" {
		quality = "auto"
	}
	writeJSON(ex.w, http.StatusOK, obj{
		{"created", time.Now().Unix()},
		{"data", data},
		{"background", "opaque"},
		{"output_format", "png"},
		{"size", fmt.Sprintf("%dx%d", w, h)},
		{"quality", quality},
		{"usage", obj{{"input_tokens", in}, {"output_tokens", out}, {"total_tokens", in + out},
			{"input_tokens_details", obj{{"text_tokens", in}, {"image_tokens", 0}}}}},
	})
}

// validate checks the request and returns the number of images and the requested size.
func (req imageRequest) validate() (n, w, h int, apiErr *apiError) {
	switch {
	case req.Prompt == nil:
		return 0, 0, 0, badRequest("prompt", "Missing required parameter: 'prompt'.")
	case strings.TrimSpace(*req.Prompt) == "":
		return 0, 0, 0, badRequest("prompt", "Invalid 'prompt': empty string. Expected a non-empty prompt.")
	case req.Stream:
		return 0, 0, 0, badRequest("stream", "The simulator does not stream image generation; send stream false.")
	}
	n = 1
	if req.N != nil {
		n = *req.N
	}
	if n < 1 || n > maxImages {
		return 0, 0, 0, badRequest("n", fmt.Sprintf("Invalid 'n': integer out of range. Expected a value within 1..%d, but got %d instead.", maxImages, n))
	}
	size := req.Size
	if size == "" || size == "auto" {
		size = defaultImageSize
	}
	w, h, ok := parseSize(size)
	if !ok {
		return 0, 0, 0, badRequest("size", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'auto' and 'WxH' with each side within 1..%d.", req.Size, maxMediaSide))
	}
	switch req.ResponseFormat {
	case "", "url", "b64_json":
	default:
		return 0, 0, 0, badRequest("response_format", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'url' and 'b64_json'.", req.ResponseFormat))
	}
	if req.Quality != "" && !slices.Contains(imageQualities, req.Quality) {
		return 0, 0, 0, badRequest("quality", fmt.Sprintf("Invalid value: '%s'. Supported values are: '%s'.", req.Quality, strings.Join(imageQualities, "', '")))
	}
	return n, w, h, nil
}

// decodeOpenAIBody unmarshals an OpenAI request body into v, or returns the 400 OpenAI sends
// for invalid JSON or a field of the wrong type.
func decodeOpenAIBody(body []byte, v any) *apiError {
	err := json.Unmarshal(body, v)
	if err == nil {
		return nil
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
		return badRequest(te.Field, fmt.Sprintf("Invalid type for '%s': expected %s, got %s.", te.Field, te.Type, te.Value))
	}
	return badRequest("", "We could not parse the JSON body of your request: "+err.Error())
}

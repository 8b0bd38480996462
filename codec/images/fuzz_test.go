package images

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/check/checktest"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/media"
)

// requestParams are the members an images request error may name ("" = the body as a whole).
var requestParams = []string{"", "model", "prompt", "n", "size", "quality", "style", "response_format"}

// decodeFor is DecodeRequest and For a model of the gateway's defaults (no options).
func decodeFor(body []byte) (*Request, error) {
	r, err := DecodeRequest(body)
	if err != nil {
		return nil, err
	}
	if e := r.For(Options{}); e != nil {
		return nil, e
	}
	return r, nil
}

// FuzzDecodeRequest: any body is a 400 naming a member of the request, or
// a request within the documented ranges (a served size, url or b64_json) that the client's
// format writes back to the same request, and whose chat-route body is an images request for
// the same prompt and size.
func FuzzDecodeRequest(f *testing.F) {
	f.Add(checktest.Recorded(f, "images_b64_json.request.json"))
	for _, s := range []string{
		`{"model":"m","prompt":"a cat"}`,
		`{"model":"m","prompt":"a cat","n":1,"response_format":"b64_json","size":"1792x1024","user":"u"}`,
		`{"model":"m","prompt":"p","size":"auto","response_format":"url"}`,
		`{"model":"m","prompt":"p","size":"0x10"}`,
		`{"model":"m","prompt":"p","size":"100000x100000"}`,
		`{"model":"m","prompt":"p","quality":"hd","style":"vivid"}`,
		`{"model":7,"prompt":"p"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeFor(body)
		if err != nil {
			var e *ir.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Message == "" || !slices.Contains(requestParams, e.Param) {
				t.Fatalf("error %#v is not a 400 naming a member of the request", err)
			}
			return
		}
		if r.Model == "" || strings.TrimSpace(r.Prompt) == "" || !slices.Contains(Sizes, r.Size) ||
			(r.ResponseFormat != "url" && r.ResponseFormat != "b64_json") {
			t.Fatalf("accepted out of range: %+v", r)
		}
		again, err := json.Marshal(map[string]any{"model": r.Model, "prompt": r.Prompt, "size": r.Size, "quality": r.Quality, "style": r.Style,
			"response_format": r.ResponseFormat, "user": r.User})
		if err != nil {
			t.Fatal(err)
		}
		if r2, err := decodeFor(again); err != nil || *r2 != *r {
			t.Fatalf("written back as %s it decodes to %+v, %v; want %+v", again, r2, err, r)
		}
		up, err := decodeFor(ChatBody(r, "up"))
		if err != nil || up.Model != "up" || up.Prompt != r.Prompt || up.Size != r.Size || up.ResponseFormat != "b64_json" {
			t.Fatalf("chat-route body %s decodes to %+v, %v", ChatBody(r, "up"), up, err)
		}
		var gem struct {
			GenerationConfig struct{ ImageConfig struct{ AspectRatio string } }
		}
		if err := json.Unmarshal(GeminiBody(r), &gem); err != nil || !slices.Contains(geminiRatios, gem.GenerationConfig.ImageConfig.AspectRatio) {
			t.Fatalf("gemini-route body %s: %v", GeminiBody(r), err)
		}
	})
}

// checkImage is what every decoded upstream image holds: bytes of a type the gateway can
// serve (the type its magic number says, when it has one), or else a link to download;
// token counts that are not negative.
func checkImage(t *testing.T, img *Image) {
	t.Helper()
	switch {
	case img.Data == nil && img.URL == "":
		t.Fatalf("an image with neither bytes nor a link: %+v", img)
	case img.Data != nil && (len(img.Data) == 0 || media.Sniff(img.Data) != img.MediaType || !slices.Contains(media.Images, img.MediaType)):
		t.Fatalf("bytes the gateway cannot serve: %d bytes of %q", len(img.Data), img.MediaType)
	case img.InputTokens < 0 || img.OutputTokens < 0:
		t.Fatalf("negative token counts: %d in, %d out", img.InputTokens, img.OutputTokens)
	}
}

// FuzzDecodeChat: any chat-format images answer is an error or an image
// checkImage accepts, which the same format writes back to the same image.
func FuzzDecodeChat(f *testing.F) {
	f.Add(checktest.Recorded(f, "images_b64_json.json"))
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nrest"))
	for _, s := range []string{
		`{"created":1,"data":[{"b64_json":"` + png + `","revised_prompt":"r"}],"usage":{"input_tokens":3,"output_tokens":1056}}`,
		`{"data":[{"url":"https://x/y.png"}],"output_format":"webp"}`,
		`{"data":[{"b64_json":"AAAA"}],"output_format":"jpeg"}`,
		`{"data":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		img, err := DecodeChat(body)
		if err != nil {
			return
		}
		checkImage(t, img)
		item := map[string]string{"url": img.URL, "revised_prompt": img.RevisedPrompt}
		format := strings.TrimPrefix(img.MediaType, "image/")
		if img.Data != nil {
			item["b64_json"] = base64.StdEncoding.EncodeToString(img.Data)
		}
		again, _ := json.Marshal(map[string]any{"data": []any{item}, "output_format": format,
			"usage": map[string]int64{"input_tokens": img.InputTokens, "output_tokens": img.OutputTokens}})
		if img2, err := DecodeChat(again); err != nil || !reflect.DeepEqual(img2, img) {
			t.Fatalf("written back as %s it decodes to %+v, %v; want %+v", again, img2, err, img)
		}
	})
}

// FuzzDecodeGemini: any generateContent answer is an error or the bytes of
// an image checkImage accepts, which the same format writes back to the same image.
func FuzzDecodeGemini(f *testing.F) {
	f.Add(checktest.Recorded(f, "gemini_image.json"))
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nrest"))
	for _, s := range []string{
		`{"candidates":[{"content":{"parts":[{"text":"here"},{"inlineData":{"mimeType":"image/png","data":"` + png + `"}}]}}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":1290}}`,
		`{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/jpeg","data":"AAAA"}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"text/plain","data":"AAAA"}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"no"}]}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		img, err := DecodeGemini(body)
		if err != nil {
			return
		}
		checkImage(t, img)
		if img.Data == nil || img.URL != "" || img.RevisedPrompt != "" {
			t.Fatalf("a gemini image is its bytes only: %+v", img)
		}
		again, _ := json.Marshal(map[string]any{
			"candidates": []any{map[string]any{"content": map[string]any{"parts": []any{
				map[string]any{"inlineData": map[string]string{"mimeType": img.MediaType, "data": base64.StdEncoding.EncodeToString(img.Data)}}}}}},
			"usageMetadata": map[string]int64{"promptTokenCount": img.InputTokens, "candidatesTokenCount": img.OutputTokens},
		})
		if img2, err := DecodeGemini(again); err != nil || !reflect.DeepEqual(img2, img) {
			t.Fatalf("written back as %s it decodes to %+v, %v; want %+v", again, img2, err, img)
		}
	})
}

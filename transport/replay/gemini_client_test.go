package replay

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"
)

// runGemini drives the Gemini client format (POST /v1beta/models/{model}:generateContent
// and :streamGenerateContent?alt=sse) with the official Go SDK, asking for thought parts
// as Gemini CLI does (thinkingConfig.includeThoughts), so the recording's reasoning is due.
func runGemini(t *testing.T, h *harness, c cell) result {
	return runGenai(t, h, c, true)
}

// runGenai drives /v1beta with go-genai: GenerateContentStream for stream recordings,
// GenerateContent otherwise. The answers are re-encoded as the API's JSON and read by the
// suite's own gemini reader.
func runGenai(t *testing.T, h *harness, c cell, includeThoughts bool) result {
	timeout := 20 * time.Second
	client, err := genai.NewClient(ctx(t), &genai.ClientConfig{APIKey: h.env.Key, Backend: genai.BackendGeminiAPI,
		HTTPClient:  &http.Client{Transport: h.tap, Timeout: timeout},
		HTTPOptions: genai.HTTPOptions{BaseURL: h.env.Node.URL, APIVersion: "v1beta", Timeout: &timeout}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &genai.GenerateContentConfig{}
	if includeThoughts {
		cfg.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true}
	}
	if len(c.rec.Meta.Tools) > 0 {
		tool := &genai.Tool{}
		for _, name := range c.rec.Meta.Tools {
			tool.FunctionDeclarations = append(tool.FunctionDeclarations, &genai.FunctionDeclaration{
				Name: name, ParametersJsonSchema: map[string]any{"type": "object"}})
		}
		cfg.Tools = []*genai.Tool{tool}
	}
	var r result
	var chunks []string
	if !c.rec.Meta.Stream {
		resp, err := client.Models.GenerateContent(ctx(t), c.model, genai.Text(prompt), cfg)
		r.fill(h.tap.take())
		if err != nil {
			r.genaiError(err)
			return r
		}
		b, _ := json.Marshal(resp)
		chunks = append(chunks, string(b))
	} else {
		for resp, err := range client.Models.GenerateContentStream(ctx(t), c.model, genai.Text(prompt), cfg) {
			if err != nil {
				r.genaiError(err)
				r.InStream = true
				break
			}
			b, _ := json.Marshal(resp)
			chunks = append(chunks, string(b))
		}
		r.fill(h.tap.take())
		if r.Status == http.StatusOK { // an error status is one JSON body, not an event stream
			for i, line := range strings.Split(strings.ReplaceAll(string(r.Raw), "\r\n", "\n"), "\n") {
				if line != "" && !strings.HasPrefix(line, "data:") {
					r.violate("line %d is not a data: line (go-genai takes any other line for an error): %q", i, line)
				}
			}
		}
	}
	if len(chunks) > 0 { // a stream whose first event is an error has no answer chunk
		errKeep := r.Err
		a, err := geminiAnswer([]byte("data: "+strings.Join(chunks, "\n\ndata: ")+"\n\n"), true)
		if err != nil {
			r.violate("the answer does not read as Gemini JSON: %v", err)
		}
		r.answer = a
		r.Err = errKeep
	}
	if r.Err != nil && r.Status == http.StatusOK {
		r.InStream = true
	}
	return r
}

func (r *result) genaiError(err error) {
	r.Err = &upstreamError{Status: r.Status}
	var e genai.APIError
	if errors.As(err, &e) {
		r.Err.Status, r.ErrType, r.ErrMessage = e.Code, e.Status, e.Message
		return
	}
	r.ErrMessage = err.Error()
}

// TestGeminiClientsGetThoughtPartsOnlyWhenAsked: a Gemini client that leaves out
// thinkingConfig.includeThoughts gets no thought parts, as from Gemini itself, however much
// reasoning the upstream sent; the rest of the answer is what a client that asks gets.
// Gemini routes are left out: their answers are relayed as the upstream wrote them.
func TestGeminiClientsGetThoughtPartsOnlyWhenAsked(t *testing.T) {
	const client = "gemini-no-thoughts"
	var recs []recording
	wants := map[string]answer{}
	for _, rec := range loadRecordings(t) {
		want, err := reference(rec)
		if err != nil || want.Err != nil || want.Reasoning == "" || rec.Meta.Format == "gemini" {
			continue
		}
		want.Reasoning = ""
		recs, wants[rec.Key] = append(recs, rec), want
	}
	if len(recs) < 4 {
		t.Fatalf("only %d recordings with reasoning from a non-gemini upstream", len(recs))
	}
	h := startReplay(t, recs, client)
	for _, rec := range recs {
		t.Run(rec.Key, func(t *testing.T) {
			c := cell{rec: rec, model: cellID(rec, client), client: "gemini"}
			replayCell(t, h, c, wants[rec.Key], func() result {
				got := runGenai(t, h, c, false)
				if n := thoughtParts(got.Raw, rec.Meta.Stream); n > 0 {
					t.Errorf("the answer has %d thought parts; the client did not ask for thoughts", n)
				}
				return got
			})
		})
	}
}

// thoughtParts counts the parts marked thought in a Gemini answer or stream, as written.
func thoughtParts(raw []byte, stream bool) int {
	bodies := [][]byte{raw}
	if stream {
		bodies = nil
		for _, f := range parseFrames(raw) {
			bodies = append(bodies, []byte(f.Data))
		}
	}
	n := 0
	for _, b := range bodies {
		v, _ := decode(b)
		for _, c := range arr(v, "candidates") {
			for _, p := range arr(c, "content", "parts") {
				if get(p, "thought") == true {
					n++
				}
			}
		}
	}
	return n
}

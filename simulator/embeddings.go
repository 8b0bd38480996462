package simulator

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
)

// OpenAI Embeddings (POST /v1/embeddings). Vectors are a pure function of the input text, so
// a test can compute the expected vector with embeddingFor and compare exactly.

// embeddingDims is small on purpose: the gateway relays vectors, it never interprets them.
const embeddingDims = 8

type embeddingRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
}

type embeddingItem struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"` // []float32, or a base64 string
}

func (s *Server) embeddings(ex *exchange) {
	var req embeddingRequest
	if apiErr := decodeOpenAIBody(ex.body, &req); apiErr != nil {
		writeOpenAIError(ex.w, *apiErr)
		return
	}
	if req.Model == "" {
		writeOpenAIError(ex.w, *badRequest("model", "Missing required parameter: 'model'."))
		return
	}
	switch req.EncodingFormat {
	case "", "float", "base64":
	default:
		writeOpenAIError(ex.w, *badRequest("encoding_format",
			fmt.Sprintf("Invalid value for 'encoding_format': %q. Supported values are: 'float' and 'base64'.", req.EncodingFormat)))
		return
	}
	if e := openAIRange(ex.body, embeddingsBounds); e != nil {
		writeOpenAIError(ex.w, *e)
		return
	}
	inputs, ok := embeddingInputs(req.Input)
	if !ok {
		writeOpenAIError(ex.w, *badRequest("input",
			"Invalid 'input': expected a non-empty string or a non-empty array of non-empty strings."))
		return
	}

	data := make([]embeddingItem, len(inputs))
	words := 0
	for i, text := range inputs {
		vec := embeddingFor(text)
		var emb any = vec
		if req.EncodingFormat == "base64" {
			emb = encodeFloat32s(vec)
		}
		data[i] = embeddingItem{Object: "embedding", Index: i, Embedding: emb}
		words += countWords(text)
	}
	words = max(words, 1) // a real tokenizer never reports zero tokens for accepted input
	type usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	}
	writeJSON(ex.w, http.StatusOK, struct {
		Object string          `json:"object"`
		Model  string          `json:"model"`
		Data   []embeddingItem `json:"data"`
		Usage  usage           `json:"usage"`
	}{"list", req.Model, data, usage{words, words}})
}

// embeddingInputs accepts a string or an array of strings, none empty. Token-id inputs
// (int arrays) are rejected: nothing in the gateway produces them.
func embeddingInputs(raw json.RawMessage) ([]string, bool) {
	raw = bytes.TrimSpace(raw)
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, one != ""
	}
	var many []string
	if json.Unmarshal(raw, &many) != nil || len(many) == 0 {
		return nil, false
	}
	for _, s := range many {
		if s == "" {
			return nil, false
		}
	}
	return many, true
}

// embeddingFor derives a unit-length vector from an FNV-1a hash of text: equal texts get
// equal vectors, different texts almost surely different ones.
func embeddingFor(text string) []float32 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(text))
	state := h.Sum64()
	vec := make([]float32, embeddingDims)
	var norm float64
	for i := range vec {
		// splitmix64 spreads the one hash over several well-mixed components.
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		v := float64(z>>11)/float64(1<<53)*2 - 1 // uniform in [-1, 1)
		vec[i] = float32(v)
		norm += float64(vec[i]) * float64(vec[i])
	}
	norm = math.Sqrt(norm)
	for i := range vec {
		vec[i] = float32(float64(vec[i]) / norm)
	}
	return vec
}

// encodeFloat32s is the base64 encoding_format: little-endian float32s, base64 (std, padded).
func encodeFloat32s(vec []float32) string {
	b := make([]byte, 4*len(vec))
	for i, f := range vec {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return base64.StdEncoding.EncodeToString(b)
}

package simulator

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"testing"
)

type embeddingsResp struct {
	Object string `json:"object"`
	Model  string `json:"model"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

func embed(t *testing.T, base, body string) embeddingsResp {
	t.Helper()
	resp, data := post(t, base+"/r/emb/v1/embeddings", body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	var r embeddingsResp
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if r.Object != "list" || r.Model != "text-embedding-test" {
		t.Errorf("object %q model %q", r.Object, r.Model)
	}
	for i, d := range r.Data {
		if d.Object != "embedding" || d.Index != i {
			t.Errorf("item %d: object %q index %d", i, d.Object, d.Index)
		}
	}
	return r
}

func TestEmbeddingsFloatAndBase64Agree(t *testing.T) {
	_, base := startSim(t)
	inputs := `["hello world","the quick brown fox"]`
	floats := embed(t, base, `{"model":"text-embedding-test","input":`+inputs+`}`)
	b64 := embed(t, base, `{"model":"text-embedding-test","input":`+inputs+`,"encoding_format":"base64"}`)
	if len(floats.Data) != 2 || len(b64.Data) != 2 {
		t.Fatalf("got %d and %d items, want 2", len(floats.Data), len(b64.Data))
	}
	if floats.Usage.PromptTokens != 6 || floats.Usage.TotalTokens != 6 {
		t.Errorf("usage %+v, want 6 words", floats.Usage)
	}
	for i, text := range []string{"hello world", "the quick brown fox"} {
		var vec []float32
		if err := json.Unmarshal(floats.Data[i].Embedding, &vec); err != nil {
			t.Fatalf("float embedding %s: %v", floats.Data[i].Embedding, err)
		}
		var encoded string
		if err := json.Unmarshal(b64.Data[i].Embedding, &encoded); err != nil {
			t.Fatalf("base64 embedding %s: %v", b64.Data[i].Embedding, err)
		}
		raw, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil || len(raw) != 4*embeddingDims {
			t.Fatalf("base64 payload: %d bytes, %v", len(raw), err)
		}
		decoded := make([]float32, embeddingDims)
		for j := range decoded {
			decoded[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
		}
		if !reflect.DeepEqual(vec, decoded) || !reflect.DeepEqual(vec, embeddingFor(text)) {
			t.Errorf("input %d: float %v, base64 %v, want %v", i, vec, decoded, embeddingFor(text))
		}
		var norm float64
		for _, v := range vec {
			norm += float64(v) * float64(v)
		}
		if math.Abs(norm-1) > 1e-5 {
			t.Errorf("input %d: squared norm %v, want 1", i, norm)
		}
	}
	if reflect.DeepEqual(floats.Data[0].Embedding, floats.Data[1].Embedding) {
		t.Error("different inputs got the same vector")
	}
}

// TestEmbeddingIsStable pins one vector, so fixtures recorded against the simulator keep
// matching: changing the derivation is a visible, deliberate break.
func TestEmbeddingIsStable(t *testing.T) {
	_, base := startSim(t)
	r := embed(t, base, `{"model":"text-embedding-test","input":"hello","encoding_format":"base64"}`)
	if got, want := string(r.Data[0].Embedding), `"`+encodeFloat32s(embeddingFor("hello"))+`"`; got != want {
		t.Errorf("embedding %s, want %s", got, want)
	}
	if got, want := encodeFloat32s(embeddingFor("hello")), pinnedHello; got != want {
		t.Errorf("embeddingFor(hello) = %s, want %s", got, want)
	}
	if r.Usage.PromptTokens != 1 {
		t.Errorf("usage %+v", r.Usage)
	}
}

const pinnedHello = "+Mf7PgQtBD7m27a+dhJgvn8zG767vQG/3MiyPmSMzz4="

func TestEmbeddingsRejectBadInput(t *testing.T) {
	_, base := startSim(t)
	tests := []struct{ name, body, param string }{
		{"missing model", `{"input":"x"}`, "model"},
		{"missing input", `{"model":"e"}`, "input"},
		{"empty string", `{"model":"e","input":""}`, "input"},
		{"empty array", `{"model":"e","input":[]}`, "input"},
		{"empty item", `{"model":"e","input":["a",""]}`, "input"},
		{"token ids", `{"model":"e","input":[1,2,3]}`, "input"},
		{"unknown encoding", `{"model":"e","input":"x","encoding_format":"int8"}`, "encoding_format"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := post(t, base+"/v1/embeddings", tc.body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d: %s", resp.StatusCode, data)
			}
			var e struct {
				Error struct {
					Type  string `json:"type"`
					Param string `json:"param"`
				} `json:"error"`
			}
			_ = json.Unmarshal(data, &e)
			if e.Error.Type != "invalid_request_error" || e.Error.Param != tc.param {
				t.Errorf("error %s, want param %q", data, tc.param)
			}
		})
	}
}

package gemini

import (
	"encoding/json"
	"testing"

	"github.com/modelgate/modelgate/codec/check/checktest"
	"github.com/modelgate/modelgate/codec/ir"
)

// TestGeminiMediaIsChecked: fileData.fileUri and inlineData, in either spelling the API reads
// and wherever a Part is (a turn, the system instruction, a function response), point only at
// a public web address or hold valid base64 of an allowed type; each refusal is a 400
// INVALID_ARGUMENT naming the field.
func TestGeminiMediaIsChecked(t *testing.T) {
	turn := func(part string) string {
		return `{"contents":[{"role":"user","parts":[{"text":"look"},` + part + `]}]}`
	}
	const uri = "contents[0].parts[1].fileData.fileUri"
	private := func(param, u string) string {
		return param + ` must not point at a private, loopback or link-local address; got "` + u + `"`
	}
	cases := []checktest.Refusal{
		{"a local file", turn(`{"fileData":{"fileUri":"file:///etc/passwd","mimeType":"image/png"}}`), uri,
			uri + ` must be an https:, http: or data: URL of an image; got "file:///etc/passwd"`},
		{"the metadata service", turn(`{"fileData":{"fileUri":"http://169.254.169.254/","mimeType":"image/png"}}`), uri, private(uri, "http://169.254.169.254/")},
		{"a loopback port", turn(`{"fileData":{"fileUri":"http://127.0.0.1:6379/"}}`), uri, private(uri, "http://127.0.0.1:6379/")},
		{"not a url", turn(`{"fileData":{"fileUri":"not a url","mimeType":"application/pdf"}}`), uri,
			uri + ` must be an https:, http: or data: URL of a file; got "not a url"`},
		{"a Cloud Storage URI", turn(`{"fileData":{"fileUri":"gs://bucket/a.png","mimeType":"image/png"}}`), uri,
			uri + ` must be an https:, http: or data: URL of an image; got "gs://bucket/a.png"`},
		{"the proto spelling", turn(`{"file_data":{"file_uri":"http://[::1]/a.png","mime_type":"image/png"}}`),
			"contents[0].parts[1].file_data.file_uri", private("contents[0].parts[1].file_data.file_uri", "http://[::1]/a.png")},
		{"an SVG in the proto spelling", turn(`{"inline_data":{"mime_type":"image/svg+xml","data":"PHN2Zz4="}}`), "contents[0].parts[1].inline_data.mime_type",
			`contents[0].parts[1].inline_data.mime_type must be one of image/png, image/jpeg, image/webp, image/gif for an image; got "image/svg+xml"`},
		{"invalid base64", turn(`{"inlineData":{"mimeType":"image/png","data":"@@@"}}`),
			"contents[0].parts[1].inlineData.data", `contents[0].parts[1].inlineData.data must be valid base64; got "@@@"`},
		{"an SVG", turn(`{"inlineData":{"mimeType":"image/svg+xml","data":"PHN2Zz4="}}`), "contents[0].parts[1].inlineData.mimeType",
			`contents[0].parts[1].inlineData.mimeType must be one of image/png, image/jpeg, image/webp, image/gif for an image; got "image/svg+xml"`},
		{"inline_data of invalid base64", turn(`{"inline_data":{"mime_type":"application/pdf","data":"%PDF"}}`),
			"contents[0].parts[1].inline_data.data", `contents[0].parts[1].inline_data.data must be valid base64; got "%PDF"`},
		{"in the system instruction", `{"systemInstruction":{"parts":[{"fileData":{"fileUri":"http://10.0.0.1/a.pdf"}}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
			"systemInstruction.parts[0].fileData.fileUri", private("systemInstruction.parts[0].fileData.fileUri", "http://10.0.0.1/a.pdf")},
		{"in a function response", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{},"parts":[{"fileData":{"fileUri":"http://localhost/a.png","mimeType":"image/png"}}]}}]}]}`,
			"contents[1].parts[0].functionResponse.parts[0].fileData.fileUri", private("contents[1].parts[0].functionResponse.parts[0].fileData.fileUri", "http://localhost/a.png")},
	}
	checkRefusals(t, cases)
}

// TestGeminiMediaInEitherSpelling: what passes is read into the IR alike whichever spelling
// the client used, so an image is an image for the model's input check.
func TestGeminiMediaInEitherSpelling(t *testing.T) {
	cases := []struct {
		name, part string
		want       ir.Part
	}{
		{"inlineData", `{"inlineData":{"mimeType":"image/png","data":"` + checktest.PNG + `"}}`,
			ir.Part{Kind: ir.PartImage, Image: &ir.Image{MediaType: "image/png", Data: checktest.PNG}}},
		{"inline_data", `{"inline_data":{"mime_type":"image/png","data":"` + checktest.PNG + `"}}`,
			ir.Part{Kind: ir.PartImage, Image: &ir.Image{MediaType: "image/png", Data: checktest.PNG}}},
		{"fileData", `{"fileData":{"fileUri":"https://example.com/a.pdf","mimeType":"application/pdf"}}`,
			ir.Part{Kind: ir.PartFile, File: &ir.File{MediaType: "application/pdf", URL: "https://example.com/a.pdf"}}},
		{"file_data, its type guessed", `{"file_data":{"file_uri":"https://example.com/a.jpg"}}`,
			ir.Part{Kind: ir.PartImage, Image: &ir.Image{MediaType: "image/jpeg", URL: "https://example.com/a.jpg"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Format.DecodeRequest([]byte(`{"contents":[{"role":"user","parts":[` + c.part + `]}]}`))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(r.Messages)
			want, _ := json.Marshal([]ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{c.want}}})
			if string(got) != string(want) || len(r.Extra) != 0 {
				t.Errorf("\n got %s (extra %v)\nwant %s", got, r.Extra, want)
			}
		})
	}
}

package gemini

import (
	"encoding/json"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
)

// A Part's media members as the API reads them: the JSON names (inlineData, mimeType,
// fileData, fileUri) or the proto's (inline_data, mime_type, file_data, file_uri), in any mix.
// A gemini route is handed the client's body as it is, so each spelling is checked alike and
// read into the IR alike.

// mediaMembers are the Part members that hold media, in both spellings; file: a fileData.
var mediaMembers = []struct {
	name string
	file bool
}{{"inlineData", false}, {"inline_data", false}, {"fileData", true}, {"file_data", true}}

// wireMedia is an inlineData or a fileData with either spelling of its members.
type wireMedia struct {
	MimeType      string `json:"mimeType"`
	MimeTypeProto string `json:"mime_type"`
	Data          string `json:"data"`
	FileURI       string `json:"fileUri"`
	FileURIProto  string `json:"file_uri"`
}

// readMedia checks the part's media members (keys: the part's members) and sets p's
// InlineData and FileData from them, the JSON spelling first where a part has both. The
// inline data must be valid base64 of an image type or any other; a file's URI one a provider
// may fetch (check.MediaURL). An empty one is left to the decoder, which requires it.
func readMedia(at string, keys map[string]json.RawMessage, p *wirePart) *ir.Error {
	for i := len(mediaMembers) - 1; i >= 0; i-- { // the proto spellings first: the JSON ones win
		mm := mediaMembers[i]
		raw, ok := keys[mm.name]
		if !ok || isNull(raw) {
			continue
		}
		var w wireMedia
		if err := json.Unmarshal(raw, &w); err != nil {
			return bad(at+"."+mm.name, "%s.%s must be an object: %s", at, mm.name, check.JSONProblem(err))
		}
		param := at + "." + mm.name
		mt, typeName := spelt(w.MimeType, "mimeType", w.MimeTypeProto, "mime_type")
		if mm.file {
			uri, uriName := spelt(w.FileURI, "fileUri", w.FileURIProto, "file_uri")
			if e := checkFileURI(param+"."+uriName, mt, uri); e != nil {
				return e
			}
			p.FileData = &fileData{MimeType: mt, FileURI: uri}
			continue
		}
		if e := checkInline(param, typeName, mt, w.Data); e != nil {
			return e
		}
		p.InlineData = &blob{MimeType: mt, Data: w.Data}
	}
	return nil
}

// spelt is a member's value and the name it was sent under: the JSON one unless only the
// proto one is set.
func spelt(camel, camelName, proto, protoName string) (string, string) {
	if camel == "" && proto != "" {
		return proto, protoName
	}
	return camel, camelName
}

// mediaOf is the kind of media a MIME type names: an image's types are checked, any other
// file's are the provider's to judge.
func mediaOf(mimeType string) check.Media {
	if isImageType(mimeType) {
		return check.Image
	}
	return check.File
}

func isImageType(mimeType string) bool { return strings.HasPrefix(strings.ToLower(mimeType), "image/") }

// checkInline checks an inlineData (param names it, typeName its type member as sent).
func checkInline(param, typeName, mimeType, data string) *ir.Error {
	if data == "" {
		return nil
	}
	typeParam := ""
	if mimeType != "" {
		typeParam = param + "." + typeName
	}
	return check.Inline(typeParam, mimeType, param+".data", data, mediaOf(mimeType))
}

// checkFileURI checks a fileData's URI (param names it).
func checkFileURI(param, mimeType, uri string) *ir.Error {
	if uri == "" {
		return nil
	}
	return check.MediaURL(param, uri, mediaOf(mimeType))
}

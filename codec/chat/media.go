package chat

import (
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// What a chat route is handed as it is must not point anywhere the client may not name: the
// light parse reads every content part's media members in place, decoding only their URLs,
// and checks them as every format's decoder does (check.MediaURL). The messages were checked
// whole by jsonscan, so the walk inside them only finds boundaries (codec/jsonw).

// urlMedia is what a part's member named *_url holds. image_url is OpenAI's; audio_url and
// video_url are what self-hosted servers (vLLM) fetch too; any other *_url is checked as a
// file's.
var urlMedia = map[string]check.Media{"image_url": check.Image, "audio_url": check.Audio, "video_url": check.Video}

// checkMedia checks the media of a message's content (at names the message) and reports
// whether it holds an image. A member is checked whatever the part's type says, since a
// lenient server reads it either way.
func checkMedia(at string, content []byte) (images bool, e *ir.Error) {
	if len(content) == 0 || content[0] != '[' {
		return false, nil
	}
	j := -1
	jsonw.ElementsOf(content, func(v jsonscan.Span) bool {
		j++
		part := content[v.Start:v.End]
		if part[0] != '{' {
			return true
		}
		where := func() string { return at + ".content[" + strconv.Itoa(j) + "]" }
		jsonw.EachMember(part, func(k []byte, mv jsonscan.Span) bool {
			val := part[mv.Start:mv.End]
			if isNull(val) {
				return true
			}
			name := jsonscan.Key(k)
			switch {
			case name == "image_url":
				images = true
				e = urlMember(where()+".image_url", val, check.Image)
			case strings.HasSuffix(name, "_url"):
				m, ok := urlMedia[name]
				if !ok {
					m = check.File
				}
				e = urlMember(where()+"."+name, val, m)
			case name == "file":
				e = inlineMember(where()+".file", val, "file_data", func(param, s string) *ir.Error { return check.MediaURL(param, s, check.File) })
			case name == "input_audio":
				e = inlineMember(where()+".input_audio", val, "data", func(param, s string) *ir.Error { return check.Inline("", "", param, s, check.Audio) })
			}
			return e == nil
		})
		return e == nil
	})
	return images, e
}

// urlMember checks a URL member: {"url": "…"}, or the bare string some servers take.
func urlMember(param string, val []byte, m check.Media) *ir.Error {
	if s, ok := stringOf(val); ok {
		return check.MediaURL(param, s, m)
	}
	if val[0] != '{' {
		return bad(param, "%s must be an object {\"url\": …}; got %s", param, check.Quote(val))
	}
	s, ok := stringOf(pick(val, "url")[0])
	if !ok {
		return bad(param+".url", "%s.url is required: the URL of %s", param, m.Noun)
	}
	return check.MediaURL(param+".url", s, m)
}

// inlineMember checks the string member name of the object val (a file's file_data, an
// input_audio's data) with fn; absent, it is the decoder's to judge.
func inlineMember(param string, val []byte, name string, fn func(param, s string) *ir.Error) *ir.Error {
	if val[0] != '{' {
		return bad(param, "%s must be an object; got %s", param, check.Quote(val))
	}
	raw := pick(val, name)[0]
	if raw == nil || isNull(raw) {
		return nil
	}
	s, ok := stringOf(raw)
	if !ok {
		return bad(param+"."+name, "%s.%s must be a string", param, name)
	}
	return fn(param+"."+name, s)
}

// stringOf is a JSON string's value (the body was checked whole by jsonscan, so jsonw reads
// it in place).
func stringOf(raw []byte) (string, bool) {
	if !jsonw.IsString(raw) {
		return "", false
	}
	return string(jsonw.Unquote(nil, raw[1:len(raw)-1])), true
}

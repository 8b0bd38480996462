package check

import (
	"net/url"
	"strings"

	"github.com/modelgate/modelgate/codec/ir"
)

// Media is a kind of content a client hands the model by URL or inline (base64): the noun
// messages call it and the media types it may be sent as.
type Media struct {
	Noun  string
	Types []string // exact types, or "audio/" for any subtype; nil: any type/subtype
}

// The kinds of media the formats carry. An image is one of the four types every provider
// reads; documents and other files keep what each format took before these checks: any type.
var (
	Image = Media{Noun: "an image", Types: []string{"image/png", "image/jpeg", "image/webp", "image/gif"}}
	Audio = Media{Noun: "an audio", Types: []string{"audio/"}}
	Video = Media{Noun: "a video", Types: []string{"video/"}}
	File  = Media{Noun: "a file"}
)

// maxURL bounds a web address; inline data may be as long as the body allows.
const maxURL = 2048

// MediaURL checks a URL a client sends for the model to read (an image_url, a document's
// url, a video frame): an https: or http: URL of a public host, or a base64 data: URL of m's
// types. Anything else — file:, ftp:, a bare path, 127.0.0.1, the cloud's metadata address —
// would have the provider (or a self-hosted upstream inside the operator's network) fetch
// what the client may not name.
func MediaURL(param, raw string, m Media) *ir.Error {
	if _, ok := cutPrefixFold(raw, "data:"); ok {
		return m.dataURL(param, raw)
	}
	u, err := url.Parse(raw)
	if err != nil || len(raw) > maxURL || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return Bad(param, "%s must be an https:, http: or data: URL of %s; got %s", param, m.Noun, QuoteString(raw))
	}
	if PrivateHost(u.Hostname()) {
		return Bad(param, "%s must not point at a private, loopback or link-local address; got %s", param, QuoteString(raw))
	}
	return nil
}

// dataURL checks a data: URL.
func (m Media) dataURL(param, raw string) *ir.Error {
	mediaType, data, ok := DataURL(raw)
	if !ok || !m.allows(mediaType) {
		return Bad(param, "%s must be a data URL of %s: data:TYPE;base64,… with TYPE %s; got %s", param, m.Noun, m.allowed(), QuoteString(raw))
	}
	if !Base64(data) {
		return Bad(param, "%s is a data URL whose data is not valid base64; got %s", param, QuoteString(raw))
	}
	return nil
}

// DataURL splits data:<type>;base64,<data> (the scheme and ";base64" in any case), as every
// format's decoder and encoder reads one; ok false for any other text.
func DataURL(s string) (mediaType, data string, ok bool) {
	rest, isData := cutPrefixFold(s, "data:")
	meta, data, found := strings.Cut(rest, ",")
	mediaType, isBase64 := cutSuffixFold(meta, ";base64")
	if !isData || !found || !isBase64 {
		return "", "", false
	}
	return mediaType, data, true
}

// Inline checks media sent as its type and its base64 data in two members (a messages
// source, a Gemini inlineData, a file's bare file_data); typeParam "" when the format gives
// no type.
func Inline(typeParam, mediaType, dataParam, data string, m Media) *ir.Error {
	if typeParam != "" && !m.allows(mediaType) {
		return Bad(typeParam, "%s must be %s for %s; got %s", typeParam, m.allowed(), m.Noun, QuoteString(mediaType))
	}
	if !Base64(data) {
		return Bad(dataParam, "%s must be valid base64; got %s", dataParam, QuoteString(data))
	}
	return nil
}

func (m Media) allows(mediaType string) bool {
	t := strings.ToLower(mediaType)
	top, sub, ok := strings.Cut(t, "/")
	if !ok || top == "" || sub == "" || strings.ContainsAny(t, " ;,") {
		return false
	}
	if m.Types == nil {
		return true
	}
	for _, a := range m.Types {
		if t == a || strings.HasSuffix(a, "/") && strings.HasPrefix(t, a) {
			return true
		}
	}
	return false
}

// allowed says which types m takes, for messages.
func (m Media) allowed() string {
	switch {
	case m.Types == nil:
		return "any type/subtype"
	case len(m.Types) == 1 && strings.HasSuffix(m.Types[0], "/"):
		return m.Types[0] + "…"
	}
	return "one of " + strings.Join(m.Types, ", ")
}

// Base64 reports whether s is standard base64, padded or not, as a provider decodes it
// (line breaks are skipped, as encoding/base64 skips them); the empty string is not. It
// reads s in place: an image of megabytes is checked without a copy.
func Base64(s string) bool {
	n, pad := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\r' || c == '\n':
			continue
		case c == '=':
			pad++
			continue
		case pad > 0: // a character after the padding
			return false
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/':
			n++
		default:
			return false
		}
	}
	switch {
	case n == 0 || n%4 == 1 || pad > 2:
		return false
	case pad > 0:
		return (n+pad)%4 == 0
	}
	return true
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

func cutSuffixFold(s, suffix string) (string, bool) {
	if len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix) {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}

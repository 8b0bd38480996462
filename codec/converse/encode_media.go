package converse

import (
	"path"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
)

// Converse takes media as bytes or as an S3 location, never as a URL it would fetch: an
// http(s) image or file is reported and left out.

// imageFormats are ImageBlock formats by media type.
var imageFormats = map[string]string{
	"image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif", "image/webp": "webp",
}

// documentFormats are DocumentBlock formats by media type.
var documentFormats = map[string]string{
	"application/pdf": "pdf", "text/plain": "txt", "text/csv": "csv", "text/html": "html",
	"text/markdown": "md", "text/md": "md", "application/msword": "doc",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
	"application/vnd.ms-excel": "xls",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
}

// videoFormats are VideoBlock formats by media type.
var videoFormats = map[string]string{
	"video/mp4": "mp4", "video/webm": "webm", "video/quicktime": "mov", "video/mov": "mov",
	"video/x-matroska": "mkv", "video/x-flv": "flv", "video/mpeg": "mpeg", "video/mpg": "mpg",
	"video/x-ms-wmv": "wmv", "video/wmv": "wmv", "video/3gpp": "three_gp",
}

// extFormats are the formats of an S3 object's extension, when its media type is not given.
var extFormats = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".pdf": "application/pdf", ".txt": "text/plain", ".csv": "text/csv", ".html": "text/html", ".md": "text/markdown",
	".doc": "application/msword", ".xls": "application/vnd.ms-excel",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".mp4":  "video/mp4", ".webm": "video/webm", ".mov": "video/quicktime", ".mkv": "video/x-matroska",
}

// source is the bytes of inline data, or the S3 location of an s3:// URL (ok false for any
// other URL, which Converse cannot take). A data: URL left whole is split here.
func source(mediaType, data, uri string) (mediaSource, string, bool) {
	if data == "" {
		if mt, d, ok := check.DataURL(uri); ok {
			data = d
			if mediaType == "" {
				mediaType = mt
			}
		}
	}
	switch {
	case data != "":
		return mediaSource{Bytes: data}, mediaType, true
	case strings.HasPrefix(uri, "s3://"):
		if mediaType == "" {
			p := uri
			if i := strings.IndexAny(p, "?#"); i >= 0 {
				p = p[:i]
			}
			mediaType = extFormats[strings.ToLower(path.Ext(p))]
		}
		return mediaSource{S3Location: &s3Location{URI: uri}}, mediaType, true
	}
	return mediaSource{}, mediaType, false
}

func (e *encoder) image(img *ir.Image) (block, bool) {
	if d := img.Detail; d != "" && d != "auto" {
		e.loss.Drop("messages[].image.detail")
	}
	src, mt, ok := source(img.MediaType, img.Data, img.URL)
	if !ok {
		e.loss.Drop("messages[].image.url")
		return block{}, false
	}
	if mt == "" && src.Bytes != "" {
		mt = sniffImage(src.Bytes)
	}
	f, ok := imageFormats[strings.ToLower(mt)]
	if !ok {
		e.loss.Drop("messages[].image")
		return block{}, false
	}
	return block{Image: &media{Format: f, Source: src}}, true
}

// file renders a document (PDF, text, office files) or a video; audio and other kinds have no
// Converse block.
func (e *encoder) file(f *ir.File) (block, bool) {
	src, mt, ok := source(f.MediaType, f.Data, f.URL)
	if !ok {
		e.loss.Drop("messages[].file.url")
		return block{}, false
	}
	mt = strings.ToLower(mt)
	if mt == "" && strings.HasPrefix(src.Bytes, "JVBERi0") {
		mt = "application/pdf"
	}
	if df, ok := documentFormats[mt]; ok {
		return block{Document: &media{Format: df, Name: e.documentName(f.Name), Source: src}}, true
	}
	if vf, ok := videoFormats[mt]; ok {
		if f.Name != "" {
			e.loss.Drop("messages[].file.filename")
		}
		return block{Video: &media{Format: vf, Source: src}}, true
	}
	e.loss.Drop("messages[].file")
	return block{}, false
}

// documentName is a DocumentBlock name: required, unique in the request, and made only of
// letters, digits, single spaces, hyphens, parentheses and square brackets. A file name loses
// its extension and other characters (as spaces); a file without one is "document".
func (e *encoder) documentName(name string) string {
	name = strings.TrimSuffix(name, path.Ext(name))
	var b strings.Builder
	space := true // no leading space, no two in a row
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '-' || r == '(' || r == ')' || r == '[' || r == ']'
		switch {
		case ok:
			b.WriteRune(r)
			space = false
		case !space:
			b.WriteByte(' ')
			space = true
		}
	}
	base := strings.TrimSpace(b.String())
	if base == "" {
		base = "document"
	}
	if e.docs == nil {
		e.docs = map[string]bool{}
	}
	out := base
	for n := 2; e.docs[out]; n++ {
		out = base + " " + strconv.Itoa(n)
	}
	e.docs[out] = true
	return out
}

// sniffImage recognizes an image format by the base64 of its magic bytes ("" if none).
func sniffImage(data string) string {
	for prefix, mt := range map[string]string{
		"iVBORw0KGgo": "image/png", "/9j/": "image/jpeg", "R0lGOD": "image/gif", "UklGR": "image/webp",
	} {
		if strings.HasPrefix(data, prefix) {
			return mt
		}
	}
	return ""
}

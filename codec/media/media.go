// Package media tells what a file is from its first bytes. The gateway stores and serves a
// generated file as the type its bytes are, never the type an upstream claimed, and only the
// types here: PNG, JPEG, WebP and GIF images, MP4 and WebM videos.
package media

import (
	"bytes"
	"math/bits"
	"slices"
)

// The media types the gateway stores.
const (
	PNG  = "image/png"
	JPEG = "image/jpeg"
	WebP = "image/webp"
	GIF  = "image/gif"
	MP4  = "video/mp4"
	WebM = "video/webm"
)

var (
	// Images are the types an image is stored as.
	Images = []string{PNG, JPEG, WebP, GIF}
	// Videos are the types a video is stored as. QuickTime (a ftyp brand of "qt  ") is not
	// one: MP4 and WebM are what browsers play.
	Videos = []string{MP4, WebM}
)

// SniffLen is how many leading bytes Sniff needs to decide (a WebM's DocType sits within its
// EBML header).
const SniffLen = 64

// Sniff is the type of a file from its first bytes (at least SniffLen of them when the file is
// that long): one of Images or Videos, or "" when they are none of those.
func Sniff(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return PNG
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return JPEG
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return WebP
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return GIF
	case len(head) >= 12 && string(head[4:8]) == "ftyp" && slices.Contains(mp4Brands, string(head[8:12])):
		return MP4
	case bytes.HasPrefix(head, []byte{0x1A, 0x45, 0xDF, 0xA3}) && ebmlDocType(head[4:min(len(head), SniffLen)]) == "webm":
		return WebM
	}
	return ""
}

// mp4Brands are the major brands of an ISO base media file that is an MP4 video. Other ftyp
// files are not: QuickTime ("qt  "), HEIF and AVIF images ("heic", "mif1", "avif"), audio.
var mp4Brands = []string{"isom", "iso2", "iso3", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "av01", "dash", "mmp4", "M4V ", "MSNV"}

// ebmlDocType reads the DocType element (id 0x4282) of an EBML header: "webm", "matroska", or
// "" when there is none in h.
func ebmlDocType(h []byte) string {
	i := bytes.Index(h, []byte{0x42, 0x82})
	if i < 0 || i+3 > len(h) {
		return ""
	}
	first := h[i+2]
	n := bits.LeadingZeros8(first) + 1 // the size's length, a variable-length integer
	if n > 8 || i+2+n > len(h) {
		return ""
	}
	size := uint64(first & (0xFF >> n))
	for _, b := range h[i+3 : i+2+n] {
		size = size<<8 | uint64(b)
	}
	start := i + 2 + n
	if size > 16 || start+int(size) > len(h) {
		return ""
	}
	return string(h[start : start+int(size)])
}

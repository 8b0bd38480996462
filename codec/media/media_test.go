package media

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSniffTellsTheTypeFromTheBytes: each stored type from a real file's first bytes (the
// images are CPython's test images, testdata/media/README), and what the gateway refuses to store:
// other images, QuickTime and Matroska, ISO files that are not MP4 video, HTML, a truncated
// header, nothing.
func TestSniffTellsTheTypeFromTheBytes(t *testing.T) {
	file := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "media", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// The EBML header libwebm (ffmpeg, Chrome's MediaRecorder) writes, then the segment id.
	webm := []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\xf3\x81\x08\x42\x82\x84webm\x42\x87\x81\x04\x42\x85\x81\x02\x18\x53\x80\x67")
	cases := []struct {
		name string
		head []byte
		want string
	}{
		{"PNG", file("python.png"), PNG},
		{"JPEG", file("python.jpg"), JPEG},
		{"WebP", file("python.webp"), WebP},
		{"GIF", file("python.gif"), GIF},
		{"MP4 as ffmpeg writes it", []byte("\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41\x00\x00\x00\x08free"), MP4},
		{"MP4 of brand mp42", []byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), MP4},
		{"WebM", webm, WebM},
		{"WebM, the DocType's size in two bytes", []byte("\x1a\x45\xdf\xa3\xa0\x42\x86\x81\x01\x42\x82\x40\x04webm\x42\x87\x81\x04"), WebM},
		{"BMP", file("python.bmp"), ""},
		{"TIFF", file("python.tiff"), ""},
		{"QuickTime", []byte("\x00\x00\x00\x14ftypqt  \x00\x00\x02\x00qt  \x00\x00\x00\x08wide"), ""},
		{"AVIF", []byte("\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf"), ""},
		{"HEIC", []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"), ""},
		{"Matroska", []byte("\x1a\x45\xdf\xa3\xa3\x42\x86\x81\x01\x42\x82\x88matroska\x42\x87\x81\x04"), ""},
		{"EBML without a DocType", []byte("\x1a\x45\xdf\xa3\x84\x42\x86\x81\x01"), ""},
		{"EBML, the DocType cut short", []byte("\x1a\x45\xdf\xa3\x9f\x42\x82\x84we"), ""},
		{"HTML", []byte("<!doctype html><script>alert(1)</script>"), ""},
		{"SVG", []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), ""},
		{"a PNG signature cut short", []byte("\x89PNG\r\n"), ""},
		{"RIFF that is WAVE", []byte("RIFF\x24\x00\x00\x00WAVEfmt "), ""},
		{"nothing", nil, ""},
	}
	for _, c := range cases {
		if got := Sniff(c.head); got != c.want {
			t.Errorf("%s: Sniff = %q, want %q", c.name, got, c.want)
		}
	}
}

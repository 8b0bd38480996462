package simulator

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Generated media shared by the image and video endpoints: deterministic pictures, the bounded
// in-memory stores that keep them, and the file URLs that serve them. The gateway relays media;
// it never looks at the pixels, so pictures are small: the requested size scaled down by an
// integer factor, but real files that any decoder accepts.

const (
	// maxImageSide is the longest side of a generated picture in pixels; larger requested
	// sizes are scaled down by an integer factor (1024x1024 → 256x256, 1536x1024 → 256x170).
	maxImageSide = 256
	// maxMediaSide bounds each side of a requested image or video size ("WxH").
	maxMediaSide = 4096
	// maxStoredFiles is how many generated files the simulator keeps for their URLs; the
	// oldest is forgotten (its URL answers 404) when a newer one would exceed it.
	maxStoredFiles = 256
	// maxStoredVideos is how many video jobs the simulator keeps; the oldest is forgotten.
	maxStoredVideos = 1024
)

// mediaSeed is the seed of a picture: an FNV-1a hash of the prompt and the picture's index
// (the i-th of n images), so equal prompts get equal pictures.
func mediaSeed(prompt string, index int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(prompt))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write(strconv.AppendInt(nil, int64(index), 10))
	return h.Sum64()
}

// splitmix64 is one step of the splitmix64 generator: it spreads one seed over several
// well-mixed values.
func splitmix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// parseSize reads a "WxH" size with both sides within 1..maxMediaSide.
func parseSize(s string) (w, h int, ok bool) {
	ws, hs, found := strings.Cut(s, "x")
	if !found {
		return 0, 0, false
	}
	w, errW := strconv.Atoi(ws)
	h, errH := strconv.Atoi(hs)
	if errW != nil || errH != nil || w < 1 || h < 1 || w > maxMediaSide || h > maxMediaSide {
		return 0, 0, false
	}
	return w, h, true
}

// scaleDown divides w and h by the smallest integer factor that brings the longer side to at
// most limit (a side never drops below 1).
func scaleDown(w, h, limit int) (int, int) {
	f := (max(w, h) + limit - 1) / limit
	return max(w/f, 1), max(h/f, 1)
}

// picture draws a deterministic w×h picture from seed: a diagonal gradient between two colours
// drawn from the seed, darkened on alternate tiles of a checkerboard (8 tiles along the longer
// side). shift moves the pattern right by that many pixels (video frames use it to move).
func picture(seed uint64, w, h, shift int) *image.RGBA {
	state := seed
	c0, c1 := splitmix64(&state), splitmix64(&state)
	tile := max(max(w, h)/8, 1)
	span := max(w+h-2, 1)
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			t := (x + y) * 255 / span
			px := [3]uint8{}
			for c := range px {
				a, b := int(uint8(c0>>(8*c))), int(uint8(c1>>(8*c)))
				px[c] = uint8(a + (b-a)*t/255)
			}
			if ((x+shift)/tile+y/tile)%2 == 1 {
				for c := range px {
					px[c] = px[c] / 4 * 3
				}
			}
			img.SetRGBA(x, y, color.RGBA{px[0], px[1], px[2], 0xff})
		}
	}
	return img
}

// pictureFor returns the PNG picture of a prompt at the requested size (scaled down to
// maxImageSide).
func pictureFor(prompt string, index, w, h int) []byte {
	sw, sh := scaleDown(w, h, maxImageSide)
	var buf bytes.Buffer
	if err := png.Encode(&buf, picture(mediaSeed(prompt, index), sw, sh, 0)); err != nil {
		panic("simulator: encoding a PNG into memory failed: " + err.Error()) // cannot happen
	}
	return buf.Bytes()
}

// boundedStore keeps the most recent limit items by id, forgetting the oldest.
type boundedStore[V any] struct {
	mu    sync.Mutex
	limit int
	items map[string]V
	order []string // ids, oldest first
}

func newBoundedStore[V any](limit int) *boundedStore[V] {
	return &boundedStore[V]{limit: limit, items: make(map[string]V)}
}

func (s *boundedStore[V]) put(id string, v V) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.items[id]; !ok {
		s.order = append(s.order, id)
	}
	s.items[id] = v
	for len(s.order) > s.limit {
		delete(s.items, s.order[0])
		s.order = s.order[1:]
	}
}

func (s *boundedStore[V]) get(id string) (V, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.items[id]
	return v, ok
}

// values returns the items still kept, oldest first.
func (s *boundedStore[V]) values() []V {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]V, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.items[id])
	}
	return out
}

// storedFile is a generated file served at its URL.
type storedFile struct {
	route       string // only this route's URL serves it
	contentType string
	data        []byte
}

// fileExt is the extension of the file URLs for each content type.
var fileExt = map[string]string{"image/png": ".png"}

// storeFile keeps data for GET /r/{route}/files/{id}{ext} and returns that URL, built from the
// address the request reached, so it points back at this simulator.
func (s *Server) storeFile(ex *exchange, contentType string, data []byte) string {
	id := s.newID("file_")
	s.files.put(id, storedFile{route: ex.route, contentType: contentType, data: data})
	scheme := "http"
	if ex.r.TLS != nil {
		scheme = "https"
	}
	prefix := ""
	if ex.route != "" {
		prefix = "/r/" + url.PathEscape(ex.route)
	}
	return fmt.Sprintf("%s://%s%s/files/%s%s", scheme, ex.r.Host, prefix, id, fileExt[contentType])
}

// serveFile answers GET /files/{name}: a generated file, like a provider's pre-signed download
// URL: no credential needed, not an API call (not counted in Calls, no Behavior applies).
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	dot := strings.LastIndexByte(name, '.')
	f, ok := storedFile{}, false
	if dot > 0 {
		f, ok = s.files.get(name[:dot])
	}
	if !ok || f.route != r.PathValue("route") || fileExt[f.contentType] != name[dot:] {
		writeOpenAIError(w, apiError{Status: http.StatusNotFound, Type: "invalid_request_error",
			Message: fmt.Sprintf("No file %q on this route: unknown, or forgotten after %d newer files.", name, maxStoredFiles)})
		return
	}
	serveBytes(w, r, f.contentType, f.data)
}

// serveBytes writes a binary body, answering Range requests as a file server does.
func serveBytes(w http.ResponseWriter, r *http.Request, contentType string, data []byte) {
	w.Header().Set("Content-Type", contentType)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

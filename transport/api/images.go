package api

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/images"
	"github.com/modelgate/modelgate/codec/media"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/fetch"
	"github.com/modelgate/modelgate/transport/upstream"
)

// Assets keeps generated files and serves them back.
type Assets interface {
	// Put stores a file and returns its public path (/assets/gen/<id>.<ext>).
	Put(kind, account, contentType string, r io.Reader) (path string, err error)
	// Open returns a stored file by its public name (<id>.<ext>).
	Open(kind, file string) (contentType string, modified time.Time, content io.ReadSeekCloser, err error)
}

var errNoAssetStore = errors.New("no asset store")

// maxImageBytes bounds an image read from an upstream.
const maxImageBytes = 32 << 20

// downloads fetches what an upstream's answer links to (transport/fetch: the system resolver,
// its time bound).
var downloads = &fetch.Fetcher{}

func (s *Server) imagesGenerations(w http.ResponseWriter, r *http.Request) {
	x, body, ok := s.open(w, r, "images", "images", nil)
	defer s.done(x)
	if !ok {
		return
	}
	req, err := images.DecodeRequest(body)
	if err != nil {
		s.fail(x, irInvalid(err))
		return
	}
	if s.Assets == nil {
		s.fail(x, &apiError{Status: http.StatusNotImplemented, Type: "server_error", Code: "no_asset_store", Message: "this gateway has no asset store configured for generated images"})
		return
	}
	// The model's sizes, qualities and styles are checked before admission: a refused request
	// never reserves one of the day's images.
	fits := func(m *catalog.Model) *apiError {
		if e := req.For(m.Images); e != nil {
			return irInvalid(e)
		}
		return nil
	}
	m, ok := s.admitModel(r, x, req.Model, catalog.KindImage, fits, func(m *catalog.Model) money.Amount {
		return m.Pricing.Prompt.Times(int64(len(req.Prompt)/3+1)) + m.Pricing.Completion.Times(defaultMaxTokens)
	})
	if !ok {
		return
	}
	daily, err := s.Quota.ReserveImages(r.Context(), x.adm.account, x.adm.plan, 1)
	if err != nil || !daily.Admitted {
		s.fail(x, dailyRefusal(daily, err, "image_daily_limit_exceeded", "the account's daily image limit is reached"))
		return
	}
	// The reservation ends with the settle: committed when an image was made, else released.
	x.media = &daily.Reservation
	build := func(rt *catalog.Route) (upstream.Request, bool) {
		ur := upstream.Request{Route: rt, Timeouts: rt.Effective(x.catalog.Server), Header: forwardHeaders(x)}
		switch rt.Format {
		case catalog.FormatChat:
			ur.Path, ur.Body = "/images/generations", images.ChatBody(req, rt.UpstreamModel)
		case catalog.FormatGemini:
			ur.Path, ur.Body = upstreamFormats[catalog.FormatGemini].Path(rt.UpstreamModel, false), images.GeminiBody(req)
		default:
			return ur, false
		}
		return ur, true
	}
	for {
		a, ue, e := s.dial(x, m, build)
		switch {
		case e != nil:
			s.fail(x, e)
			return
		case ue != nil:
			s.passUpstreamError(x, chatClient, ue) // images clients read the chat error shape
			return
		}
		x.route, x.entry.UpstreamFormat = a.route.ID, a.route.Format
		img, ok := s.fetchImage(x, a)
		switch {
		case !ok && x.clientGone():
			return
		case !ok:
			continue // a broken answer: the next route may do better
		}
		path, err := s.Assets.Put("gen", x.adm.account, img.MediaType, bytes.NewReader(img.Data))
		if persistence.IsDiskFull(err) {
			s.fail(x, errCannotRecord()) // the store said so once; no line per request
			return
		}
		if err != nil {
			s.Logger.Error("image could not be stored", "request_id", x.id, "err", err)
			s.fail(x, &apiError{Status: http.StatusInternalServerError, Type: "server_error", Code: "asset_store_failed", Message: "the generated image could not be stored; nothing was charged"})
			return
		}
		x.produced = 1
		x.usage = codec.Usage{Input: img.InputTokens, Output: img.OutputTokens}
		item := images.ResultItem{RevisedPrompt: img.RevisedPrompt}
		if req.ResponseFormat == "b64_json" {
			item.B64JSON = base64.StdEncoding.EncodeToString(img.Data)
		} else {
			item.URL = publicBase(r, x.catalog) + path
		}
		s.deliverJSON(x, http.StatusOK, images.Result{Created: time.Now().Unix(), Model: req.Model, Data: []images.ResultItem{item},
			Usage: images.ResultUsage{InputTokens: img.InputTokens, OutputTokens: img.OutputTokens, TotalTokens: img.InputTokens + img.OutputTokens}})
		return
	}
}

// fetchImage reads an upstream's image answer, downloading the file when it sent a link. An
// answer the gateway cannot use (no image, a link it refuses or cannot download) is the
// route's failure: the next route is tried, and 502 when none is left.
func (s *Server) fetchImage(x *exchange, a *attempt) (*images.Image, bool) {
	body, ok := s.readWhole(x, a)
	if !ok {
		return nil, false
	}
	decode := images.DecodeChat
	if a.route.Format == catalog.FormatGemini {
		decode = images.DecodeGemini
	}
	img, err := decode(body)
	if err == nil && img.Data == nil {
		var f fetch.File
		f, err = downloads.Get(x.clientCtx, img.URL, fetch.Want{MaxBytes: maxImageBytes, Types: media.Images, Allow: x.catalog.Server.FetchAllow})
		img.Data, img.MediaType = f.Data, f.Type
	}
	switch {
	case err != nil && x.clientGone():
		s.clientLeft(x, a)
		return nil, false
	case err != nil:
		x.failed = true
		s.finish(a, routehealth.Failed, a.resp.Status)
		s.Logger.Warn("upstream image answer unusable; failing over", "request_id", x.id, "route", a.route.ID, "err", err)
		return nil, false
	}
	s.finish(a, routehealth.Succeeded, a.resp.Status)
	return img, true
}

// dailyRefusal is the 429 of a daily media limit, with Retry-After until 00:00 UTC.
func dailyRefusal(d quota.MediaDecision, err error, code, msg string) *apiError {
	if persistence.IsDiskFull(err) {
		return errCannotRecord()
	}
	if err != nil {
		return &apiError{Status: http.StatusServiceUnavailable, Type: "overloaded_error", Code: codeQuotaUnavailable, RetryAfter: 1, Message: "the account's daily limits could not be checked; retry shortly"}
	}
	secs := max(ceilSeconds(d.RetryAfter), 1)
	return &apiError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: code, RetryAfter: secs,
		Message: msg + " (" + strconv.FormatInt(d.Daily.Limit, 10) + " a day); it resets at " + d.ResetsAt.UTC().Format(time.RFC3339),
		Extra:   map[string]any{"retry_after_seconds": secs, "resets_at": d.ResetsAt.UTC().Format(time.RFC3339)}}
}

// serveAsset serves a stored file by its unguessable id, with ranges (video players seek).
func (s *Server) serveAsset(w http.ResponseWriter, r *http.Request) {
	kind, file := muxVar(r, "kind"), muxVar(r, "file")
	safeAsset(w.Header())
	var ct string
	var mod time.Time
	var content io.ReadSeekCloser
	err := errNoAssetStore
	if s.Assets != nil {
		ct, mod, content, err = s.Assets.Open(kind, file)
	}
	if err != nil {
		writeError(w, s.begin(w, r, "assets"), &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "not_found",
			Message: "no such asset: links to generated files are valid as given, with their extension"})
		return
	}
	defer content.Close()
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	http.ServeContent(w, r, file, mod, content)
}

// safeAsset makes a served file inert whatever its bytes are (a file stored before its type
// was sniffed, a type no longer stored): the browser takes the type as given and never runs
// it as a page (no script, no form, no plugin, no request of its own), while a page of any
// origin may still show it (API clients in browsers embed generated images and videos).
func safeAsset(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
}

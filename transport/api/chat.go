package api

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/sse"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/upstream"
)

// maxUpstreamBody bounds a whole (non-streamed) upstream answer held in memory.
const maxUpstreamBody = 64 << 20

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	c := s.begin(w, "chat")
	rec := s.newRecord(c, codec.FormatChat)
	defer s.done(rec)
	if e := s.authenticate(r, c); e != nil {
		rec.fail(w, e)
		return
	}
	body, e := s.readBody(w, r, c)
	if e != nil {
		rec.fail(w, e)
		return
	}
	req, err := chat.ParseRequest(body)
	if err != nil {
		rec.fail(w, invalidFrom(err))
		return
	}
	rec.model = req.Model
	m, e := s.resolveModel(c, req.Model, catalog.KindChat)
	if e != nil {
		rec.fail(w, e)
		return
	}
	rec.entry.Model, rec.entry.Stream = m.ID, req.Stream
	rec.prices = pricesOf(m)
	setDeprecation(w, m)
	build := func(rt *catalog.Route) (upstream.Request, bool) {
		if rt.Format != catalog.FormatChat {
			return upstream.Request{}, false
		}
		b, err := req.UpstreamBody(rt.UpstreamModel)
		if err != nil {
			return upstream.Request{}, false
		}
		return upstream.Request{Route: rt, Timeouts: rt.Effective(c.catalog.Server), Path: "/chat/completions", Body: b, Header: forwardHeaders(c)}, true
	}
	for {
		a, ue, e := s.dial(r.Context(), c, m, build, &rec.tried)
		switch {
		case e != nil:
			rec.fail(w, e)
			return
		case ue != nil:
			rec.passError(w, ue)
			return
		}
		rec.route, rec.entry.UpstreamFormat = a.route.ID, a.route.Format
		var sent bool
		if req.Stream {
			sent = s.streamChat(w, rec, a, req)
		} else {
			sent = s.relayWhole(w, rec, a, req.Model)
		}
		if sent {
			return
		}
		// The attempt broke before the client saw a byte: try the next route.
	}
}

// relayWhole relays a whole answer (chat or embeddings). It returns false, having written nothing, when the
// upstream broke before its answer was complete.
func (s *Server) relayWhole(w http.ResponseWriter, rec *record, a *attempt, clientModel string) bool {
	body, err := io.ReadAll(io.LimitReader(a.resp.Body, maxUpstreamBody))
	a.resp.Body.Close()
	if err != nil {
		s.finish(a, routehealth.Failed, 0)
		return false
	}
	s.finish(a, routehealth.Succeeded, a.resp.Status)
	if u, ok := chat.ResponseUsage(body); ok {
		rec.usage = u
	}
	body = chat.RewriteModel(body, a.route.UpstreamModel, clientModel)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	rec.firstByte()
	w.Write(body)
	rec.status = http.StatusOK
	return true
}

// streamChat relays chunks as they arrive. Headers wait for the first upstream event, so a
// route that fails before it answers is failed over invisibly. Once bytes were sent, a break
// ends the stream with an error event, never a silent truncation.
func (s *Server) streamChat(w http.ResponseWriter, rec *record, a *attempt, req *chat.Request) bool {
	defer a.resp.Body.Close()
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	rd := sse.NewReader(a.resp.Body)
	out := sse.NewWriter(w, flush)
	started := false
	for {
		ev, err := rd.Next()
		if err != nil {
			if !started {
				s.finish(a, routehealth.Failed, 0)
				return false
			}
			s.finish(a, routehealth.Failed, http.StatusOK)
			rec.streamBroke(out, err)
			return true
		}
		if !started {
			started = true
			h := w.Header()
			h.Set("Content-Type", "text/event-stream")
			h.Set("Cache-Control", "no-cache")
			h.Set("X-Accel-Buffering", "no")
			w.WriteHeader(http.StatusOK)
			rec.status = http.StatusOK
			rec.firstByte()
		}
		data := ev.Data
		if chat.IsDone(data) {
			s.finish(a, routehealth.Succeeded, http.StatusOK)
			out.Write("", data)
			return true
		}
		if u, usageOnly, ok := chat.ChunkUsage(data); ok {
			rec.usage = u
			if usageOnly && !req.IncludeUsage {
				continue // asked for by the gateway for billing, not by the client
			}
		}
		if err := out.Write("", chat.RewriteModel(data, a.route.UpstreamModel, req.Model)); err != nil {
			s.finish(a, routehealth.Succeeded, http.StatusOK) // the client left
			rec.status = 499
			return true
		}
	}
}

func invalidFrom(err error) *apiError {
	var inv *chat.InvalidError
	if errors.As(err, &inv) {
		return errInvalid(inv.Param, inv.Message)
	}
	return errInvalid("", err.Error())
}

func pricesOf(m *catalog.Model) codec.Prices {
	return codec.Prices{Input: m.Pricing.Prompt, CacheRead: m.Pricing.CacheRead, CacheWrite: m.Pricing.CacheWrite, Output: m.Pricing.Completion}
}

// forwardHeaders are the headers every upstream attempt carries: the request id, so the
// provider's logs and ours can be matched.
func forwardHeaders(c *call) http.Header {
	return http.Header{"X-Request-Id": {c.id}}
}

// setDeprecation announces a model's retirement (RFC 9745 Deprecation, RFC 8594 Sunset).
func setDeprecation(w http.ResponseWriter, m *catalog.Model) {
	if m.DeprecatedAt == 0 {
		return
	}
	w.Header().Set("Deprecation", "@"+itoa(m.DeprecatedAt))
	w.Header().Set("Sunset", time.Unix(m.DeprecatedAt, 0).UTC().Format(http.TimeFormat))
	if m.Replacement != "" {
		w.Header().Set("Link", `</v1/models/`+m.Replacement+`>; rel="successor-version"`)
	}
}

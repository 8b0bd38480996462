package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/modelgate/modelgate/actors/video"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/codec/videos"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// Videos runs video tasks.
type Videos interface {
	Create(ctx context.Context, r video.CreateRequest) (video.Task, error)
	Get(ctx context.Context, account, id string) (video.Task, error)
}

// createVideo validates, counts the call against the plan, reserves the day's video seconds
// and hands the job to a task actor. The answer is the task, queued.
func (s *Server) createVideo(w http.ResponseWriter, r *http.Request) {
	c := s.begin(w, "videos")
	rec, body, ok := s.open(w, r, c, "videos")
	defer s.done(rec)
	if !ok {
		return
	}
	req, err := videos.DecodeCreate(body)
	if err != nil {
		rec.fail(w, irInvalid(err))
		return
	}
	// The create call counts like any call; its seconds are charged on completion, at
	// pricing.completion per output second (a video model's price).
	m, ok := s.admitModel(w, r, c, rec, req.Model, catalog.KindVideo, func(m *catalog.Model) money.Amount {
		return m.Pricing.Completion.Times(int64(req.Seconds))
	})
	if !ok {
		return
	}
	route := s.Board.Pick(m.Routes, c.key.ZDR, nil)
	if route == nil || route.Format != catalog.FormatChat {
		rec.fail(w, s.exhausted(c, 0, true, s.Board.Wait(m.Routes, c.key.ZDR, nil))) // refunded: nothing reached an upstream
		return
	}
	price := m.Pricing.Completion
	daily, err := s.Quota.ReserveVideoSeconds(r.Context(), rec.adm.account, rec.adm.plan, int64(req.Seconds))
	if err != nil || !daily.Admitted {
		rec.fail(w, dailyRefusal(daily, err, "video_daily_limit_exceeded", "the account's daily video seconds are used up"))
		return
	}
	task, err := s.Videos.Create(r.Context(), video.CreateRequest{
		Account: rec.adm.account, KeyID: c.key.ID, Model: m, Route: route, Seconds: req.Seconds, Size: videos.Size720P,
		Body: videos.UpstreamBody(req, route.UpstreamModel), MediaReservation: daily.Reservation, Price: price, Plan: rec.adm.plan,
	})
	if err != nil {
		s.Quota.ReleaseVideoSeconds(context.Background(), daily.Reservation)
		s.Logger.Error("video task not created", "request_id", c.id, "err", err)
		rec.fail(w, &apiError{Status: http.StatusServiceUnavailable, Type: "overloaded_error", Code: "video_unavailable", RetryAfter: 1,
			Message: "the video task could not be created; retry shortly, nothing was charged"})
		return
	}
	rec.route, rec.entry.UpstreamFormat = route.ID, route.Format
	rec.firstByte()
	writeJSON(w, http.StatusOK, task)
	rec.status = http.StatusOK
}

// getVideo answers a poll from the task actor's state, never from the upstream.
func (s *Server) getVideo(w http.ResponseWriter, r *http.Request) {
	c := s.begin(w, "videos")
	if e := s.authenticate(r, c); e != nil {
		render(w, c, e)
		return
	}
	name := r.URL.Query().Get("model")
	if name == "" {
		render(w, c, errInvalid("model", "the model query parameter is required: GET /v1/videos/{video_id}?model=<model id>"))
		return
	}
	m, e := s.resolveModel(c, name, catalog.KindVideo)
	if e != nil {
		render(w, c, e)
		return
	}
	task, err := s.Videos.Get(r.Context(), c.key.AccountID, muxVar(r, "video_id"))
	switch {
	case errors.Is(err, video.ErrNotFound):
		render(w, c, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "video_not_found", Param: "video_id",
			Message: "no video task " + muxVar(r, "video_id") + " for this account"})
		return
	case err != nil:
		render(w, c, &apiError{Status: http.StatusServiceUnavailable, Type: "overloaded_error", Code: "video_unavailable", RetryAfter: 1, Message: "the task could not be read; retry shortly"})
		return
	case task.Model != m.ID:
		render(w, c, errInvalid("model", "video "+task.ID+" was made with model "+task.Model+", not "+m.ID))
		return
	}
	if task.URL != "" {
		task.URL = publicBase(r, c.catalog) + task.URL
	}
	c.answer(w, task)
}

package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/actors/video"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/codec/videos"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/upstream"
)

// Videos runs video tasks (*video.Service): Create, then the handler creates the upstream
// job, then Start — or Abandon when no route would take it.
type Videos interface {
	Create(ctx context.Context, r video.CreateRequest) (video.Task, error)
	Start(ctx context.Context, id string, route *catalog.Route, job videos.Job, attempts int) (video.Task, error)
	Abandon(ctx context.Context, id, code, msg string) error
	Withdraw(ctx context.Context, id, code, msg string) error
	Get(ctx context.Context, account, id string) (video.Task, error)
}

// createVideo admits the call (it counts like any call), reserves the day's video seconds
// and, beyond the plan, the video's price from the credits (402 up front when they cannot
// hold it), then creates the upstream job while the client waits, failing over between
// routes. The answer is the task — or, when no route takes the job, the error (502, or 529
// when every route is cooling down) with nothing counted and nothing left reserved: a
// refused video never becomes a task that fails later.
func (s *Server) createVideo(w http.ResponseWriter, r *http.Request) {
	x, body, ok := s.open(w, r, "videos", "videos", nil)
	defer s.done(x)
	if !ok {
		return
	}
	req, err := videos.DecodeCreate(body)
	if err != nil {
		s.fail(x, irInvalid(err))
		return
	}
	// Beyond the plan the price of the requested seconds must be available now; the output
	// seconds are charged on completion (pricing.completion is a video model's price per
	// output second).
	m, ok := s.admitModel(r, x, req.Model, catalog.KindVideo, nil, func(m *catalog.Model) money.Amount {
		return m.Pricing.Completion.Times(int64(req.Seconds))
	})
	if !ok {
		return
	}
	daily, err := s.Quota.ReserveVideoSeconds(r.Context(), x.adm.account, x.adm.plan, int64(req.Seconds))
	if err != nil || !daily.Admitted {
		s.fail(x, dailyRefusal(daily, err, "video_daily_limit_exceeded", "the account's daily video seconds are used up"))
		return
	}
	steps := context.WithoutCancel(r.Context()) // a task's bookkeeping ends even when its client leaves
	task, err := s.Videos.Create(steps, video.CreateRequest{
		Account: x.adm.account, KeyID: x.key.ID, Model: m, Seconds: req.Seconds, Size: videos.Size720P,
		MediaReservation: daily.Reservation, Price: m.Pricing.Completion, Plan: x.adm.plan, Paid: x.adm.paid, Call: x.adm.reservation,
	})
	var noCredit *video.CreditRefusal
	switch {
	case errors.As(err, &noCredit):
		s.fail(x, refusal(noCredit.Decision, s.now()))
		return
	case err != nil:
		s.fail(x, s.videoUnavailable(x, "video task not created", err))
		return
	}
	route, job, ue, e := s.createJob(x, m, req, task.ID)
	if ue != nil || e != nil {
		code, why := video.CodeNoRoute, "no route created the video job"
		if ue != nil {
			code, why = video.CodeRejected, fmt.Sprintf("the upstream refused the video request (HTTP %d)", ue.Status)
		}
		s.abandonVideo(steps, x, task.ID, code, why)
		if ue != nil {
			s.passUpstreamError(x, chatClient, ue) // videos clients read the chat error shape
		} else {
			s.fail(x, e)
		}
		return
	}
	x.route, x.entry.UpstreamFormat = route.ID, route.Format
	if task, err = s.Videos.Start(steps, task.ID, route, job, len(x.tried)); err != nil {
		s.abandonVideo(steps, x, task.ID, video.CodeNoRoute, "the video job could not be recorded")
		s.fail(x, s.videoUnavailable(x, "video task not started", err))
		return
	}
	if !s.deliverJSON(x, http.StatusOK, task) {
		// The client is told the creation failed (503): the task must not run on and bill.
		if err := s.Videos.Withdraw(steps, task.ID, video.CodeNoRoute, "the video call could not be recorded"); err != nil {
			s.Logger.Error("video task not withdrawn", "request_id", x.id, "task", task.ID, "err", err)
		}
	}
}

// createJob creates the upstream job on the first route that takes it: dial fails over,
// cooling routes that refuse or rate-limit, and answers 502 or 529 when none is left. A
// route's verdict on the request itself (a 4xx) is returned for the client as it is. The
// task id is the idempotency key, so an upstream that honours it makes one job however
// often the create is sent.
func (s *Server) createJob(x *exchange, m *catalog.Model, req *videos.Request, id string) (*catalog.Route, videos.Job, *upstream.Error, *apiError) {
	build := func(rt *catalog.Route) (upstream.Request, bool) {
		if rt.Format != catalog.FormatChat { // the job API is the OpenAI format's
			return upstream.Request{}, false
		}
		ur := upstream.CreateVideoRequest(rt, rt.Effective(x.catalog.Server), videos.UpstreamBody(req, rt.UpstreamModel), id)
		for k, v := range forwardHeaders(x) {
			ur.Header[k] = v
		}
		return ur, true
	}
	for {
		a, ue, e := s.dial(x, m, build)
		if ue != nil || e != nil {
			return nil, videos.Job{}, ue, e
		}
		job, err := upstream.ReadJob(a.resp)
		if err == nil {
			s.finish(a, routehealth.Succeeded, a.resp.Status)
			return a.route, job, nil, nil
		}
		x.failed = true // a broken answer is a real failure: 502 when no route is left
		s.finish(a, routehealth.Failed, a.resp.Status)
		s.Logger.Warn("upstream video job answer unusable; failing over", "request_id", x.id, "route", a.route.ID, "err", err)
	}
}

// abandonVideo ends a task created for a call that will not run it: failed with code and msg,
// its seconds and credits released.
func (s *Server) abandonVideo(ctx context.Context, x *exchange, task, code, msg string) {
	if err := s.Videos.Abandon(ctx, task, code, msg); err != nil {
		s.Logger.Error("video task not abandoned", "request_id", x.id, "task", task, "err", err)
	}
}

// videoUnavailable is the 503 of a task the gateway could not store or start.
func (s *Server) videoUnavailable(x *exchange, what string, err error) *apiError {
	s.Logger.Error(what, "request_id", x.id, "err", err)
	return &apiError{Status: http.StatusServiceUnavailable, Type: "overloaded_error", Code: "video_unavailable", RetryAfter: 1,
		Message: "the video task could not be created; retry shortly, nothing was charged"}
}

// getVideo answers a poll from the task actor's state, never from the upstream.
func (s *Server) getVideo(w http.ResponseWriter, r *http.Request) {
	x := s.begin(w, r, "videos")
	if _, ok := s.openUnrecorded(w, r, x, false); !ok {
		return
	}
	name := r.URL.Query().Get("model")
	if name == "" {
		s.render(x, errInvalid("model", "the model query parameter is required: GET /v1/videos/{video_id}?model=<model id>"))
		return
	}
	m, e := resolveModel(x, name, catalog.KindVideo)
	if e != nil {
		s.render(x, e)
		return
	}
	task, err := s.Videos.Get(r.Context(), x.key.AccountID, muxVar(r, "video_id"))
	switch {
	case errors.Is(err, video.ErrNotFound):
		s.render(x, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "video_not_found", Param: "video_id",
			Message: "no video task " + muxVar(r, "video_id") + " for this account"})
		return
	case err != nil:
		s.render(x, &apiError{Status: http.StatusServiceUnavailable, Type: "overloaded_error", Code: "video_unavailable", RetryAfter: 1, Message: "the task could not be read; retry shortly"})
		return
	case task.Model != m.ID:
		s.render(x, errInvalid("model", "video "+task.ID+" was made with model "+task.Model+", not "+m.ID))
		return
	}
	if task.URL != "" {
		task.URL = publicBase(r, x.catalog) + task.URL
	}
	s.answer(x, task)
}
